// report.html, overview: each suite's scores with their intervals against the papers' range,
// what went wrong, the small multiples by type, the interactive section's tables, evidence coverage.
(function (/** @type {any} the scripts' namespace (page.d.ts) */ ns) {
  "use strict";
  /** @param {import("./page").Page} page */
  function overview(page) {
    const { el } = ns.dom;
    const { intervalPlot } = ns.plots;
    const out = el("section", { id: "overview" });
    for (const suite of page.data.suites) {
      const part = el("div", { class: "suite", dataset: { suite: suite.name } });
      part.appendChild(el("h2", { text: suite.title }));
      part.appendChild(el("div", { class: "meta", text: suite.summary }));
      part.appendChild(el("div", { class: "meta", text: suite.data }));
      part.appendChild(el("div", { class: "meta", text: suite.receives }));
      if (suite.upper_bound) part.appendChild(el("div", { class: "warn", text: "upper bound: " + suite.upper_bound }));
      for (const note of suite.notes) part.appendChild(el("div", { class: "meta", text: "note: " + note }));
      for (const w of suite.warnings) part.appendChild(el("div", { class: "warn", text: "data warning: " + w }));
      const table = el("table", { class: "metrics" },
        el("tr", {}, ["metric", "score", "95% CI", "scored", "this run vs papers", "papers"].map((t, i) =>
          el("th", { class: i === 1 || i === 3 ? "num" : null, text: t }))));
      for (const s of suite.metrics) {
        const metric = page.metric(s.metric);
        const na = s.mean === null;
        table.appendChild(el("tr", { dataset: { metric: s.metric } },
          el("td", { text: metric.label, title: metric.source }),
          el("td", { class: "num" + (na ? " na" : ""), text: s.score }),
          el("td", { class: na ? "na" : null, text: s.interval }),
          el("td", { class: "num", text: s.scored }),
          el("td", {}, na ? "" : intervalPlot(metric, s, s.papers)),
          el("td", { class: "meta", text: s.papers ? s.papers.text : "" })));
      }
      part.appendChild(table);
      part.appendChild(el("div", { class: "meta", text: "dot and line: this run's score and 95% interval; band: the " +
        "published range of the same protocol (grey: not comparable with this run, say why on hover)" }));
      // Which published rows the "papers" column draws on, and why the others are not comparable (n/c).
      for (const line of suite.published) part.appendChild(el("div", { class: "meta published", text: line }));
      if (suite.problems.length) {
        part.appendChild(el("h3", { text: "Errors, unscored and missing" }));
        part.appendChild(el("ul", { class: "problems" }, suite.problems.map((p) => el("li", { text: p }))));
      }
      if (suite.by) {
        part.appendChild(el("h3", { text: suite.by }));
        const grid = el("div", { class: "multiples" });
        for (const m of suite.multiples) {
          const metric = page.metric(m.metric);
          grid.appendChild(el("div", { class: "multiple", dataset: { metric: m.metric } },
            el("div", { class: "title", text: metric.label }),
            el("table", {}, m.rows.map((r) => el("tr", {}, el("td", { text: r.name }),
              el("td", { class: "num", text: r.score }),
              el("td", {}, r.mean === null ? "" : intervalPlot(metric, r, r.papers, 140)))))));
        }
        part.appendChild(grid);
      }
      for (const t of suite.tables || []) {  // the interactive section, formatted in Python
        part.appendChild(el("h3", { text: t.title }));
        if (t.head.length) {
          part.appendChild(el("table", { class: "section" },
            el("tr", {}, t.head.map((h, i) => el("th", { class: i ? "num" : null, text: h }))),
            t.rows.map((r) => el("tr", {}, r.map((c, i) => el("td", { class: i ? "num" : null, text: c }))))));
        }
      }
      if (suite.evidence.length) {
        part.appendChild(el("h3", { text: "Evidence coverage: recall@k of gold passages" }));
        const t = el("table", {}, el("tr", {}, ["slice", "items", "original question", "clarified questions"].map((x) => el("th", { text: x }))));
        for (const e of suite.evidence) {
          t.appendChild(el("tr", {}, el("td", { text: e.name }), el("td", { class: "num", text: e.items }),
            el("td", { class: "num", text: e.original }), el("td", { class: "num", text: e.clarified })));
        }
        part.appendChild(t);
      }
      out.appendChild(part);
    }
    const labels = page.data.calibration;  // the judge against human labels (--ambig-human-labels)
    if (labels) {
      const part = el("div", { class: "suite", id: "calibration" }, el("h2", { text: "Judge against human labels" }));
      for (const note of labels.notes) part.appendChild(el("div", { class: "meta", text: note }));
      for (const t of labels.tables) {
        part.appendChild(el("table", { class: "section" },
          el("tr", {}, t.head.map((h) => el("th", { text: h }))),
          t.rows.map((r) => el("tr", {}, r.map((c) => el("td", { text: c }))))));
      }
      part.appendChild(el("div", { class: "meta", text: labels.key }));
      out.appendChild(part);
    }
    return out;
  }
  ns.overview = overview;
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

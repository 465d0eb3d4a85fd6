// report.html, comparison: the paired comparison with the base run, suite by suite, and
// its regressions with their word diffs.
(function (/** @type {any} the scripts' namespace (page.d.ts) */ ns) {
  "use strict";
  const SHOWN = 200; // regressions drawn per suite; the Items tab lists them all

  /** @param {import("./page").Page} page */
  function comparison(page) {
    const { el } = ns.dom;
    const { visible } = ns.format;
    const c = page.data.comparison;
    const out = el("section", { id: "comparison" });
    out.appendChild(el("p", { text: c.intro }));
    for (const note of c.notes) out.appendChild(el("p", { class: "warn", text: note }));
    for (const only of c.only) {
      out.appendChild(el("details", {}, el("summary", { text: only.keys.length + " item(s) " + only.what + ", not compared" }),
        el("p", { text: only.keys.map(visible).join(", ") })));
    }
    const index = new Map(page.items.map((it, n) => [it.key, n]));
    for (const suite of c.suites) {
      out.appendChild(el("h2", { text: suite.name }));
      const t = el("table", { class: "changes" }, el("tr", {}, ["slice", "metric", "n", "base", "new", "change", "95% CI", "",
        "p (test)", "Holm p", "W/T/L"].map((x, n) => el("th", { class: n >= 2 && n <= 5 ? "num" : null, text: x }))));
      for (const r of suite.rows) {
        const [n, base, now, change, interval, p, holm, wtl] = r.cells;
        const mark = r.significant === "better" ? " ▲" : r.significant === "worse" ? " ▼" : "";
        t.appendChild(el("tr", { class: r.significant ? "significant " + r.significant : null,
          dataset: { metric: r.metric, slice: r.slice } }, el("td", { text: r.slice }),
          el("td", { text: page.metric(r.metric).label }), el("td", { class: "num", text: n }),
          el("td", { class: "num", text: base }), el("td", { class: "num", text: now }),
          el("td", { class: "num", text: change }), el("td", { text: interval }),
          el("td", {}, ns.plots.changePlot(r), mark ? el("span", { class: "sig", title: "significant: " + page.data.comparison.significant_by, text: mark }) : null),
          el("td", { text: p }),
          el("td", { class: "num", text: holm }), el("td", { class: "num", text: wtl })));
      }
      out.appendChild(t);
      // Where Holm's p disagrees with the interval (the statistic the gate reads): why, in words.
      for (const r of suite.rows.filter((x) => x.why)) {
        out.appendChild(el("p", { class: "warn holm", text: r.slice + " " + page.metric(r.metric).label + ": " + r.why }));
      }
      for (const text of suite.skipped) out.appendChild(el("p", { class: "na not-compared", text: text }));
      for (const text of suite.one_sided) out.appendChild(el("p", { class: "na one-sided", text: text }));
      const regs = c.regressions.filter((r) => r.suite === suite.name);
      out.appendChild(el("h3", { text: "Regressions (" + regs.length + ", worst first)" }));
      for (const r of regs.slice(0, SHOWN)) {
        const open = () => { page.showTab("items"); page.list.open(index.get(r.key)); };
        const box = el("div", { class: "regression", dataset: { key: r.key } },
          el("button", { class: "link", text: visible(r.key), onclick: open }),
          el("span", { class: "meta", text: " · " + r.text }));
        const diff = box.appendChild(ns.detail.wordDiff(r.diff));
        const n = index.get(r.key);
        if (n !== undefined) {
          page.withDetails(() => { // the two answers, before the diff, once the details are in
            const d = page.detailOf(n);
            if (d.base) box.insertBefore(ns.detail.sideBySide(d.base.text || "(no answer)", d.answer ? d.answer.text : "(no answer)"), diff);
          });
        }
        out.appendChild(box);
      }
      if (regs.length > SHOWN) out.appendChild(el("p", { class: "meta", text: (regs.length - SHOWN) + " more: tick “regressions” in Items to list them all." }));
    }
    return out;
  }
  ns.comparison = comparison;
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

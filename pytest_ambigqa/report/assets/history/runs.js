// history.html, runs: the table of runs, and two of them compared item by item.
(function (ns) {
  "use strict";

  // What a run changed that can move the numbers: the suites whose data file, protocol or
  // scorer profile differs from the last run before it that had the suite.
  function changes(runs) {
    const last = {};
    return runs.map((run) => {
      const said = [];
      for (const [name, s] of Object.entries(run.suites)) {
        const before = last[name];
        if (before) {
          if (before.sha256 !== s.sha256) said.push(name + ": other data");
          if (before.protocol !== s.protocol) said.push(name + ": protocol " + s.protocol_label);
          if (before.profile !== s.profile) said.push(name + ": scored as " + s.profile);
        }
        last[name] = s;
      }
      return said;
    });
  }

  function table(page, pick) {
    const { el } = ns.dom;
    const runs = page.data.runs;
    const changed = changes(runs);
    const t = el("table", { class: "runs" }, el("tr", {}, ["run", "started", "commit", "system", "items", "gates", "changed", "scorecard"]
      .map((x) => el("th", { text: x }))));
    runs.forEach((run, n) => {
      const gates = el("td", { class: "gates " + run.gates.toLowerCase(), text: run.gates, title: run.shortfalls.join("\n") || null });
      t.appendChild(el("tr", { class: "run", dataset: { run: n }, tabindex: 0, onclick: () => pick(n),
        onkeydown: (e) => { if (e.key === "Enter") pick(n); } },
        el("td", { text: "#" + (n + 1) }),
        el("td", { text: run.when }),
        el("td", { class: "mono", text: run.commit ? run.commit.slice(0, 12) : "" }),
        el("td", { text: run.system || "?" }),
        el("td", { class: "num", text: String(run.items) }),
        gates,
        el("td", { class: "warn", text: changed[n].join("; ") }),
        el("td", { class: "mono path", text: run.path })));
    });
    return el("section", { id: "runs" }, el("h2", { text: "Runs" }), t);
  }

  // The comparison of two runs, drawn as report.html's comparison tab draws one.
  function comparison(page, base, next) {
    const { el } = ns.dom;
    const data = page.data;
    const result = ns.paired.compare(page.run(base), page.run(next), data.metrics, data.constants);
    const out = el("div", {});
    const runs = data.runs;
    out.appendChild(el("h2", { text: "Run " + runs[next].label + " compared with run " + runs[base].label }));
    out.appendChild(el("p", { text: "Paired by item. Change = new − base, with a seeded paired bootstrap 95% interval "
      + "(items resampled within their type); p: exact McNemar for 0/1 metrics, else a sign-flip permutation test; "
      + "Holm-corrected across every test shown. W/T/L: items better / same / worse in the new run. Intervals and "
      + "Monte Carlo p values are this page's own seeded draws, within Monte Carlo error of pytest-ambigqa compare's." }));
    for (const note of result.notes) out.appendChild(el("p", { class: "warn note", text: note }));
    for (const [n, what] of [[result.onlyBase, "only in the base run"], [result.onlyNew, "only in the new run"]]) {
      if (n) out.appendChild(el("p", { class: "warn only", text: n + " item(s) " + what + ", not compared" }));
    }
    for (const suite of [...new Set(result.rows.map((r) => r.suite))]) {
      const rows = result.rows.filter((r) => r.suite === suite);
      out.appendChild(el("h3", { text: suite }));
      const t = el("table", { class: "changes" }, el("tr", {}, ["slice", "metric", "n", "base", "new", "change", "95% CI", "",
        "p (test)", "Holm p", "W/T/L"].map((x, n) => el("th", { class: n >= 2 && n <= 5 ? "num" : null, text: x }))));
      const skipped = new Map();
      for (const r of rows) {
        const info = data.metrics[r.metric] || { label: r.metric, digits: 1, direction: 0 };
        if (r.diff === null) {
          if (r.slice === "all") {
            if (!skipped.has(r.reason)) skipped.set(r.reason, []);
            skipped.get(r.reason).push(info.label);
          }
          continue;
        }
        const [b, now, change, interval, p, holm, wtl] = ns.paired.cells(r, info.digits);
        const plotted = { low: r.low, high: r.high, diff: r.diff, direction: info.direction, margin: null };
        t.appendChild(el("tr", { dataset: { metric: r.metric, slice: r.slice } }, el("td", { text: r.slice }),
          el("td", { text: info.label }), el("td", { class: "num", text: String(r.n) }),
          el("td", { class: "num", text: b }), el("td", { class: "num", text: now }),
          el("td", { class: "num", text: change }), el("td", { text: interval }),
          el("td", {}, ns.plots.changePlot(plotted)), el("td", { text: p }),
          el("td", { class: "num", text: holm }), el("td", { class: "num", text: wtl })));
      }
      out.appendChild(t);
      for (const [reason, labels] of skipped) out.appendChild(el("p", { class: "na not-compared", text: "not compared: " + labels.join(", ") + " (" + reason + ")" }));
    }
    return out;
  }

  ns.runs = { changes, table, comparison };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

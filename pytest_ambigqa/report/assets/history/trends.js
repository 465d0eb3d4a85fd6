// history.html, trends: a metric of a suite over the runs, its 95% interval at each run, per
// run or per commit; a run whose data file differs from the run before it is marked.
(function (ns) {
  "use strict";

  // Where each run stands on the x axis: one slot a run ("runs"), or one a commit
  // ("commits", in the order the commits first ran; a run without one has its own slot),
  // runs of one commit side by side within it. Returns {x: [position per run], labels: [per slot]}.
  function slots(runs, mode) {
    const slotOf = [], labels = [], byCommit = new Map();
    runs.forEach((run, n) => {
      if (mode === "commits" && run.commit) {
        if (!byCommit.has(run.commit)) { byCommit.set(run.commit, labels.length); labels.push(run.commit.slice(0, 8)); }
        slotOf.push(byCommit.get(run.commit));
      } else {
        slotOf.push(labels.length);
        labels.push(mode === "commits" ? "no commit" : "#" + (n + 1));
      }
    });
    const count = new Map(), seen = new Map();
    for (const s of slotOf) count.set(s, (count.get(s) || 0) + 1);
    const x = slotOf.map((s) => {
      const k = seen.get(s) || 0;
      seen.set(s, k + 1);
      const c = count.get(s);
      return c === 1 ? s : s - 0.3 + (0.6 * k) / (c - 1);
    });
    return { x, labels };
  }

  // The runs at which a suite's data file changed from the last run before that had it.
  function dataChanges(runs, suite) {
    const out = [];
    let last = null;
    runs.forEach((run, n) => {
      const s = run.suites[suite];
      if (!s) return;
      if (last !== null && last !== s.sha256) out.push(n);
      last = s.sha256;
    });
    return out;
  }

  // One metric's trend: a dot and its interval a run, a line through the means of runs next
  // to each other; ``pick(n)`` is called with the run a dot is clicked for.
  function trendPlot(page, suite, metric, layout, pick) {
    const svg = ns.dom.svg;
    const runs = page.data.runs;
    const info = page.metric(metric);
    const points = [];
    runs.forEach((run, n) => {
      const s = run.suites[suite];
      const v = s && s.metrics[metric];
      if (v && v[0] !== null) points.push({ n, x: layout.x[n], mean: v[0], low: v[1], high: v[2], text: v[3] + (v[4] ? " " + v[4] : "") });
    });
    const w = Math.max(360, Math.min(960, 60 + layout.labels.length * 22)), h = 96, left = 46, right = 10, top = 6, bottom = 18;
    const [min, max] = ns.plots.axis(info.scale, points.flatMap((p) => [p.mean, p.low, p.high]));
    const span = Math.max(layout.labels.length - 1, 1);
    const x = (v) => left + (layout.labels.length === 1 ? 0.5 : v / span) * (w - left - right);
    const y = (v) => top + (1 - (Math.max(min, Math.min(v, max)) - min) / (max - min || 1)) * (h - top - bottom);
    const root = svg("svg", { width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img", class: "trend" });
    root.appendChild(svg("title", { text: info.label + " over " + points.length + " runs, on " + min + " to " + max }));
    root.appendChild(svg("line", { class: "axis", x1: left, x2: w - right, y1: h - bottom, y2: h - bottom }));
    const bound = (v) => String(Number(v.toPrecision(3))); // an axis's end, not a figure of the runs
    root.appendChild(svg("text", { x: left - 4, y: top + 8, "text-anchor": "end", text: bound(max) }));
    root.appendChild(svg("text", { x: left - 4, y: h - bottom, "text-anchor": "end", text: bound(min) }));
    const room = (w - left - right) / span; // pixels a slot
    const every = Math.max(1, Math.ceil((6.5 * Math.max(...layout.labels.map((l) => l.length)) + 8) / room));
    layout.labels.forEach((label, s) => {
      if (s % every === 0 || s === layout.labels.length - 1) {
        root.appendChild(svg("text", { class: "tick", x: x(s), y: h - 4, "text-anchor": "middle", text: label }));
      }
    });
    for (const n of dataChanges(runs, suite)) {
      const at = x(layout.x[n] - 0.5);
      const mark = svg("line", { class: "changed", x1: at, x2: at, y1: top, y2: h - bottom });
      mark.appendChild(svg("title", { text: "the data file changed at " + runs[n].label }));
      root.appendChild(mark);
    }
    const ordered = [...points].sort((a, b) => a.x - b.x);
    if (ordered.length > 1) {
      root.appendChild(svg("polyline", { class: "trendline", points: ordered.map((p) => x(p.x) + "," + y(p.mean)).join(" ") }));
    }
    for (const p of points) {
      const g = svg("g", { class: "pt", "data-run": p.n, tabindex: 0 });
      if (p.low !== null && p.low !== undefined) {
        g.appendChild(svg("line", { class: "ci", x1: x(p.x), x2: x(p.x), y1: y(p.low), y2: y(p.high) }));
      }
      g.appendChild(svg("circle", { class: "dot", cx: x(p.x), cy: y(p.mean), r: 3.5 }));
      g.appendChild(svg("title", { text: runs[p.n].label + " · " + p.text }));
      g.addEventListener("click", () => pick(p.n));
      g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") pick(p.n); });
      root.appendChild(g);
    }
    return root;
  }

  function trends(page, pick) {
    const { el } = ns.dom;
    const out = el("section", { id: "trends" });
    const layout = slots(page.data.runs, page.mode);
    for (const suite of page.data.suites) {
      const shown = suite.metrics.filter((m) => page.data.metrics[m] && page.data.runs.some((r) => r.suites[suite.name] && r.suites[suite.name].metrics[m] && r.suites[suite.name].metrics[m][0] !== null));
      if (!shown.length) continue;
      out.appendChild(el("h2", { text: suite.title }));
      const grid = el("div", { class: "trends" });
      for (const metric of shown) {
        const last = [...page.data.runs].reverse().find((r) => r.suites[suite.name] && r.suites[suite.name].metrics[metric]);
        const v = last.suites[suite.name].metrics[metric];
        grid.appendChild(el("div", { class: "trend-row", dataset: { suite: suite.name, metric } },
          el("div", { class: "trend-label" }, el("strong", { text: page.metric(metric).label }),
            el("div", { class: "meta", text: "last: " + v[3] + (v[4] ? " " + v[4] : "") })),
          trendPlot(page, suite.name, metric, layout, pick)));
      }
      out.appendChild(grid);
    }
    return out;
  }

  ns.trends = { slots, dataChanges, trendPlot, trends };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

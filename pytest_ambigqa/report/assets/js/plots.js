// report.html, plots: SVG the page draws itself, a few lines each (no charting library).
(function (/** @type {any} the scripts' namespace (page.d.ts) */ ns) {
  "use strict";
  // The axis of a metric: its scale, or for counts and totals the span of the values and 0.
  function axis(scale, values) {
    if (scale) return scale;
    const shown = values.filter((v) => typeof v === "number");
    const low = Math.min(...shown, 0), high = Math.max(...shown, 0);
    const room = (high - low) * 0.15 || 1;
    return [low < 0 ? low - room : 0, high > 0 || low === 0 ? high + room : 0];
  }
  // A compared row's verdict: " better" or " worse" when its interval excludes 0 in the
  // metric's direction (+1 higher is better, -1 lower is, 0 neither: never a verdict), else "".
  /** @param {import("./payload").ComparedRow} row */
  function verdict(row) {
    const d = row.direction;
    if (!d || !(d * row.low > 0 || d * row.high < 0)) return "";
    return d * row.diff > 0 ? " better" : " worse";
  }
  // One metric's interval on its axis, the published range as a band behind it. ``summary``:
  // mean, low, high on the printed scale; ``papers``: low, high, comparable, title, or null.
  /** @param {ReturnType<import("./page").Page["metric"]>} metric @param {import("./payload").Summary} summary @param {import("./payload").Papers | null} papers @param {number} [width] */
  function intervalPlot(metric, summary, papers, width) {
    const svg = ns.dom.svg;
    const w = width || 220, h = 22, pad = 4;
    const [min, max] = axis(metric.scale, [summary.low, summary.high, summary.mean, papers && papers.low, papers && papers.high]);
    const x = (v) => pad + ((Math.max(min, Math.min(v, max)) - min) / (max - min)) * (w - 2 * pad);
    const root = svg("svg", { width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img" });
    root.appendChild(svg("line", { class: "axis", x1: pad, x2: w - pad, y1: h - 4, y2: h - 4 }));
    if (papers) {
      const band = svg("rect", { class: "band" + (papers.comparable ? "" : " nc"), x: x(papers.low), y: 3,
        width: Math.max(2, x(papers.high) - x(papers.low)), height: h - 9 });
      band.appendChild(svg("title", { text: papers.title }));
      root.appendChild(band);
    }
    if (summary.mean !== null && summary.mean !== undefined) {
      if (summary.low !== null && summary.low !== undefined) {
        root.appendChild(svg("line", { class: "ci", x1: x(summary.low), x2: x(summary.high), y1: h / 2 - 1, y2: h / 2 - 1 }));
      }
      root.appendChild(svg("circle", { class: "dot", cx: x(summary.mean), cy: h / 2 - 1, r: 3.5 }));
    }
    root.appendChild(svg("title", { text: metric.label + " on " + min + " to " + max }));
    return root;
  }
  // A change and its interval on an axis symmetric about 0, the margin of
  // --ambig-fail-if-worse marked.
  /** @param {import("./payload").ComparedRow} row */
  function changePlot(row) {
    const svg = ns.dom.svg;
    const w = 180, h = 22, pad = 6;
    const extent = Math.max(Math.abs(row.low), Math.abs(row.high), row.margin || 0, 1e-9) * 1.1;
    const x = (v) => pad + ((v + extent) / (2 * extent)) * (w - 2 * pad);
    const root = svg("svg", { width: w, height: h, role: "img" });
    root.appendChild(svg("line", { class: "zero", x1: x(0), x2: x(0), y1: 2, y2: h - 2 }));
    const d = row.direction; // 0: no better direction (a length), drawn neutral
    if (row.margin && d) root.appendChild(svg("line", { class: "margin", x1: x(-d * row.margin), x2: x(-d * row.margin), y1: 2, y2: h - 2 }));
    const better = verdict(row);
    root.appendChild(svg("line", { class: "ci" + better, x1: x(row.low), x2: x(row.high), y1: h / 2, y2: h / 2 }));
    root.appendChild(svg("circle", { class: "dot" + better, cx: x(row.diff), cy: h / 2, r: 3.5 }));
    return root;
  }
  ns.plots = { axis, verdict, intervalPlot, changePlot };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

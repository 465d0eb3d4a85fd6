// report.html, filter and sort: which items the list shows, in which order. Pure: the list
// (list.js) reads the controls and draws what these return.
(function (/** @type {any} the scripts' namespace (page.d.ts) */ ns) {
  "use strict";
  // The indices of the items that pass every filter. ``f``: suite, type, status ("" for
  // any, "unscored" for an item with an unscored metric), metric with min and max (null for
  // no bound) on the printed scale, disagree, regressed, q (lower case); ``haystack(i)``: the
  // item's searchable text, lower case (built only when there is a search).
  /** @param {import("./payload").ItemRow[]} items @param {any} f @param {(i: number) => string} haystack */
  function keep(items, f, haystack) {
    const out = [];
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      if (f.suite && it.suite !== f.suite) continue;
      if (f.type && it.type !== f.type) continue;
      if (f.status === "unscored" ? it.unscored.length === 0 : f.status && it.status !== f.status) continue;
      if (f.min !== null || f.max !== null) {
        const v = score(it, f.metric);
        if (v === null || (f.min !== null && v < f.min) || (f.max !== null && v > f.max)) continue;
      }
      if (f.disagree && !(it.spread > 0)) continue;
      if (f.regressed && !it.regressed) continue;
      if (f.q && haystack(i).indexOf(f.q) < 0) continue;
      out.push(i);
    }
    return out;
  }
  /** @param {import("./payload").ItemRow} it @param {string} metric @returns {number | null} */
  function score(it, metric) {
    const v = it.scores[metric];
    return v === undefined ? null : v;
  }
  // ``indices`` in place: "file" keeps file order; "asc"/"desc" by ``metric``, "duration"
  // slowest first, "change" against the base run worst first; items without the value last,
  // ties in file order.
  function sort(items, indices, how, metric) {
    const last = (key, s) => (a, b) => {
      const va = key(a), vb = key(b);
      if (va === null || vb === null) return Number(va === null) - Number(vb === null);
      return s * (va - vb) || a - b;
    };
    if (how === "asc" || how === "desc") indices.sort(last((i) => score(items[i], metric), how === "asc" ? 1 : -1));
    else if (how === "duration") indices.sort((a, b) => items[b].duration - items[a].duration || a - b);
    else if (how === "change") indices.sort(last((i) => items[i].change, 1));
    return indices;
  }
  ns.filter = { keep, sort, score };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

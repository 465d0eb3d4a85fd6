// history.html, paired: two runs compared item by item, as card/compare.py compares them
// (its compare, _suite_rows, _unavailable, _columns and _row): items aligned by key, every
// metric of every slice of each suite both runs put under the same protocol, Holm's
// correction across every test; and the cells as report/view.py's change() prints them.
(function (ns) {
  "use strict";

  // One run as the comparison reads it: ``meta`` its entry in the page's runs, ``items`` its
  // block (history.py's _items), ``keys`` the page's item keys.
  function compare(base, next, metrics, constants) {
    const stats = ns.stats;
    const rows = [], notes = [];
    let onlyBase = 0, onlyNew = 0;
    for (const [suite, card] of Object.entries(next.meta.suites)) {
      const other = base.meta.suites[suite];
      if (!other) { notes.push(suite + ": not in the base run"); continue; }
      if (other.protocol !== card.protocol) {
        notes.push(suite + ": not compared: the base run's protocol is " + other.protocol_label + "; this run's, " + card.protocol_label);
        continue;
      }
      if (other.sha256 !== card.sha256) notes.push(suite + ": the runs read different data files; items are aligned by id");
      if (other.profile !== card.profile) notes.push(suite + ": scored under different scorer profiles (" + other.profile + "; " + card.profile + ")");
      const b = base.items[suite], n = next.items[suite];
      const where = new Map(b.items.map((key, i) => [key, i]));
      const mine = new Set(n.items);
      const pairs = [];
      n.items.forEach((key, i) => { if (where.has(key)) pairs.push([where.get(key), i]); });
      onlyNew += n.items.length - pairs.length;
      onlyBase += b.items.filter((key) => !mine.has(key)).length;
      const slices = [["all", pairs], ...card.slices.map((name) => [name, pairs.filter(([, i]) => n.labels[n.strata[i]] === name)])];
      for (const [name, part] of slices) {
        for (const metric of Object.keys(card.metrics)) {
          const scope = [suite, name, metric];
          const reason = unavailable(metric, card, other, metrics);
          if (reason !== null) { rows.push(na(scope, reason)); continue; }
          const strata = part.map(([i]) => b.labels[b.strata[i]]);
          const seed = stats.stableSeed(next.meta.seed, "paired", ...scope);
          rows.push(row(scope, part, strata, seed, b, n, metrics[metric], constants));
        }
      }
    }
    const adjusted = stats.holm(rows.map((r) => r.p));
    rows.forEach((r, i) => { r.p_holm = adjusted[i]; });
    return { rows, notes, onlyBase, onlyNew };
  }

  // compare._unavailable: why a metric cannot be compared at all, or null.
  function unavailable(metric, card, other, metrics) {
    if (!(metric in other.metrics)) return "not computed in the base run";
    if (!metrics[metric]) return "not a metric this version knows";
    for (const [run, summary] of [["this run", card.metrics[metric]], ["the base run", other.metrics[metric]]]) {
      if (summary[0] === null) return "n/a in " + run + ": " + (summary[5] ?? "None"); // as Python says a missing reason
    }
    return null;
  }

  function na(scope, reason, count, oneSided) {
    const [suite, slice, metric] = scope;
    return { suite, slice, metric, n: count || 0, base: null, new: null, diff: null, low: null, high: null,
      test: null, p: null, p_holm: null, wins: null, ties: null, losses: null, one_sided: oneSided || 0, reason };
  }

  // compare._columns: an item's columns on the printed scale, or null (unscored).
  function columns(spec, run, i, metric, pooled) {
    const values = [];
    for (const [source, factor] of spec.sources) {
      const scores = run.scores[source];
      const v = scores ? scores[i] : null;
      if (v === null || v === undefined) return null;
      values.push(v * factor);
    }
    if (spec.kind === "geometric" || !pooled) return values;
    const units = run.units[metric] ? run.units[metric][i] : null;
    const [sum, count] = units || [run.scores[spec.sources[0][0]][i], 1];
    return [sum * spec.sources[0][1], count];
  }

  // compare._statistic: DR's sqrt of the product of means; pooled units' ratio of sums.
  function statistic(spec, width) {
    if (spec.kind === "geometric") return (m) => Math.sqrt(m.reduce((a, v) => a * v, 1));
    if (width === 2) return (m) => (m[1] > 0 ? m[0] / m[1] : 0);
    return null;
  }

  // compare._row: one metric over one slice.
  function row(scope, part, strata, seed, b, n, spec, constants) {
    const stats = ns.stats;
    const metric = scope[2];
    if (spec.kind === "sum") return na(scope, "a total, not a per-item score");
    const pooled = part.some(([i, j]) => (b.units[metric] && b.units[metric][i]) || (n.units[metric] && n.units[metric][j]));
    const both = [], kept = [];
    let oneSided = 0;
    part.forEach(([i, j], at) => {
      const x = columns(spec, b, i, metric, pooled), y = columns(spec, n, j, metric, pooled);
      if (x !== null && y !== null) { both.push([x, y]); kept.push(strata[at]); }
      else if ((x === null) !== (y === null)) oneSided++;
    });
    if (!both.length) return na(scope, part.length ? "no item scored in both runs" : "no aligned items", 0, oneSided);
    const width = both[0][0].length;
    const column = (side, c) => Float64Array.from(both, (pair) => pair[side][c]);
    const base = [], next = [];
    for (let c = 0; c < width; c++) { base.push(column(0, c)); next.push(column(1, c)); }
    const stat = statistic(spec, width);
    const value = (cols) => (stat ? stat(means(cols)) : means(cols)[0]);
    const [low, high] = stats.pairedBootstrap(base, next, kept, seed, stat, constants);
    let test, p;
    if (spec.binary && width === 1) {
      const factor = spec.sources[0][1];
      const [dB, dC] = stats.discordant(base[0].map((v) => v / factor), next[0].map((v) => v / factor));
      test = "mcnemar"; p = stats.mcnemarExact(dB, dC);
    } else {
      test = "permutation"; p = stats.signFlipP(base, next, seed, stat, constants);
    }
    let wins = null, ties = null, losses = null;
    if (spec.kind !== "geometric" && spec.direction) {
      const per = (cols) => (width === 1 ? cols[0] : cols[0].map((v, i) => (cols[1][i] > 0 ? v / cols[1][i] : 0)));
      const before = per(base), after = per(next);
      wins = ties = losses = 0;
      for (let i = 0; i < before.length; i++) {
        const d = (after[i] - before[i]) * spec.direction;
        if (d > 0) wins++; else if (d === 0) ties++; else losses++;
      }
    }
    const bv = value(base), nv = value(next);
    const [suite, slice] = scope;
    return { suite, slice, metric, n: both.length, base: bv, new: nv, diff: nv - bv, low, high, test, p,
      p_holm: null, wins, ties, losses, one_sided: oneSided, reason: null };
  }

  function means(cols) {
    return cols.map((col) => { let s = 0; for (const v of col) s += v; return s / col.length; });
  }

  // report/view.py's number formats, for the figures the page computes itself: Python's
  // format rounds an exact tie (0.0625 to 3 places) to even where toFixed rounds it up.
  function fixed(value, digits) {
    const size = Math.abs(value);
    let text = size.toFixed(digits);
    const [whole, fraction] = size.toFixed(100).split("."); // every digit of the binary value
    const rest = fraction ? fraction.slice(digits) : "";
    const lower = digits ? whole + "." + fraction.slice(0, digits) : whole;
    if (/^50*$/.test(rest) && Number(lower[lower.length - 1]) % 2 === 0) text = lower;
    return (value < 0 || Object.is(value, -0) ? "-" : "") + text;
  }
  function signed(value, digits) {
    return (value >= 0 && !Object.is(value, -0) ? "+" : "") + fixed(value, digits);
  }
  function pValue(p) {
    return p === null ? "" : p < 0.001 ? "<0.001" : fixed(p, 3);
  }
  // view.change: base, new, change, its interval, test p, Holm p, W/T/L.
  function cells(r, digits) {
    if (r.diff === null) return ["", "", "n/a (" + r.reason + ")", "", "", "", ""];
    const test = { mcnemar: "McNemar", permutation: "perm." }[r.test] || "";
    return [fixed(r.base, digits), fixed(r.new, digits), signed(r.diff, digits),
      "[" + signed(r.low, digits) + ", " + signed(r.high, digits) + "]", pValue(r.p) + " (" + test + ")",
      pValue(r.p_holm), r.wins !== null ? r.wins + "/" + r.ties + "/" + r.losses : ""];
  }

  ns.paired = { compare, unavailable, columns, row, cells, fixed, signed, pValue };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

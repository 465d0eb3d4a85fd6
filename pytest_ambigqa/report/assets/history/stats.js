// history.html, stats: the paired statistics of stats/paired.py, for two runs the reader
// clicks (every pair of fifty runs is too many to compute ahead). Same methods, same
// constants (the page's data carries stats/paired.py's and stats/bootstrap.py's); the random
// draws are the page's own, seeded as stats/bootstrap.py's stable_seed seeds the command's, so
// the bootstrap bounds and Monte Carlo p values agree with `pytest-ambigqa compare` within
// Monte Carlo error, and every exact figure (McNemar, sign flips of at most EXACT_UP_TO
// items, Holm) is the same.
(function (ns) {
  "use strict";

  // zlib's CRC-32 of a string's UTF-8 bytes, as stats.stable_seed takes it.
  let table = null;
  function crc32(text) {
    if (table === null) {
      table = new Uint32Array(256);
      for (let n = 0; n < 256; n++) {
        let c = n;
        for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
        table[n] = c >>> 0;
      }
    }
    let crc = 0xffffffff;
    for (const byte of new TextEncoder().encode(text)) crc = table[(crc ^ byte) & 0xff] ^ (crc >>> 8);
    return (crc ^ 0xffffffff) >>> 0;
  }
  // stats.stable_seed: one seed per (run seed, scope...), whatever the order of evaluation.
  function stableSeed(seed, ...parts) {
    return crc32([String(seed), ...parts].join("\x1f"));
  }

  // A seeded generator of uniform 32-bit integers (sfc32, seeded by splitmix32).
  function generator(seed) {
    let s = seed >>> 0;
    const split = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    let a = split(), b = split(), c = split(), d = split();
    const next = () => {
      const t = (((a + b) >>> 0) + d) >>> 0;
      d = (d + 1) >>> 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) >>> 0;
      c = ((c << 21) | (c >>> 11)) >>> 0;
      c = (c + t) >>> 0;
      return t;
    };
    for (let i = 0; i < 12; i++) next();
    return next;
  }
  const below = (next, n) => Math.floor((next() / 4294967296) * n); // an integer in [0, n)

  // numpy.percentile's default ("linear"): q in [0, 100] of sorted values.
  function percentile(sorted, q) {
    const pos = (q / 100) * (sorted.length - 1);
    const lo = Math.floor(pos), hi = Math.min(lo + 1, sorted.length - 1), t = pos - lo;
    const a = sorted[lo], b = sorted[hi];
    return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
  }

  // Runs are columns: arrays of k Float64Arrays of n items (k = 1 for a plain mean).
  // ``statistic`` maps column means (an array of k) to the number reported; null: the mean.
  function means(columns, rows) {
    return columns.map((col) => {
      let s = 0;
      if (rows) for (const i of rows) s += col[i];
      else for (let i = 0; i < col.length; i++) s += col[i];
      return s / (rows ? rows.length : col.length);
    });
  }

  // paired.paired_bootstrap: the 95% percentile interval of statistic(mean new) -
  // statistic(mean base), items resampled within their stratum, the same draws for both runs.
  function pairedBootstrap(base, next, strata, seed, statistic, constants) {
    const n = base[0].length;
    const groups = new Map();
    for (let i = 0; i < n; i++) {
      const label = strata[i];
      if (!groups.has(label)) groups.set(label, []);
      groups.get(label).push(i);
    }
    const members = [...groups.values()];
    const draw = generator(seed);
    const resamples = constants.resamples;
    const values = new Float64Array(resamples);
    const diff = statistic ? null : next[0].map((v, i) => v - base[0][i]);
    const idx = new Int32Array(n);
    for (let r = 0; r < resamples; r++) {
      if (diff) { // the mean change of the resampled items, summed as they are drawn
        let sum = 0;
        for (const group of members) {
          const size = group.length;
          for (let j = 0; j < size; j++) sum += diff[group[Math.floor((draw() / 4294967296) * size)]];
        }
        values[r] = sum / n;
        continue;
      }
      let at = 0;
      for (const group of members) for (let j = 0; j < group.length; j++) idx[at++] = group[below(draw, group.length)];
      values[r] = statistic(means(next, idx)) - statistic(means(base, idx));
    }
    values.sort();
    const tail = ((1 - constants.level) / 2) * 100;
    return [percentile(values, tail), percentile(values, 100 - tail)];
  }

  // paired.sign_flip_p: the two-sided paired permutation p of T = statistic(mean new) -
  // statistic(mean base); items whose rows are equal are left out; every flip enumerated up
  // to EXACT_UP_TO items, else PERMUTATIONS random ones.
  function signFlipP(base, next, seed, statistic, constants) {
    const k = base.length, n = base[0].length;
    const moved = [];
    for (let i = 0; i < n; i++) if (base.some((col, c) => next[c][i] !== col[i])) moved.push(i);
    const m = moved.length;
    if (m === 0) return 1;
    const delta = new Float64Array(m * k); // item j's change in column c at j * k + c
    moved.forEach((i, j) => { for (let c = 0; c < k; c++) delta[j * k + c] = next[c][i] - base[c][i]; });
    const baseMeans = means(base), newMeans = means(next);
    const total = new Float64Array(k);
    for (let j = 0; j < m; j++) for (let c = 0; c < k; c++) total[c] += delta[j * k + c];
    const shift = new Float64Array(k); // the summed change of the swapped items
    const value = () => { // |T| with the items in ``shift`` swapped
      if (!statistic) return Math.abs((total[0] - 2 * shift[0]) / n);
      const up = newMeans.map((v, c) => v - shift[c] / n), down = baseMeans.map((v, c) => v + shift[c] / n);
      return Math.abs(statistic(up) - statistic(down));
    };
    const observed = value();
    const exact = m <= constants.exact_up_to;
    const draws = exact ? 2 ** m : constants.permutations;
    const values = new Float64Array(draws);
    const draw = generator(seed);
    const words = Math.ceil(m / 32);
    for (let r = 0; r < draws; r++) {
      shift.fill(0);
      for (let w = 0; w < words; w++) {
        let bits = exact ? r >>> (32 * w) : draw(); // exact: r's bits are the swaps (m <= 16: one word)
        for (let j = 32 * w; bits !== 0 && j < m; j++, bits >>>= 1) {
          if (bits & 1) for (let c = 0; c < k; c++) shift[c] += delta[j * k + c];
        }
      }
      values[r] = value();
    }
    let largest = observed;
    for (const v of values) if (v > largest) largest = v;
    const tolerance = constants.tie * largest;
    let count = 0;
    for (const v of values) if (v >= observed - tolerance) count++;
    return exact ? count / draws : (1 + count) / (1 + constants.permutations);
  }

  // paired.mcnemar_exact: min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2), summed on
  // exact integers from C(n, k) down, stopping when what is left is below 2^-64 of the sum.
  function mcnemarExact(b, c) {
    if (b < 0 || c < 0) throw new Error("negative discordant counts");
    const n = b + c, k = Math.min(b, c);
    if (n === 0 || 2 * k === n) return 1;
    let term = 1n;
    for (let i = 1; i <= k; i++) term = (term * BigInt(n - k + i)) / BigInt(i); // C(n, k)
    let tail = term;
    const N = BigInt(n);
    for (let i = k; i > 0; i--) {
      const I = BigInt(i);
      if ((term * I) << 64n < tail * (N - 2n * I + 1n)) break;
      term = (term * I) / (N - I + 1n);
      tail += term;
    }
    return Math.min(1, ratio(2n * tail, n));
  }
  // num / 2^n as a float, from the leading 64 bits of num.
  function ratio(num, n) {
    const extra = Math.max(0, num.toString(2).length - 64);
    return Number(num >> BigInt(extra)) * 2 ** (extra - n);
  }

  // paired.holm: Holm-Bonferroni step-down adjusted p values, in input order; null passes.
  function holm(ps) {
    const given = ps.map((p, i) => [p, i]).filter(([p]) => p !== null && p !== undefined);
    given.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    const m = given.length;
    const out = ps.map(() => null);
    let running = 0;
    given.forEach(([p, i], j) => {
      running = Math.max(running, Math.min(1, (m - j) * p));
      out[i] = running;
    });
    return out;
  }

  // paired.discordant: (b, c) of two 0/1 vectors: base 1 and new 0, base 0 and new 1.
  function discordant(base, next) {
    let b = 0, c = 0;
    for (let i = 0; i < base.length; i++) {
      if ((base[i] !== 0 && base[i] !== 1) || (next[i] !== 0 && next[i] !== 1)) throw new Error("discordant counts need 0/1 item scores");
      if (base[i] === 1 && next[i] === 0) b++;
      else if (base[i] === 0 && next[i] === 1) c++;
    }
    return [b, c];
  }

  ns.stats = { crc32, stableSeed, generator, percentile, pairedBootstrap, signFlipP, mcnemarExact, holm, discordant };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

// history.html's script without a browser: the paired statistics against the values
// stats/paired.py gives (worked out by it, written here), the pairing of two runs, the axis
// slots, the selection. tests/test_history.py checks whole comparisons against compare.py.
const test = require("node:test");
const assert = require("node:assert");
const root = "../../pytest_ambigqa/report/assets/history/";
const { stats } = require(root + "stats.js");
const { paired } = require(root + "paired.js");
const { trends } = require(root + "trends.js");
const { runs } = require(root + "runs.js");
const { history } = require(root + "history.js"); // under Node it defines, and starts nothing

const CONSTANTS = { resamples: 1000, level: 0.95, permutations: 4999, exact_up_to: 16, tie: 1e-9 };

test("seeds are zlib's CRC-32 of the scope, as stats.stable_seed makes them", () => {
  assert.strictEqual(stats.crc32("hello"), 907060870);
  assert.strictEqual(stats.crc32("ré\x1fx"), 1692767269);
  assert.strictEqual(stats.stableSeed(0, "paired", "march", "all", "str_em"), 2217376866);
});

test("McNemar's exact p is paired.mcnemar_exact's", () => {
  assert.strictEqual(stats.mcnemarExact(0, 5), 0.0625);
  assert.strictEqual(stats.mcnemarExact(3, 10), 0.09228515625);
  assert.ok(Math.abs(stats.mcnemarExact(40, 60) / 0.05688793364098079 - 1) < 1e-12);
  assert.ok(Math.abs(stats.mcnemarExact(900, 1100) / 8.457089535503927e-06 - 1) < 1e-12);
  assert.strictEqual(stats.mcnemarExact(10, 10), 1);
  assert.strictEqual(stats.mcnemarExact(0, 0), 1);
});

test("Holm's adjustment keeps the input order and passes nulls", () => {
  assert.deepStrictEqual(stats.holm([0.01, 0.04, 0.03, null, 0.005]), [0.03, 0.06, 0.06, null, 0.02]);
});

test("percentiles interpolate as numpy's do", () => {
  const sorted = Float64Array.from([3, 1, 4, 1, 5, 9, 2, 6]).sort();
  const got = [2.5, 97.5, 50, 0, 100].map((q) => stats.percentile(sorted, q));
  const want = [1.0, 8.475000000000001, 3.5, 1.0, 9.0];
  got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-12, `${v} vs ${want[i]}`));
});

test("sign flips are enumerated exactly on few items, as paired.sign_flip_p does", () => {
  const base = [Float64Array.from([0, 1, 0.5, 0.25, 1, 0])], next = [Float64Array.from([1, 1, 0, 0.75, 1, 0.5])];
  assert.strictEqual(stats.signFlipP(base, next, 0, null, CONSTANTS), 0.5);
  const ratio = (m) => m[0] / m[1];
  const b2 = [Float64Array.from([1, 0, 3, 2, 1]), Float64Array.from([2, 1, 3, 4, 1])];
  const n2 = [Float64Array.from([2, 1, 3, 2, 0]), Float64Array.from([2, 1, 4, 2, 1])];
  assert.strictEqual(stats.signFlipP(b2, n2, 0, ratio, CONSTANTS), 0.5625);
  assert.strictEqual(stats.signFlipP(base, base, 0, null, CONSTANTS), 1);
});

test("the paired bootstrap is seeded, stratified, and centred on the change", () => {
  const n = 400;
  const base = [Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0))];
  const next = [Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 || i % 5 === 0 ? 1 : 0))];
  const strata = Array.from({ length: n }, (_, i) => (i < n / 2 ? "a" : "b"));
  const one = stats.pairedBootstrap(base, next, strata, 7, null, CONSTANTS);
  assert.deepStrictEqual(stats.pairedBootstrap(base, next, strata, 7, null, CONSTANTS), one);
  const change = next[0].reduce((a, v, i) => a + v - base[0][i], 0) / n;
  assert.ok(one[0] < change && change < one[1] && one[0] > 0, one.join());
  const same = stats.pairedBootstrap(base, base, strata, 7, null, CONSTANTS);
  assert.deepStrictEqual(same, [0, 0]);
});

// Two runs of one suite in the page's form: keys as numbers, strata, scores per score name.
function run(seed, keys, scores, units) {
  return {
    meta: { seed, suites: { s: { protocol: "single-shot", protocol_label: "open", sha256: "x", profile: null, slices: ["t1"],
      metrics: { m: [1, 0, 1, "", "", null], pooled: [1, 0, 1, "", "", null], total: [1, null, null, "", "", null] } } } },
    items: { s: { items: keys, strata: keys.map(() => 0), labels: ["t1"], scores, units: units || {} } },
  };
}
const METRICS = {
  m: { kind: "mean", sources: [["m", 100]], binary: true, direction: 1, digits: 1 },
  pooled: { kind: "mean", sources: [["pooled", 1]], binary: false, direction: 1, digits: 3 },
  total: { kind: "sum", sources: [["total", 1]], binary: false, direction: 0, digits: 0 },
};

test("two runs pair by item key; what one run has alone is counted, not compared", () => {
  const base = run(0, [0, 1, 2, 3], { m: [1, 0, 0, 1], pooled: [0.5, 1, 0, 0.5], total: [1, 2, 3, 4] }, { pooled: [[1, 2], null, null, null] });
  const next = run(0, [1, 2, 3, 4], { m: [1, 1, 0, 0], pooled: [1, 0.5, 0, 1], total: [1, 1, 1, 1] });
  const result = paired.compare(base, next, METRICS, CONSTANTS);
  assert.strictEqual(result.onlyBase, 1);
  assert.strictEqual(result.onlyNew, 1);
  const all = Object.fromEntries(result.rows.filter((r) => r.slice === "all").map((r) => [r.metric, r]));
  assert.strictEqual(all.m.n, 3);
  assert.strictEqual(all.m.test, "mcnemar");
  assert.ok(Math.abs(all.m.diff - 100 / 3) < 1e-9);
  assert.deepStrictEqual([all.m.wins, all.m.ties, all.m.losses], [2, 0, 1]);
  assert.strictEqual(all.total.reason, "a total, not a per-item score");
  assert.strictEqual(all.pooled.test, "permutation"); // items 1-3 of the base have no units: one unit each
  assert.deepStrictEqual(paired.cells(all.m, 1).slice(0, 3), ["33.3", "66.7", "+33.3"]);
});

test("a metric n/a in a run, or a suite under another protocol, is not compared, with why", () => {
  const base = run(0, [0], { m: [1] });
  const next = run(0, [0], { m: [1] });
  base.meta.suites.s.metrics.m = [null, null, null, "n/a", "no reader", "no reader configured"];
  const rows = paired.compare(base, next, METRICS, CONSTANTS).rows;
  assert.strictEqual(rows.find((r) => r.metric === "m").reason, "n/a in the base run: no reader configured");
  base.meta.suites.s.protocol = "interactive";
  base.meta.suites.s.protocol_label = "interactive";
  const other = paired.compare(base, next, METRICS, CONSTANTS);
  assert.deepStrictEqual(other.rows, []);
  assert.deepStrictEqual(other.notes, ["s: not compared: the base run's protocol is interactive; this run's, open"]);
});

test("numbers print as view.py prints them", () => {
  assert.strictEqual(paired.signed(-0.00001, 1), "-0.0");
  assert.strictEqual(paired.signed(-0, 1), "-0.0");
  assert.strictEqual(paired.signed(0, 3), "+0.000");
  assert.strictEqual(paired.pValue(0.0004), "<0.001");
  assert.strictEqual(paired.pValue(0.0625), "0.062"); // a tie in binary: to even, as Python's format
  assert.strictEqual(paired.pValue(0.0635), "0.064"); // no tie: 0.0635 is a little above
  assert.strictEqual(paired.signed(0.125, 2), "+0.12");
  assert.strictEqual(paired.signed(-0.375, 2), "-0.38");
  assert.strictEqual(paired.signed(2.5, 0), "+2");
  assert.strictEqual(paired.pValue(null), "");
});

test("runs stand one a slot, or one slot a commit with its runs side by side", () => {
  const list = [{ commit: "aaaaaaaaaa" }, { commit: "aaaaaaaaaa" }, { commit: null }, { commit: "bbbbbbbbbb" }];
  assert.deepStrictEqual(trends.slots(list, "runs"), { x: [0, 1, 2, 3], labels: ["#1", "#2", "#3", "#4"] });
  const byCommit = trends.slots(list, "commits");
  assert.deepStrictEqual(byCommit.labels, ["aaaaaaaa", "no commit", "bbbbbbbb"]);
  assert.deepStrictEqual(byCommit.x.map((v) => Math.round(v * 10) / 10), [-0.3, 0.3, 1, 2]);
});

test("a change of data, protocol or scorer is said at the run that made it", () => {
  const s = (sha256, protocol, profile) => ({ sha256, protocol, protocol_label: protocol, profile });
  const list = [{ suites: { a: s("1", "p", "alce") } }, { suites: { a: s("1", "p", "alce") } },
    { suites: { b: s("9", "p", null) } }, { suites: { a: s("2", "q", "asqa") } }];
  assert.deepStrictEqual(runs.changes(list), [[], [], [], ["a: other data", "a: protocol q", "a: scored as asqa"]]);
  assert.deepStrictEqual(trends.dataChanges(list, "a"), [3]);
});

test("the first click picks the base, the second the run compared with it, a third starts again", () => {
  assert.deepStrictEqual(history.picked(null, null, 3), [3, null]);
  assert.deepStrictEqual(history.picked(3, null, 5), [3, 5]);
  assert.deepStrictEqual(history.picked(3, null, 3), [3, null]);
  assert.deepStrictEqual(history.picked(3, 5, 1), [1, null]);
});

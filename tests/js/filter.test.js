// filter.js: which items the list keeps and in which order.
const test = require("node:test");
const assert = require("node:assert");
const { filter } = require("../../pytest_ambigqa/report/assets/js/filter.js");

function item(key, fields) {
  return Object.assign({ key, suite: "march", type: "semantic", status: "ok", scores: {}, unscored: [],
    spread: 0, duration: 1, change: null, regressed: false }, fields);
}
const ITEMS = [
  item("a", { scores: { str_em: 100 }, duration: 2 }),
  item("b", { type: "syntactic", scores: { str_em: 0 }, spread: 1, change: -1, regressed: true }),
  item("c", { status: "error", scores: { str_em: 0 }, duration: 5, change: 0 }),
  item("d", { suite: "asqa", type: null, scores: {}, unscored: ["str_em"], duration: 0.5 }),
  item("e", { scores: { str_em: 50 }, change: -0.5 }),
];
const ANY = { q: "", suite: "", type: "", status: "", metric: "str_em", min: null, max: null, disagree: false, regressed: false };
const keep = (f, haystack) => filter.keep(ITEMS, Object.assign({}, ANY, f), haystack || (() => ""));
const keys = (indices) => indices.map((i) => ITEMS[i].key).join("");

test("no filter keeps every item, in file order", () => {
  assert.strictEqual(keys(keep({})), "abcde");
});

test("suite, type and status filters", () => {
  assert.strictEqual(keys(keep({ suite: "asqa" })), "d");
  assert.strictEqual(keys(keep({ type: "syntactic" })), "b");
  assert.strictEqual(keys(keep({ status: "error" })), "c");
  assert.strictEqual(keys(keep({ status: "unscored" })), "d");
});

test("a score range keeps items with a score within it, bounds included", () => {
  assert.strictEqual(keys(keep({ max: 0 })), "bc");
  assert.strictEqual(keys(keep({ min: 50 })), "ae");
  assert.strictEqual(keys(keep({ min: 10, max: 60 })), "e");
  assert.strictEqual(keys(keep({ min: 0, metric: "length" })), ""); // no item has the metric
});

test("judge disagreement, regressions and search", () => {
  assert.strictEqual(keys(keep({ disagree: true })), "b");
  assert.strictEqual(keys(keep({ regressed: true })), "b");
  const asked = [];
  const haystack = (i) => { asked.push(i); return ITEMS[i].key === "c" ? "the system fell over" : ""; };
  assert.strictEqual(keys(keep({ q: "fell over" }, haystack)), "c");
  assert.strictEqual(keys(keep({ suite: "asqa", q: "x" }, (i) => { asked.push(-i); return ""; })), "");
  assert.deepStrictEqual(asked.slice(-1), [-3]); // searched only what the other filters kept
});

test("sorting: by metric either way with unscored items last, by duration, by change", () => {
  const sorted = (how, metric) => keys(filter.sort(ITEMS, [0, 1, 2, 3, 4], how, metric || "str_em"));
  assert.strictEqual(sorted("file"), "abcde");
  assert.strictEqual(sorted("asc"), "bcead"); // ties in file order, no score last
  assert.strictEqual(sorted("desc"), "aebcd");
  assert.strictEqual(sorted("duration"), "cabed");
  assert.strictEqual(sorted("change"), "becad"); // worst first, none last
});

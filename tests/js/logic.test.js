// The pure parts of the page's drawing: plot axes and verdicts, highlight spans, the address.
const test = require("node:test");
const assert = require("node:assert");
const root = "../../pytest_ambigqa/report/assets/js/";
const { plots } = require(root + "plots.js");
const { detail } = require(root + "detail.js");
const { main } = require(root + "main.js"); // under Node it defines, and starts nothing

test("a metric's axis is its scale, else the values' span with 0 and some room", () => {
  assert.deepStrictEqual(plots.axis([0, 100], [150]), [0, 100]);
  assert.deepStrictEqual(plots.axis(null, [2, 4, null, undefined]), [0, 4.6]);
  const [low, high] = plots.axis(null, [-1, 0.5]);
  assert.ok(low < -1 && high > 0.5);
  assert.deepStrictEqual(plots.axis(null, [0, 0]), [0, 1]);
});

test("a change is better or worse only when its interval leaves 0 in the metric's direction", () => {
  assert.strictEqual(plots.verdict({ direction: 1, diff: -20, low: -30, high: -10 }), " worse");
  assert.strictEqual(plots.verdict({ direction: 1, diff: 20, low: 10, high: 30 }), " better");
  assert.strictEqual(plots.verdict({ direction: -1, diff: 20, low: 10, high: 30 }), " worse");
  assert.strictEqual(plots.verdict({ direction: 1, diff: -1, low: -3, high: 1 }), "");
  assert.strictEqual(plots.verdict({ direction: 0, diff: 9, low: 8, high: 10 }), ""); // a length: neither
});

test("overlapping highlight spans fold into the first", () => {
  assert.deepStrictEqual(detail.mergeSpans([[0, 4, 0], [2, 6, 1], [8, 9, 1]]), [[0, 6, 0], [8, 9, 1]]);
  assert.deepStrictEqual(detail.mergeSpans([[0, 4, 0], [4, 6, 1]]), [[0, 4, 0], [4, 6, 1]]);
  assert.deepStrictEqual(detail.mergeSpans(undefined), []);
});

test("the address names an item, and a malformed one names none", () => {
  assert.strictEqual(main.itemFromHash("#item=march-sem-01"), "march-sem-01");
  assert.strictEqual(main.itemFromHash("#item=a%20b%E2%80%AE"), "a b\u202e");
  assert.strictEqual(main.itemFromHash("#item=%E0%A4%A"), null);
  assert.strictEqual(main.itemFromHash("#other"), null);
  assert.strictEqual(main.itemFromHash(""), null);
});

test("the list scrolls an item opened from the address into view, and only when it is out of view", () => {
  const { list } = require(root + "list.js");
  assert.strictEqual(list.reveal(3, 0, 300), null); // rows 0-9 are in view
  assert.strictEqual(list.reveal(9, 0, 300), null);
  assert.strictEqual(list.reveal(10, 0, 300), 165); // centred: 10 * 30 - (300 - 30) / 2
  assert.strictEqual(list.reveal(9999, 0, 600), 9999 * 30 - 285);
  assert.strictEqual(list.reveal(2, 3000, 300), 0); // above the view: back up, never below 0
  assert.strictEqual(list.reveal(-1, 0, 300), null); // filtered out: stay
});

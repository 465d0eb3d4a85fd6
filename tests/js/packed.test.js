// packed.js: the page's packed data blocks (JSON, deflated, base64) read back as the writer
// packed them, with the engine's own DecompressionStream.
const test = require("node:test");
const assert = require("node:assert");
const zlib = require("node:zlib");
const { packed } = require("../../pytest_ambigqa/report/assets/js/packed.js");

// report/html.py's ``Packed`` of ``[{"key": "march-sem-01", "question": "Who? \u2028 🎉 </script>", "n": 1.5}]``
const FROM_PYTHON = "eJyLrlbKTq1UslJQyk0sSs7QLU7N1TUwVNJRUCosTS0uyczPA8mFZ+TbKzxqWKHwYX5fp4KNfnFyUWZBiR1IGUjeUM+0NhYAkKYYNA==";

test("a block the Python writer packed reads back whole: astral characters, line separators, markup", async () => {
  const value = JSON.parse(await packed.text(FROM_PYTHON));
  assert.deepStrictEqual(value, [{ key: "march-sem-01", question: "Who? \u2028 🎉 </script>", n: 1.5 }]);
});

test("megabytes of items inflate to the same text", async () => {
  const items = Array.from({ length: 20000 }, (_, n) => ({ key: "march-sem-" + n, question: "Which one? " + "é".repeat(n % 7), scores: { str_em: n % 3 } }));
  const text = JSON.stringify(items);
  const block = zlib.deflateSync(Buffer.from(text, "utf-8"), { level: 1 }).toString("base64");
  assert.ok(block.length < text.length / 4);
  assert.strictEqual(await packed.text(block), text);
});

test("base64 decodes to the bytes it encodes, by atob where the engine has no Uint8Array.fromBase64", () => {
  const bytes = Buffer.from(Array.from({ length: 256 }, (_, n) => n));
  assert.deepStrictEqual(Buffer.from(packed.bytes(bytes.toString("base64"))), bytes);
  assert.deepStrictEqual(Buffer.from(packed.bytes("")), Buffer.alloc(0));
});

test("a damaged block is an error, never a part of the data", async () => {
  const block = zlib.deflateSync(Buffer.from(JSON.stringify({ a: 1 }))).toString("base64");
  await assert.rejects(packed.text(block.slice(0, block.length - 8)));
  await assert.rejects(packed.text("bm90IGRlZmxhdGVk")); // "not deflated"
});

// The page's load (main.js) over packed blocks, with a stand-in for the document.
const { main } = require("../../pytest_ambigqa/report/assets/js/main.js");
const pack = (value) => zlib.deflateSync(Buffer.from(JSON.stringify(value), "utf-8")).toString("base64");

test("the page draws from its items before their details are in, and what needs a detail waits for it once", async () => {
  const data = { comparison: null, metrics: {}, reasons: ["no judge"] };
  const items = [{ key: "march-a", question: "Which one?", shown: { str_em: "100.0" } }, { key: "march-b", question: "", shown: {} }];
  const details = [{ answer: { text: "That one." }, gold: { interpretations: [] } }, { unscored: { judge_f1: 0 }, error: "boom" }];
  const blocks = { "ambigqa-data": JSON.stringify(data), "ambigqa-items": pack(items), "ambigqa-details": pack(details) };
  const page = await main.load({ getElementById: (id) => ({ textContent: blocks[id] }) });
  assert.deepStrictEqual(page.items, items);
  const first = page.withDetails(() => page.detailOf(0));
  assert.ok(first instanceof Promise); // the details wait to be unpacked
  const pending = Symbol("pending"); // nothing inflates them but unpack
  assert.strictEqual(await Promise.race([first, new Promise((resolve) => setTimeout(resolve, 50, pending))]), pending);
  page.unpack();
  const d = await first;
  // What the item's row has is put back: its shown scores, its question
  assert.deepStrictEqual(d, { answer: { text: "That one." }, gold: { interpretations: [], question: "Which one?" },
    scores: { str_em: "100.0" }, unscored: {}, samples: {} });
  // Once in, at once; the reasons by index
  assert.deepStrictEqual(page.withDetails(() => page.detailOf(1).unscored), { judge_f1: "no judge" });
  assert.strictEqual(page.haystack(1), "march-b\n\n\nboom");
});

// format.js: ids with their invisible characters named.
const test = require("node:test");
const assert = require("node:assert");
const { format } = require("../../pytest_ambigqa/report/assets/js/format.js");

test("invisible characters in ids are named by code point", () => {
  const ids = {
    "F1\u034f": "F1⟨U+034F⟩", // combining grapheme joiner
    "F1\ufe0f": "F1⟨U+FE0F⟩", // variation selector
    "F1\u{e0031}": "F1⟨U+E0031⟩", // a tag character, beyond the BMP
    "F1\u2028": "F1⟨U+2028⟩",
    "F1\u3164": "F1⟨U+3164⟩", // Hangul filler
    "F\u00a01": "F⟨U+00A0⟩1",
    "F3\u202e": "F3⟨U+202E⟩",
    "a\tb": "a⟨U+0009⟩b",
    "a b": "a b",
    "café 🎉": "café 🎉",
  };
  for (const [id, shown] of Object.entries(ids)) assert.strictEqual(format.visible(id), shown);
  assert.strictEqual(format.visible(12), "12");
});

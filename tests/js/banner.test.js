// report.html's header banner (main.js), drawn into a stand-in for the document: what failed
// first (errored or missing items), then the gates' verdict; "No gates set" where none was.
const test = require("node:test");
const assert = require("node:assert");
const root = "../../pytest_ambigqa/report/assets/js/";

function node(tag) {
  return {
    tag, className: "", textContent: "", dataset: {}, attributes: {}, children: [],
    setAttribute(k, v) { this.attributes[k] = v; },
    addEventListener() {},
    appendChild(c) { this.children.push(c); return c; },
  };
}
globalThis.document = { createElement: node, createTextNode: (t) => ({ tag: "#text", textContent: t, children: [] }), getElementById: () => null };
require(root + "dom.js");
const { main } = require(root + "main.js");

function text(n) { return n.textContent + n.children.map(text).join(""); }
function banner(gates) {
  const data = { system: "s", facts: [], gates: Object.assign({ shortfalls: [], deferred: null, unanswered: null, checks: { head: [], rows: [] } }, gates) };
  return main.header({ data }).children.filter((c) => c.attributes.id === "gates" || c.attributes.id === "unanswered");
}

test("a run with no gate set says so, under its errored items", () => {
  const shown = banner({ set: false, unanswered: "13 items errored or missing: their tests fail, and so does the run" });
  assert.deepStrictEqual(shown.map((n) => n.attributes.id), ["unanswered", "gates"]);
  assert.strictEqual(text(shown[1]), "No gates set");
  assert.strictEqual(shown[1].className, "gate none");
});

test("failed gates list their lines, after the errored items; passed ones say passed", () => {
  const failed = banner({ set: true, shortfalls: ["march str_em (STR-EM) mean 84.62 < 90"], unanswered: "1 item errored or missing" });
  assert.deepStrictEqual(failed.map((n) => n.attributes.id), ["unanswered", "gates"]);
  assert.ok(text(failed[1]).startsWith("Gates FAILED") && text(failed[1]).includes("84.62 < 90"));
  assert.strictEqual(text(banner({ set: true })[0]), "Gates passed");
});

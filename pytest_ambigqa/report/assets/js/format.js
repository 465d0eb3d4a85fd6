// report.html, format: the little text the page makes itself. Every number it shows comes
// formatted from Python (report/view.py); here only ids made visible.
(function (/** @type {any} the scripts' namespace (page.d.ts) */ ns) {
  "use strict";
  // Identifiers (item keys, citations, passage ids) with their invisible characters named:
  // none may hide in an id or reorder the text around it. Controls, format characters, line
  // and paragraph separators, spaces other than U+0020, default-ignorables (variation
  // selectors, fillers, tag characters): by code point, astral ones included.
  const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Default_Ignorable_Code_Point}]/gu;
  function visible(id) {
    return String(id).replace(INVISIBLE, (c) => c === " " ? c : "⟨U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") + "⟩");
  }
  ns.format = { visible };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

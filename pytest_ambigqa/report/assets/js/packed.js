// report.html, packed: the data blocks the writer packed (report/html.py, ``packed``): JSON,
// deflated (zlib's format) and base64-encoded. Inflated by the browser's own
// DecompressionStream, no library; nothing is fetched nor made a URL, so the page's
// Content-Security-Policy needs no source for it.
(function (ns) {
  "use strict";
  // base64 to bytes: the engine's own decoder where it has one (Chromium 140, Firefox 133),
  // else atob's binary string, byte by byte.
  function bytes(base64) {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(base64);
    const binary = atob(base64);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  }
  // The text a packed block holds (a Promise): its bytes inflated, read as UTF-8.
  function text(base64) {
    const stream = new Blob([bytes(base64)]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).text();
  }
  ns.packed = { bytes, text };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

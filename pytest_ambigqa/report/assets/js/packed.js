// report.html, packed: the data blocks the writer packed (report/html.py, ``packed``): JSON,
// deflated (zlib's format) and base64-encoded. Inflated by the browser's own
// DecompressionStream, no library; nothing is fetched nor made a URL, so the page's
// Content-Security-Policy needs no source for it.
(function (/** @type {any} the scripts' namespace (page.d.ts) */ ns) {
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
  const SLICE = 1 << 18; // bytes inflated between two turns of the page's thread
  // The text a packed block holds (a Promise): its bytes inflated, read as UTF-8. A slice at a
  // time, the page's thread let go between slices: 100,000 items' details inflated whole hold
  // it for a second and more (no click, no scroll), sliced for a tenth of that at most.
  async function text(base64) {
    const data = bytes(base64);
    const inflate = new DecompressionStream("deflate");
    const writer = inflate.writable.getWriter();
    const feed = async () => {
      for (let at = 0; at < data.length; at += SLICE) {
        await writer.write(data.subarray(at, at + SLICE));
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      await writer.close();
    };
    const [out] = await Promise.all([new Response(inflate.readable).text(), feed()]);
    return out;
  }
  ns.packed = { bytes, text };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

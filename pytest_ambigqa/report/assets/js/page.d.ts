// The page script's own shapes (written by hand), over the generated types of its data
// (payload.d.ts, from the JSON Schema: never edited). jsconfig.json checks the scripts
// against both with `tsc --checkJs`.
import type { Detail, ItemRow, MetricInfo, Payload, Regression } from "./payload";

declare global {
  // The scripts' namespace: each file adds its part (ns.dom, ns.list, ...).
  var ambigqa: any;
  // Newer browsers' base64 decoder, used where there is one (packed.js).
  interface Uint8ArrayConstructor {
    fromBase64?(text: string): Uint8Array;
  }
}

// What every part of the page shares (main.js's load).
export interface Page {
  data: Payload;
  items: ItemRow[];
  diffs: Map<string, Regression["diff"]>; // each regression's word diff, by item key
  metric(m: string): Partial<MetricInfo> & { label: string }; // a metric this version does not know: its name
  detailOf(i: number): Detail;
  [more: string]: any;
}

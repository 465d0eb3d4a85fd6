// report.html, list: the Items tab: the filters, a virtualised list (only the rows in view
// exist, for 10,000 items), the detail of the item chosen.
(function (/** @type {any} the scripts' namespace (page.d.ts) */ ns) {
  "use strict";
  const ROW = 30; // px, as --row in report.css

  // Where the list must scroll for its ``n``th row to be in view (it is centred), or null
  // when it already is: an item opened from the address or another tab is shown in its place.
  function reveal(n, scrollTop, height) {
    if (n < 0 || (n * ROW >= scrollTop && (n + 1) * ROW <= scrollTop + height)) return null;
    return Math.max(0, Math.round(n * ROW - (height - ROW) / 2));
  }

  /** @param {import("./page").Page} page */
  function items(page) {
    const { el } = ns.dom;
    const ITEMS = page.items;
    const option = (value, text) => el("option", { value: value, text: text });
    const metrics = [...new Set(page.data.suites.flatMap((s) => s.metrics.map((m) => m.metric)))]
      .filter((m) => ITEMS.some((it) => m in it.scores));
    const types = [...new Set(ITEMS.map((it) => it.type).filter(Boolean))];
    const comparing = page.data.comparison !== null;
    const controls = {
      search: el("input", { type: "search", placeholder: "search id, question, answer, error", id: "search" }),
      suite: el("select", { id: "f-suite" }, option("", "every suite"), page.data.suites.map((s) => option(s.name, s.name))),
      type: el("select", { id: "f-type" }, option("", "every type"), types.map((t) => option(t, t))),
      status: el("select", { id: "f-status" }, option("", "any status"), option("ok", "answered"),
        option("error", "errors"), option("missing", "missing"), option("unscored", "with an unscored metric")),
      metric: el("select", { id: "f-metric" }, metrics.map((m) => option(m, page.metric(m).label))),
      min: el("input", { type: "number", id: "f-min", placeholder: "min", step: "any" }),
      max: el("input", { type: "number", id: "f-max", placeholder: "max", step: "any" }),
      disagree: el("input", { type: "checkbox", id: "f-disagree" }),
      regressed: el("input", { type: "checkbox", id: "f-regressed" }),
      sort: el("select", { id: "f-sort" }, option("file", "file order"), option("asc", "metric, low first"),
        option("desc", "metric, high first"), option("duration", "slowest first"),
        comparing ? option("change", "change vs base, worst first") : null),
      count: el("span", { class: "meta", id: "count" }),
    };
    const bound = (input) => input.value === "" ? null : Number(input.value);

    const list = {
      order: ITEMS.map((_, i) => i),
      selected: null,
      refilter() {
        // A search reads the items' details: it waits for them once, while they unpack.
        if (controls.search.value.trim()) page.withDetails(() => this.apply());
        else this.apply();
      },
      apply() {
        const metric = controls.metric.value;
        const keep = ns.filter.keep(ITEMS, {
          q: controls.search.value.trim().toLowerCase(), suite: controls.suite.value, type: controls.type.value,
          status: controls.status.value, metric: metric, min: bound(controls.min), max: bound(controls.max),
          disagree: controls.disagree.checked, regressed: controls.regressed.checked,
        }, page.haystack);
        this.order = ns.filter.sort(ITEMS, keep, controls.sort.value, metric);
        controls.count.textContent = keep.length + " of " + ITEMS.length + " items";
        this.spacer.style.height = keep.length * ROW + "px";
        this.box.scrollTop = 0;
        this.draw();
      },
      draw() {
        if (!this.box || !this.box.clientHeight) return;
        const first = Math.max(0, Math.floor(this.box.scrollTop / ROW) - 5);
        const last = Math.min(this.order.length, first + Math.ceil(this.box.clientHeight / ROW) + 10);
        const metric = controls.metric.value;
        const rows = [];
        for (let n = first; n < last; n++) {
          const i = this.order[n];
          const it = ITEMS[i];
          const key = ns.format.visible(it.key);
          const row = el("div", { class: "row" + (this.selected === i ? " selected" : ""), dataset: { key: it.key },
            onclick: () => this.open(i) },
            el("span", { class: "key", text: key, title: key }),
            it.type ? el("span", { class: "badge", text: it.type }) : null,
            it.status !== "ok" ? el("span", { class: "badge " + it.status, text: it.status }) : null,
            it.regressed ? el("span", { class: "badge worse", text: "regressed" }) : null,
            el("span", { class: "q", text: it.question }),
            el("span", { class: "v", text: it.shown[metric] || "–" }));
          row.style.top = n * ROW + "px";
          rows.push(row);
        }
        this.spacer.replaceChildren(...rows);
      },
      // Every filter back to its default: the whole list, in file order.
      reset() {
        for (const c of Object.values(controls)) {
          if (c.type === "checkbox") c.checked = false;
          else if (c.tagName === "SELECT") c.selectedIndex = 0;
          else if (c.tagName === "INPUT") c.value = "";
        }
        this.refilter();
      },
      // Show item i: the filters make way for an item they hide (one opened from the
      // address or another tab), and the list scrolls to it.
      open(i) {
        if (this.order.indexOf(i) < 0) this.reset();
        this.selected = i;
        const top = this.box.clientHeight ? reveal(this.order.indexOf(i), this.box.scrollTop, this.box.clientHeight) : null;
        if (top !== null) this.box.scrollTop = top;
        this.draw();
        page.withDetails(() => {
          this.detail.replaceChildren(...ns.detail.itemDetail(page, i));
          this.detail.scrollTop = 0;
        });
        const hash = "#item=" + encodeURIComponent(ITEMS[i].key);
        if (location.hash !== hash) history.replaceState(null, "", hash);
      },
    };

    const out = el("section", { id: "items" });
    out.appendChild(el("div", { class: "controls" }, controls.search, controls.suite, controls.type, controls.status,
      el("label", {}, "metric", controls.metric), el("label", {}, "from", controls.min), el("label", {}, "to", controls.max),
      el("label", { title: "judge samples of an item disagree" }, controls.disagree, "judge disagreement"),
      comparing ? el("label", {}, controls.regressed, "regressions") : null,
      el("label", {}, "sort", controls.sort), controls.count));
    for (const c of Object.values(controls)) {
      if (c.tagName === "INPUT" || c.tagName === "SELECT") c.addEventListener("input", () => list.refilter());
    }
    list.spacer = el("div", { class: "spacer" });
    list.box = el("div", { class: "list", id: "list" }, list.spacer);
    list.box.addEventListener("scroll", () => list.draw(), { passive: true });
    list.detail = el("div", { class: "detail", id: "detail" }, el("p", { class: "empty", text: "Choose an item to see its question, gold readings, answer and scores." }));
    out.appendChild(el("div", { class: "items" }, list.box, list.detail));
    page.list = list;
    return out;
  }
  items.reveal = reveal;
  ns.list = items;
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

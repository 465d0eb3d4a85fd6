// history.html, history: reads the data, draws the header, the trends and the runs, and
// compares the two runs the reader picks. Runs last, and only in a page that has the data.
(function (ns) {
  "use strict";

  // The next pair after a click on run n: the first click picks the base, the second the
  // new run; a third starts again. Returns [base, next] (next null until there is a pair).
  function picked(base, next, n) {
    if (base === null || next !== null || n === base) return [n, null];
    return [base, n];
  }

  function load(doc) {
    const data = JSON.parse(doc.getElementById("ambigqa-history").textContent);
    const parsed = new Map();
    return {
      data,
      mode: "runs",
      base: null,
      next: null,
      metric: (m) => data.metrics[m] || { label: m },
      run(n) { // a run's items, parsed the first time it is compared
        if (!parsed.has(n)) parsed.set(n, { meta: data.runs[n], items: JSON.parse(doc.getElementById("ambigqa-run-" + n).textContent) });
        return parsed.get(n);
      },
    };
  }

  function header(page) {
    const { el } = ns.dom;
    const head = el("header", {}, el("h1", { text: "ambigqa history" }), el("div", { class: "meta", text: page.data.facts.filter(Boolean).join(" · ") }));
    if (page.data.skipped.length) {
      head.appendChild(el("div", { class: "gate fail", id: "skipped" }, page.data.skipped.length + " file(s) skipped",
        el("ul", {}, page.data.skipped.map((s) => el("li", { text: s.path + ": " + s.reason })))));
    }
    return head;
  }

  function start(doc) {
    const { el } = ns.dom;
    const page = load(doc);
    const runs = page.data.runs;
    const options = () => runs.map((run, n) => el("option", { value: n, text: run.label }));
    const baseSelect = el("select", { id: "base" }, el("option", { value: "", text: "—" }), options());
    const nextSelect = el("select", { id: "new" }, el("option", { value: "", text: "—" }), options());
    const hint = "Click two runs, a point or a row: the first is the base, the second is compared with it.";
    const compared = el("section", { id: "comparison" }, el("p", { class: "meta hint", text: hint }));
    let trends = null;
    const mark = () => {
      for (const node of doc.querySelectorAll("[data-run]")) {
        const n = Number(node.dataset ? node.dataset.run : node.getAttribute("data-run"));
        node.classList.toggle("base", n === page.base);
        node.classList.toggle("new", n === page.next);
      }
      baseSelect.value = page.base === null ? "" : String(page.base);
      nextSelect.value = page.next === null ? "" : String(page.next);
    };
    const show = () => {
      mark();
      compared.replaceChildren();
      if (page.base === null || page.next === null) {
        compared.appendChild(el("p", { class: "meta hint", text: page.base === null ? hint : "Base: " + runs[page.base].label + ". Now click the run to compare with it." }));
        return;
      }
      compared.appendChild(el("p", { class: "meta", id: "computing", text: "Comparing " + runs[page.next].label + " with " + runs[page.base].label + "…" }));
      const [base, next] = [page.base, page.next];
      setTimeout(() => { // let the page say so first: a comparison of thousands of items takes a moment
        if (page.base !== base || page.next !== next) return;
        compared.replaceChildren(ns.runs.comparison(page, base, next));
      }, 0);
    };
    const pick = (n) => { [page.base, page.next] = picked(page.base, page.next, n); show(); };
    const chosen = (select) => (select.value === "" ? null : Number(select.value));
    baseSelect.addEventListener("change", () => { page.base = chosen(baseSelect); show(); });
    nextSelect.addEventListener("change", () => { page.next = chosen(nextSelect); show(); });
    const axis = el("span", { class: "axis-mode" }, "x axis: ", ["runs", "commits"].map((mode) => el("label", {},
      el("input", { type: "radio", name: "mode", value: mode, checked: mode === page.mode,
        onchange: () => { page.mode = mode; const drawn = ns.trends.trends(page, pick); trends.replaceWith(drawn); trends = drawn; mark(); } }), mode)));
    doc.body.appendChild(header(page));
    const main = el("main", {});
    main.appendChild(el("div", { class: "controls" }, axis, el("label", {}, "base ", baseSelect), el("label", {}, "new ", nextSelect)));
    trends = ns.trends.trends(page, pick);
    main.appendChild(trends);
    main.appendChild(compared);
    main.appendChild(ns.runs.table(page, pick));
    doc.body.appendChild(main);
  }

  ns.history = { picked, start };
  if (typeof document !== "undefined" && document.getElementById("ambigqa-history")) start(document);
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

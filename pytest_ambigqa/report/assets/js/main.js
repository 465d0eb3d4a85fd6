// report.html, main: reads the data blocks, draws the header and the tabs, opens the item the
// address names. Runs last, and only in a page that has the data.
(function (/** @type {any} the scripts' namespace (page.d.ts) */ ns) {
  "use strict";
  // The item key an address names ("#item=<key>", URI-escaped); null for none or a malformed one.
  function itemFromHash(hash) {
    const wanted = /^#item=(.*)$/.exec(hash);
    if (!wanted) return null;
    try { return decodeURIComponent(wanted[1]); } catch (e) { return null; }
  }

  // Every gate evaluated, passed or not: value, bound and margin (how far inside the bound).
  /** @param {import("./payload").Table} table */
  function checks(table) {
    const { el } = ns.dom;
    const numeric = new Set(["value", "margin"]);
    return el("details", { id: "checks", open: true },
      el("summary", { text: table.rows.length + " gate(s) evaluated: value, bound and margin (how far the value lies inside its bound)" }),
      el("table", {}, el("tr", {}, table.head.map((h) => el("th", { class: numeric.has(h) ? "num" : null, text: h }))),
        table.rows.map((r) => el("tr", { class: r[r.length - 1] === "passed" ? "pass" : "fail" },
          r.map((cell, n) => el("td", { class: numeric.has(table.head[n]) ? "num" : null, text: cell }))))));
  }

  /** @param {import("./page").Page} page */
  function header(page) {
    const { el } = ns.dom;
    const data = page.data;
    const head = el("header", {},
      el("h1", { text: "ambigqa report" }),
      el("div", { class: "meta" }, "system: ", el("strong", { text: data.system || "?" })),
      el("div", { class: "meta", text: data.facts.join(" · ") }));
    const gates = data.gates;
    // What failed first: errored or missing items (their tests fail the run), then the gates.
    if (gates.unanswered) head.appendChild(el("div", { class: "gate fail", id: "unanswered", text: gates.unanswered }));
    if (gates.shortfalls.length) {
      head.appendChild(el("div", { class: "gate fail", id: "gates" }, "Gates FAILED",
        el("ul", {}, gates.shortfalls.map((s) => el("li", { text: s })))));
    } else if (gates.deferred) {
      head.appendChild(el("div", { class: "gate deferred", id: "gates", text: "Gates deferred: " + gates.deferred }));
    } else if (gates.set === false) {
      head.appendChild(el("div", { class: "gate none", id: "gates", text: "No gates set" }));
    } else {
      head.appendChild(el("div", { class: "gate pass", id: "gates", text: "Gates passed" }));
    }
    if (gates.checks.rows.length) head.appendChild(checks(gates.checks));
    return head;
  }

  // What every part of the page shares: the data, the items, their details, the tabs. The
  // items and their details are packed: the items are inflated before the first draw, the
  // details (nearly all of the page) once ``unpack`` is called (start: when the first draw is
  // on the screen) and parsed when one is first needed; what needs them waits for them once
  // (``withDetails``).
  async function load(doc) {
    /** @type {import("./payload").Payload} */
    const data = JSON.parse(doc.getElementById("ambigqa-data").textContent);
    const block = (id) => ns.packed.text(doc.getElementById(id).textContent);
    /** @type {import("./payload").ItemRow[]} */
    const items = JSON.parse(await block("ambigqa-items"));
    let text = null;
    let unpack;
    // Settles once the details are inflated (rejects if they cannot be).
    const inflated = new Promise((resolve) => { unpack = resolve; })
      .then(() => block("ambigqa-details")).then((t) => { text = t; });
    /** @type {import("./payload").Detail[]} */
    const details = [];
    /** @type {import("./payload").Detail[] | null} */
    let parsed = null;
    const hay = [];
    /** @type {import("./page").Page} */
    const page = {
      data: data,
      items: items,
      diffs: new Map((data.comparison ? data.comparison.regressions : []).map((r) => [r.key, r.diff])),
      metric: (m) => data.metrics[m] || { label: m },
      details: inflated,
      unpack: () => unpack(),
      // fn() now if the details are in, else once they are (a Promise of its value).
      withDetails(fn) { return text !== null ? fn() : inflated.then(fn); },
      detailOf(i) {
        if (details[i] === undefined) {
          if (parsed === null) parsed = JSON.parse(text);
          // Left out of the file: empty parts, and what the item's row has (its shown scores,
          // the question); the reasons are indices.
          const d = Object.assign({ scores: items[i].shown, unscored: {}, samples: {} }, parsed[i]);
          if (d.gold) d.gold.question = items[i].question;
          for (const m of Object.keys(d.unscored)) d.unscored[m] = data.reasons[d.unscored[m]];
          details[i] = d;
        }
        return details[i];
      },
      haystack(i) { // lower-cased search text per item, built on the first search
        if (hay[i] === undefined) {
          const it = items[i];
          const d = page.detailOf(i);
          hay[i] = [it.key, it.question, d.answer ? d.answer.text : "", d.error || ""].join("\n").toLowerCase();
        }
        return hay[i];
      },
    };
    return page;
  }

  async function start(doc) {
    const { el } = ns.dom;
    let page;
    try {
      page = await load(doc);
    } catch (error) {
      doc.body.appendChild(el("p", { class: "warn", id: "unpack-failed", text: "This report could not unpack its items (" +
        error + "): it needs a browser with DecompressionStream (Chrome 80, Firefox 113, Safari 16.4). " +
        "scorecard.md beside it has the same numbers as text." }));
      return;
    }
    const tabs = [["overview", "Overview", ns.overview], ["items", "Items (" + page.items.length + ")", ns.list]];
    if (page.data.comparison) tabs.push(["comparison", "Comparison", ns.comparison]);
    const sections = {}, buttons = {};
    page.showTab = (name) => {
      for (const [key] of tabs) {
        sections[key].hidden = key !== name;
        buttons[key].classList.toggle("active", key === name);
      }
      if (name === "items") page.list.draw();
    };
    doc.body.appendChild(header(page));
    const nav = el("nav", {});
    const main = el("main", {});
    for (const [key, text, draw] of tabs) {
      sections[key] = draw(page);
      buttons[key] = el("button", { id: "tab-" + key, text: text, onclick: () => page.showTab(key) });
      nav.appendChild(buttons[key]);
      main.appendChild(sections[key]);
    }
    doc.body.appendChild(nav);
    doc.body.appendChild(main);
    // Busy until the details are in: a search or an item opened before then waits for them.
    // They inflate once the first draw is on the screen (after the next frame): inflating
    // holds the page's thread, and would hold the first draw back.
    main.setAttribute("aria-busy", "true");
    page.details.then(() => main.removeAttribute("aria-busy"), (error) => main.prepend(el("p", { class: "warn",
      id: "unpack-failed", text: "This report could not unpack its items' details (" + error + ")." })));
    requestAnimationFrame(() => setTimeout(page.unpack));
    window.addEventListener("resize", () => page.list.draw());
    page.showTab("overview");
    page.list.refilter();
    // #item=<key> opens an item, at load and when the address changes; a malformed one is ignored.
    const openFromHash = () => {
      const key = itemFromHash(location.hash);
      const n = key === null ? -1 : page.items.findIndex((it) => it.key === key);
      if (n >= 0) { page.showTab("items"); page.list.open(n); }
    };
    window.addEventListener("hashchange", openFromHash);
    openFromHash();
  }
  ns.main = { itemFromHash, load, start, header };
  if (typeof document !== "undefined" && document.getElementById("ambigqa-data")) start(document);
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

// pytest-ambigqa report.html: draws the scorecard from the JSON block beside this script.
// Every string from the data goes into the page as text (textContent), never as markup.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("ambigqa-data").textContent);
  const METRICS = DATA.metrics;
  const SVGNS = "http://www.w3.org/2000/svg";
  const ROW = 30; // px, as --row in report.css
  const COMPARISON = DATA.comparison;
  const REGRESSIONS = new Map((COMPARISON ? COMPARISON.regressions : []).map((r) => [r.key, r]));

  // ---- small helpers

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (k === "dataset") Object.assign(node.dataset, v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    append(node, children);
    return node;
  }
  function append(node, children) {
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  function svg(tag, attrs) {
    const node = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, String(v));
    }
    return node;
  }
  // Identifiers (item keys, citations, passage ids) with their invisible characters named:
  // none may hide in an id or reorder the text around it. Controls, format characters, line
  // and paragraph separators, spaces other than U+0020, default-ignorables (variation
  // selectors, fillers, tag characters): by code point, astral ones included.
  const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Default_Ignorable_Code_Point}]/gu;
  function visible(id) {
    return String(id).replace(INVISIBLE, (c) => c === " " ? c : "⟨U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") + "⟩");
  }
  function label(metric) {
    return METRICS[metric] ? METRICS[metric].label : metric;
  }
  // Numbers as Python prints them in the terminal and scorecard.md: toFixed rounds an exact
  // tie (0.0625 to 3 decimals) up, Python's format to the even digit; -0 keeps its sign.
  function fixed(value, decimals) {
    if (Object.is(value, -0)) return "-" + (0).toFixed(decimals);
    const units = Math.abs(value) * 2 ** (decimals + 1);  // odd: a tie, "5" at decimals + 1 exactly
    if (Number.isInteger(units) && units % 2 === 1) {
      const cut = Math.abs(value).toFixed(decimals + 1).slice(0, -1).replace(/\.$/, "");
      if (Number(cut[cut.length - 1]) % 2 === 0) return (value < 0 ? "-" : "") + cut;
    }
    return value.toFixed(decimals);
  }
  // Python's format(value, "g"), for totals: six significant digits, exponent form below 1e-4
  // and from 1e6 on, trailing zeros out. Below 1e6 a tie is rounded by fixed(); above, only an
  // integer can be a tie (a double is never half a unit of a decimal place below 1).
  function general(value) {
    if (!Number.isFinite(value)) return Number.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf";
    if (value === 0) return Object.is(value, -0) ? "-0" : "0";
    const trim = (t) => t.includes(".") ? t.replace(/\.?0+$/, "") : t;
    let [mantissa, exp] = value.toExponential(5).split("e");
    if (Number(exp) >= -4 && Number(exp) < 6) return trim(fixed(value, 5 - Number(exp)));
    const digits = String(Math.abs(value));
    if (Number.isSafeInteger(value) && /^\d{5}[02468]50*$/.test(digits)) {
      mantissa = (value < 0 ? "-" : "") + digits[0] + "." + digits.slice(1, 6);  // a tie, to the even digit
      exp = "+" + (digits.length - 1);
    }
    return trim(mantissa) + "e" + (exp.startsWith("-") ? "-" : "+") + exp.replace(/^[-+]/, "").padStart(2, "0");
  }
  function fmt(value, metric) {
    if (value === null || value === undefined) return "n/a";
    if (typeof value !== "number") return String(value);
    const spec = METRICS[metric];
    const decimals = spec ? spec.digits : 1;
    return decimals === null ? general(value) : fixed(value, decimals);
  }
  function itemValue(value, metric) {
    // an item score (item scale) on the printed scale
    if (value === null || value === undefined) return null;
    const spec = METRICS[metric];
    return spec ? value * spec.factor : value;
  }
  function pfmt(p) {
    if (p === null || p === undefined) return "";
    return p < 0.001 ? "<0.001" : fixed(p, 3);
  }
  function signed(value, metric) {  // Python's "+" format: "+0.000" for 0, "-0.000" for -0
    const text = fmt(value, metric);
    return typeof value !== "number" || text.startsWith("-") ? text : "+" + text;
  }
  function direction(metric) {
    const spec = METRICS[metric];
    if (!spec || spec.higher === null || spec.higher === undefined) return 0;
    return spec.higher ? 1 : -1;
  }

  // ---- header and tabs

  function header() {
    const sys = DATA.system || {};
    const cfg = DATA.config || {};
    const bits = [
      "suites " + (cfg.suites || []).join(", "),
      cfg.protocol ? "protocol " + cfg.protocol : null,
      "seed " + cfg.seed,
      DATA.duration ? "ran " + DATA.duration.toFixed(1) + " s" : null,
      "written " + DATA.generated,
      DATA.versions ? "pytest-ambigqa " + DATA.versions["pytest-ambigqa"] : null,
    ].filter(Boolean);
    const head = el("header", {},
      el("h1", { text: "ambigqa report" }),
      el("div", { class: "meta" }, "system: ", el("strong", { text: sys.label || "?" })),
      el("div", { class: "meta", text: bits.join(" · ") }));
    const gates = DATA.gates || {};
    if (gates.shortfalls && gates.shortfalls.length) {
      head.appendChild(el("div", { class: "gate fail", id: "gates" }, "Gates FAILED",
        el("ul", {}, gates.shortfalls.map((s) => el("li", { text: s })))));
    } else if (gates.deferred) {
      head.appendChild(el("div", { class: "gate deferred", id: "gates", text: "Gates deferred: " + gates.deferred }));
    } else {
      head.appendChild(el("div", { class: "gate pass", id: "gates", text: "Gates passed" }));
    }
    const unanswered = DATA.suites.reduce((n, s) => n + s.errors + s.missing, 0);
    if (unanswered) {
      head.appendChild(el("div", { class: "gate fail", id: "unanswered",
        text: unanswered + (unanswered === 1 ? " item" : " items") + " errored or missing: " +
          (unanswered === 1 ? "its test fails" : "their tests fail") + ", and so does the run" }));
    }
    return head;
  }

  const TABS = [["overview", "Overview"], ["items", "Items (" + DATA.items.length + ")"]];
  if (COMPARISON) TABS.push(["comparison", "Comparison"]);
  const sections = {};
  const buttons = {};
  function showTab(name) {
    for (const [key] of TABS) {
      sections[key].hidden = key !== name;
      buttons[key].classList.toggle("active", key === name);
    }
    if (name === "items") list.draw();
  }

  // ---- plots

  // The axis of a metric: its scale, or for counts and totals the span of the values and 0.
  function axis(metric, values) {
    const spec = METRICS[metric] || {};
    if (spec.scale) return spec.scale;
    const shown = values.filter((v) => typeof v === "number");
    const low = Math.min(...shown, 0), high = Math.max(...shown, 0);
    const room = (high - low) * 0.15 || 1;
    return [low < 0 ? low - room : 0, high > 0 || low === 0 ? high + room : 0];
  }
  // One metric's interval on its axis, the published range as a band behind it.
  function intervalPlot(metric, summary, papers, width) {
    const w = width || 220, h = 22, pad = 4;
    const [min, max] = axis(metric, [summary.low, summary.high, summary.mean, papers && papers.low, papers && papers.high]);
    const x = (v) => pad + ((Math.max(min, Math.min(v, max)) - min) / (max - min)) * (w - 2 * pad);
    const root = svg("svg", { width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img" });
    root.appendChild(svg("line", { class: "axis", x1: pad, x2: w - pad, y1: h - 4, y2: h - 4 }));
    if (papers) {
      const band = svg("rect", { class: "band" + (papers.comparable ? "" : " nc"), x: x(papers.low), y: 3,
        width: Math.max(2, x(papers.high) - x(papers.low)), height: h - 9 });
      band.appendChild(svg("title", { text: "papers: " + papers.low + "–" + papers.high +
        (papers.comparable ? "" : " (not comparable: " + (papers.reason || "") + ")") }));
      root.appendChild(band);
    }
    if (summary.mean !== null && summary.mean !== undefined) {
      if (summary.low !== null && summary.low !== undefined) {
        root.appendChild(svg("line", { class: "ci", x1: x(summary.low), x2: x(summary.high), y1: h / 2 - 1, y2: h / 2 - 1 }));
      }
      root.appendChild(svg("circle", { class: "dot", cx: x(summary.mean), cy: h / 2 - 1, r: 3.5 }));
    }
    root.appendChild(svg("title", { text: label(metric) + " on " + fmt(min, metric) + " to " + fmt(max, metric) }));
    return root;
  }
  // A change and its interval on an axis symmetric about 0, the margin marked.
  function changePlot(row, margin) {
    const w = 180, h = 22, pad = 6;
    const extent = Math.max(Math.abs(row.low), Math.abs(row.high), margin || 0, 1e-9) * 1.1;
    const x = (v) => pad + ((v + extent) / (2 * extent)) * (w - 2 * pad);
    const root = svg("svg", { width: w, height: h, role: "img" });
    root.appendChild(svg("line", { class: "zero", x1: x(0), x2: x(0), y1: 2, y2: h - 2 }));
    const d = direction(row.metric); // 0: no better direction (a length), drawn neutral
    if (margin && d) root.appendChild(svg("line", { class: "margin", x1: x(-d * margin), x2: x(-d * margin), y1: 2, y2: h - 2 }));
    const better = d && (d * row.low > 0 || d * row.high < 0) ? (d * row.diff > 0 ? " better" : " worse") : "";
    root.appendChild(svg("line", { class: "ci" + better, x1: x(row.low), x2: x(row.high), y1: h / 2, y2: h / 2 }));
    root.appendChild(svg("circle", { class: "dot" + better, cx: x(row.diff), cy: h / 2, r: 3.5 }));
    return root;
  }

  // ---- overview

  function overview() {
    const out = el("section", { id: "overview" });
    for (const suite of DATA.suites) {
      const part = el("div", { class: "suite", dataset: { suite: suite.name } });
      part.appendChild(el("h2", { text: suite.title }));
      part.appendChild(el("div", { class: "meta", text: [
        suite.items + " items" + (suite.is_sample ? " (bundled sample)" : ""),
        "errors " + suite.errors, "missing " + suite.missing, suite.protocol,
        suite.profile ? "scored as " + suite.profile : null,
      ].filter(Boolean).join(" · ") }));
      part.appendChild(el("div", { class: "meta", text: "data: " + suite.source + " (sha256 " + suite.sha256.slice(0, 12) + ")" }));
      if (suite.upper_bound) part.appendChild(el("div", { class: "warn", text: "upper bound: " + suite.upper_bound }));
      for (const note of suite.notes) part.appendChild(el("div", { class: "meta", text: "note: " + note }));
      for (const w of suite.warnings) part.appendChild(el("div", { class: "warn", text: "data warning: " + w }));
      const table = el("table", { class: "metrics" },
        el("tr", {}, ["metric", "score", "95% CI", "scored", "this run vs papers", "papers"].map((t, i) =>
          el("th", { class: i === 1 || i === 3 ? "num" : null, text: t }))));
      for (const s of suite.metrics) {
        const papers = suite.papers[s.metric];
        const scored = s.n ? (s.n - s.failed) + "/" + (s.n + s.unscored) + (s.failed ? " +" + s.failed + " failed as 0" : "") : "";
        table.appendChild(el("tr", { dataset: { metric: s.metric } },
          el("td", { text: label(s.metric), title: (METRICS[s.metric] || {}).source }),
          el("td", { class: "num" + (s.mean === null ? " na" : ""), text: fmt(s.mean, s.metric) }),
          el("td", { class: s.mean === null ? "na" : null, text: s.mean === null ? (s.reason || "") :
            s.low === null ? "" : "[" + fmt(s.low, s.metric) + ", " + fmt(s.high, s.metric) + "]" }),
          el("td", { class: "num", text: scored }),
          el("td", {}, s.mean === null ? "" : intervalPlot(s.metric, s, papers)),
          el("td", { class: "meta", text: papers ? (papers.comparable ? "" : "n/c ") + papers.low + "–" + papers.high +
            " (" + papers.rows + " rows, best " + papers.best + ")" : "" })));
      }
      part.appendChild(table);
      part.appendChild(el("div", { class: "meta", text: "dot and line: this run's score and 95% interval; band: the " +
        "published range of the same protocol (grey: not comparable with this run, say why on hover)" }));
      const unscored = suite.metrics.filter((s) => s.unscored > 0 && s.mean !== null);
      const reasons = suite.error_reasons;
      if (unscored.length || reasons.length) {
        part.appendChild(el("h3", { text: "Errors, unscored and missing" }));
        const ul = el("ul", { class: "problems" });
        for (const [reason, n] of reasons) ul.appendChild(el("li", { text: n + " item(s) without an answer: " + reason }));
        for (const s of unscored) ul.appendChild(el("li", { text: label(s.metric) + ": " + s.unscored + " unscored: " + (s.reason || "") }));
        part.appendChild(ul);
      }
      if (suite.slices.length) {
        part.appendChild(el("h3", { text: "By " + (suite.interactive ? "query" : "ambiguity type") }));
        const grid = el("div", { class: "multiples" });
        for (const s of suite.metrics) {
          const values = suite.slices.map((sl) => sl.metrics[s.metric]).filter((v) => v && v.mean !== null);
          if (!values.length) continue;
          const box = el("div", { class: "multiple", dataset: { metric: s.metric } }, el("div", { class: "title", text: label(s.metric) }));
          const t = el("table", {});
          for (const sl of suite.slices) {
            const v = sl.metrics[s.metric];
            if (!v) continue;
            t.appendChild(el("tr", {}, el("td", { text: sl.name + " (" + sl.items + ")" }),
              el("td", { class: "num", text: fmt(v.mean, s.metric) }),
              el("td", {}, v.mean === null ? "" : intervalPlot(s.metric, v, (suite.papers_by_type[sl.name] || {})[s.metric], 140))));
          }
          box.appendChild(t);
          grid.appendChild(box);
        }
        part.appendChild(grid);
      }
      if (suite.evidence.length) {
        part.appendChild(el("h3", { text: "Evidence coverage: recall@k of gold passages" }));
        const t = el("table", {}, el("tr", {}, ["slice", "items", "original question", "clarified questions"].map((x) => el("th", { text: x }))));
        for (const e of suite.evidence) {
          t.appendChild(el("tr", {}, el("td", { text: e.name }), el("td", { class: "num", text: e.items }),
            el("td", { class: "num", text: fmt(e.original.mean) }), el("td", { class: "num", text: fmt(e.clarified.mean) })));
        }
        part.appendChild(t);
      }
      out.appendChild(part);
    }
    return out;
  }

  // ---- items: filters, a virtualised list, a detail built on demand

  const ITEMS = DATA.items;
  const hay = []; // lower-cased search text per item, built on the first search
  function haystack(i) {
    if (hay[i] === undefined) {
      const it = ITEMS[i];
      const d = detailOf(i);
      hay[i] = [it.k, it.q, d.answer ? d.answer.text : "", d.error || ""].join("\n").toLowerCase();
    }
    return hay[i];
  }
  const details = [];
  let DETAILS = null; // the items' details, parsed when first needed
  function detailOf(i) {
    if (details[i] === undefined) {
      if (DETAILS === null) DETAILS = JSON.parse(document.getElementById("ambigqa-details").textContent);
      // Empty parts are left out of the file: put them back, and the reasons by index.
      const d = Object.assign({ scores: {}, unscored: {}, samples: {}, duration: 0 }, DETAILS[i]);
      for (const m of Object.keys(d.unscored)) d.unscored[m] = DATA.reasons[d.unscored[m]];
      details[i] = d;
    }
    return details[i];
  }

  const controls = {};
  const allMetrics = [...new Set(DATA.suites.flatMap((s) => s.metrics.map((m) => m.metric)))]
    .filter((m) => ITEMS.some((it) => m in it.sc));
  const types = [...new Set(ITEMS.map((it) => it.t).filter(Boolean))];

  function option(value, text) { return el("option", { value: value, text: text }); }

  function itemControls() {
    controls.search = el("input", { type: "search", placeholder: "search id, question, answer, error", id: "search" });
    controls.suite = el("select", { id: "f-suite" }, option("", "every suite"), DATA.suites.map((s) => option(s.name, s.name)));
    controls.type = el("select", { id: "f-type" }, option("", "every type"), types.map((t) => option(t, t)));
    controls.status = el("select", { id: "f-status" }, option("", "any status"), option("ok", "answered"),
      option("error", "errors"), option("missing", "missing"), option("unscored", "with an unscored metric"));
    controls.metric = el("select", { id: "f-metric" }, allMetrics.map((m) => option(m, label(m))));
    controls.min = el("input", { type: "number", id: "f-min", placeholder: "min", step: "any" });
    controls.max = el("input", { type: "number", id: "f-max", placeholder: "max", step: "any" });
    controls.disagree = el("input", { type: "checkbox", id: "f-disagree" });
    controls.regressed = el("input", { type: "checkbox", id: "f-regressed" });
    controls.sort = el("select", { id: "f-sort" }, option("file", "file order"), option("asc", "metric, low first"),
      option("desc", "metric, high first"), option("duration", "slowest first"),
      COMPARISON ? option("change", "change vs base, worst first") : null);
    controls.count = el("span", { class: "meta", id: "count" });
    const box = el("div", { class: "controls" }, controls.search, controls.suite, controls.type, controls.status,
      el("label", {}, "metric", controls.metric), el("label", {}, "from", controls.min), el("label", {}, "to", controls.max),
      el("label", { title: "judge samples of an item disagree" }, controls.disagree, "judge disagreement"),
      COMPARISON ? el("label", {}, controls.regressed, "regressions") : null,
      el("label", {}, "sort", controls.sort), controls.count);
    for (const c of Object.values(controls)) {
      if (c.tagName === "INPUT" || c.tagName === "SELECT") c.addEventListener("input", () => list.refilter());
    }
    return box;
  }

  const list = {
    order: ITEMS.map((_, i) => i),
    selected: null,
    refilter() {
      const q = controls.search.value.trim().toLowerCase();
      const suite = controls.suite.value, type = controls.type.value, status = controls.status.value;
      const metric = controls.metric.value;
      const min = controls.min.value === "" ? null : Number(controls.min.value);
      const max = controls.max.value === "" ? null : Number(controls.max.value);
      const keep = [];
      for (let i = 0; i < ITEMS.length; i++) {
        const it = ITEMS[i];
        if (suite && it.s !== suite) continue;
        if (type && it.t !== type) continue;
        if (status === "unscored" ? it.un.length === 0 : status && it.st !== status) continue;
        if (min !== null || max !== null) {
          const v = itemValue(it.sc[metric], metric);
          if (v === null || (min !== null && v < min) || (max !== null && v > max)) continue;
        }
        if (controls.disagree.checked && !(it.sp > 0)) continue;
        if (controls.regressed.checked && !it.rg) continue;
        if (q && haystack(i).indexOf(q) < 0) continue;
        keep.push(i);
      }
      const sort = controls.sort.value;
      const value = (i) => { const v = ITEMS[i].sc[metric]; return v === undefined ? null : v; };
      if (sort === "asc" || sort === "desc") {
        const s = sort === "asc" ? 1 : -1;
        keep.sort((a, b) => {
          const va = value(a), vb = value(b);
          if (va === null || vb === null) return (va === null) - (vb === null);
          return s * (va - vb) || a - b;
        });
      } else if (sort === "duration") {
        keep.sort((a, b) => ITEMS[b].d - ITEMS[a].d || a - b);
      } else if (sort === "change") {
        keep.sort((a, b) => {
          const ca = ITEMS[a].c, cb = ITEMS[b].c;
          if (ca === null || cb === null) return (ca === null) - (cb === null);
          return ca - cb || a - b;
        });
      }
      this.order = keep;
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
        const v = itemValue(it.sc[metric], metric);
        const row = el("div", { class: "row" + (this.selected === i ? " selected" : ""), dataset: { key: it.k },
          onclick: () => this.open(i) },
          el("span", { class: "key", text: visible(it.k), title: visible(it.k) }),
          it.t ? el("span", { class: "badge", text: it.t }) : null,
          it.st !== "ok" ? el("span", { class: "badge " + it.st, text: it.st }) : null,
          it.rg ? el("span", { class: "badge worse", text: "regressed" }) : null,
          el("span", { class: "q", text: it.q }),
          el("span", { class: "v", text: v === null ? "–" : fmt(v, metric) }));
        row.style.top = n * ROW + "px";
        rows.push(row);
      }
      this.spacer.replaceChildren(...rows);
    },
    open(i) {
      this.selected = i;
      this.draw();
      this.detail.replaceChildren(...itemDetail(i));
      this.detail.scrollTop = 0;
      const hash = "#item=" + encodeURIComponent(ITEMS[i].k);
      if (location.hash !== hash) history.replaceState(null, "", hash);
    },
  };

  function items() {
    const out = el("section", { id: "items" });
    out.appendChild(itemControls());
    list.spacer = el("div", { class: "spacer" });
    list.box = el("div", { class: "list", id: "list" }, list.spacer);
    list.box.addEventListener("scroll", () => list.draw(), { passive: true });
    list.detail = el("div", { class: "detail", id: "detail" }, el("p", { class: "empty", text: "Choose an item to see its question, gold readings, answer and scores." }));
    out.appendChild(el("div", { class: "items" }, list.box, list.detail));
    return out;
  }

  // The answer with the gold short answers STR-EM found marked, one colour per reading.
  function highlighted(text, spans) {
    const box = el("div", { class: "answer", id: "answer-text" });
    let at = 0;
    const merged = [];
    for (const [start, end, reading] of spans || []) {
      if (merged.length && start < merged[merged.length - 1][1]) {
        const last = merged[merged.length - 1];
        last[1] = Math.max(last[1], end);
        continue;
      }
      merged.push([start, end, reading]);
    }
    for (const [start, end, reading] of merged) {
      if (start > at) box.appendChild(document.createTextNode(text.slice(at, start)));
      box.appendChild(el("mark", { class: "r" + (reading % 6), title: "gold answer of reading " + (reading + 1), text: text.slice(start, end) }));
      at = end;
    }
    if (at < text.length) box.appendChild(document.createTextNode(text.slice(at)));
    return box;
  }

  function wordDiff(diff) {
    const box = el("div", { class: "diff" });
    for (const [op, words] of diff) {
      box.appendChild(el(op === "=" ? "span" : op === "-" ? "del" : "ins", { text: words }));
      box.appendChild(document.createTextNode(" "));
    }
    return box;
  }

  function itemDetail(i) {
    const it = ITEMS[i];
    const d = detailOf(i);
    const out = [];
    out.push(el("h2", { text: visible(it.k) }));
    out.push(el("div", { class: "meta" }, el("span", { class: "badge " + it.st, text: it.st }), " ",
      it.t ? it.t + " · " : "", d.duration.toFixed(2) + " s", d.cached ? " · answer from the response store" : ""));
    if (d.gold) {
      out.push(el("h3", { text: "Question" }), el("p", { id: "question", text: d.gold.question }));
    } else {
      out.push(el("p", { class: "na", text: "Question and gold readings not shown: " + d.gold_absent }));
    }
    if (d.episode) {
      const e = d.episode;
      out.push(el("p", { class: "meta", text: "episode: " + (e.ambiguous ? "ambiguous query, reading " + (e.interpretation + 1) :
        "unambiguous query") + " · alpha " + e.alpha + " · beta " + e.beta + (d.sequence ? " · actions " + d.sequence : "") }));
    }
    if (d.gold) {
      out.push(el("h3", { text: "Gold readings" }));
      const ul = el("ol", { class: "readings" });
      d.gold.interpretations.forEach((g, n) => {
        const state = g.hit === null || g.hit === undefined ? null : g.hit ? "hit" : "miss";
        ul.appendChild(el("li", { dataset: { hit: state || "" } },
          state ? el("span", { class: "badge " + state, text: state }) : null, " ",
          el("span", { text: g.question || g.condition || "" }),
          g.answers.length ? el("span", { class: "meta" }, " → ", el("mark", { class: "r" + (n % 6), text: g.answers.join(" | ") })) : null,
          g.passages.length ? el("span", { class: "meta" }, " · passages ", g.passages.map((c, n) => [n ? ", " : "", el("span", { class: "id", text: visible(c) })])) : null));
      });
      out.push(ul);
    }
    out.push(el("h3", { text: "Answer" }));
    if (d.answer) {
      out.push(highlighted(d.answer.text, d.gold ? d.gold.spans : []));
      const a = d.answer;
      const flags = [
        a.is_ambiguous === null || a.is_ambiguous === undefined ? null : "says ambiguous: " + a.is_ambiguous,
        a.ambiguity_type ? "type: " + a.ambiguity_type : null,
        a.clarifying_question ? "asks: " + a.clarifying_question : null,
      ].filter(Boolean);
      if (flags.length) out.push(el("p", { class: "meta", text: flags.join(" · ") }));
      if (a.interpretations && a.interpretations.length) {
        const t = el("table", {}, el("tr", {}, ["reading", "answer", "citations"].map((x) => el("th", { text: x }))));
        for (const g of a.interpretations) {
          t.appendChild(el("tr", {}, el("td", { text: g.question || g.condition || "" }), el("td", { text: g.answer || "" }),
            el("td", {}, (g.citations || []).map((c, n) => [n ? ", " : "", el("span", { class: "id", text: visible(c) })]))));
        }
        out.push(t);
      }
    } else {
      out.push(el("p", { class: "na", text: "no answer" }));
    }
    if (d.gold && (d.gold.citations.length || d.gold.uncited.length)) {
      out.push(el("h3", { text: "Citations against gold passages" }));
      const ul = el("ul", { id: "citations" });
      for (const c of d.gold.citations) {
        ul.appendChild(el("li", {}, el("span", { class: "badge " + (c.gold ? "hit" : "miss"), text: c.gold ? "gold" : "not gold" }),
          " ", el("span", { class: "id", text: visible(c.id) }), c.title ? el("span", { text: " · " + c.title }) : null));
      }
      for (const c of d.gold.uncited) {
        ul.appendChild(el("li", {}, el("span", { class: "badge", text: "gold, not cited" }), " ",
          el("span", { class: "id", text: visible(c.id) }), c.title ? el("span", { text: " · " + c.title }) : null));
      }
      out.push(ul);
    }
    if (d.evidence) {
      out.push(el("h3", { text: "Retrieval recall of gold passages" }),
        el("p", { text: "from the original question " + (100 * d.evidence.original).toFixed(1) + "% · from the clarified questions " +
          (100 * d.evidence.clarified).toFixed(1) + "%" }));
    }
    out.push(el("h3", { text: "Scores" }));
    const t = el("table", { id: "scores" }, el("tr", {}, ["metric", "score", "judge samples", "base run"].map((x) => el("th", { text: x }))));
    const names = [...new Set([...Object.keys(d.scores), ...Object.keys(d.unscored)])];
    for (const m of names) {
      const samples = d.samples[m];
      const spread = samples && samples.length > 1 ? Math.max(...samples) - Math.min(...samples) : null;
      const base = d.base && m in d.base.scores ? fmt(itemValue(d.base.scores[m], m), m) : "";
      t.appendChild(el("tr", {}, el("td", { text: label(m) }),
        m in d.scores ? el("td", { class: "num", text: fmt(itemValue(d.scores[m], m), m) }) : el("td", { class: "na", text: "n/a: " + d.unscored[m] }),
        el("td", { class: "meta", text: samples ? samples.join(", ") + (spread ? " (spread " + spread.toFixed(2) + ")" : "") : "" }),
        el("td", { class: "num", text: base })));
    }
    out.push(t);
    if (d.transcript && d.transcript.length) {
      out.push(el("h3", { text: "Transcript" }));
      const box = el("div", { id: "transcript" });
      for (const turn of d.transcript) {
        box.appendChild(el("div", { class: "turn" }, el("span", { class: "role", text: turn.role + (turn.action ? " (" + turn.action + ")" : "") + ":" }),
          el("span", { text: turn.text || "" })));
      }
      out.push(box);
    }
    if (d.error) out.push(el("h3", { text: "Error" }), el("pre", { text: d.error }));
    if (d.trace) out.push(el("details", {}, el("summary", { text: "traceback" }), el("pre", { text: d.trace })));
    if (d.base) {
      out.push(el("h3", { text: "Base run" }));
      const reg = REGRESSIONS.get(it.k);
      out.push(el("div", { class: "side" }, el("div", { text: d.base.text === null ? "(no answer: " + (d.base.error || d.base.status) + ")" : d.base.text }),
        el("div", { text: d.answer ? d.answer.text : "(no answer)" })));
      if (reg) out.push(el("p", { class: "meta", text: "word diff, base → this run:" }), wordDiff(reg.diff));
    }
    return out;
  }

  // ---- comparison

  function comparison() {
    const c = COMPARISON;
    const out = el("section", { id: "comparison" });
    const base = c.base || {};
    out.appendChild(el("p", { text: "Compared with the base run " + (base.scorecard ? "(" + base.scorecard + ") " : "") +
      "of " + base.system + ", " + base.items + " items, paired by item. Change = this run − base, with a seeded paired " +
      "bootstrap 95% interval (items resampled within their type); p: exact McNemar for 0/1 metrics, else a sign-flip " +
      "permutation test; Holm-corrected across every test shown. W/T/L: items better / same / worse in this run." }));
    for (const note of c.notes) out.appendChild(el("p", { class: "warn", text: note }));
    for (const [what, keys] of [["only in the base run", c.only_base], ["only in this run", c.only_new]]) {
      if (keys.length) out.appendChild(el("details", {}, el("summary", { text: keys.length + " item(s) " + what + ", not compared" }),
        el("p", { text: keys.map(visible).join(", ") })));
    }
    const margins = {};
    for (const m of (DATA.config.fail_if_worse || [])) {
      const parts = m.split(":");
      margins[parts[parts.length - 2]] = Number(parts[parts.length - 1]);
    }
    const suites = [...new Set(c.rows.map((r) => r.suite))];
    for (const suite of suites) {
      out.appendChild(el("h2", { text: suite }));
      const t = el("table", { class: "changes" }, el("tr", {}, ["slice", "metric", "n", "base", "new", "change", "95% CI", "",
        "p (test)", "Holm p", "W/T/L"].map((x, n) => el("th", { class: n >= 2 && n <= 5 ? "num" : null, text: x }))));
      const skipped = new Map(); // reason -> metrics, said once below the table
      for (const r of c.rows.filter((x) => x.suite === suite)) {
        if (r.diff === null) {
          if (!skipped.has(r.reason)) skipped.set(r.reason, new Set());
          skipped.get(r.reason).add(label(r.metric));
          continue;
        }
        t.appendChild(el("tr", { dataset: { metric: r.metric, slice: r.slice } }, el("td", { text: r.slice }), el("td", { text: label(r.metric) }),
          el("td", { class: "num", text: r.n }), el("td", { class: "num", text: fmt(r.base, r.metric) }),
          el("td", { class: "num", text: fmt(r.new, r.metric) }), el("td", { class: "num", text: signed(r.diff, r.metric) }),
          el("td", { text: "[" + signed(r.low, r.metric) + ", " + signed(r.high, r.metric) + "]" }),
          el("td", {}, changePlot(r, margins[r.metric])),
          el("td", { text: pfmt(r.p) + " (" + (r.test === "mcnemar" ? "McNemar" : "perm.") + ")" }),
          el("td", { class: "num", text: pfmt(r.p_holm) }),
          el("td", { class: "num", text: r.wins === null ? "" : r.wins + "/" + r.ties + "/" + r.losses })));
      }
      out.appendChild(t);
      for (const [reason, labels] of skipped) {
        out.appendChild(el("p", { class: "na not-compared", text: "not compared: " + [...labels].join(", ") + " (" + reason + ")" }));
      }
      for (const r of c.rows.filter((x) => x.suite === suite && x.slice === "all" && x.one_sided)) {
        out.appendChild(el("p", { class: "na one-sided", text: label(r.metric) + ": " + r.one_sided + " item(s) scored in one run only, left out of its rows" }));
      }
      const regs = c.regressions.filter((r) => r.suite === suite);
      out.appendChild(el("h3", { text: "Regressions (" + regs.length + ", worst first)" }));
      const index = new Map(ITEMS.map((it, n) => [it.k, n]));
      for (const r of regs.slice(0, 200)) {
        const drops = Object.entries(r.drops).map(([m, [b, a]]) => label(m) + " " + fmt(itemValue(b, m), m) + " → " + fmt(itemValue(a, m), m));
        const box = el("div", { class: "regression", dataset: { key: r.key } },
          el("button", { class: "link", text: visible(r.key), onclick: () => { showTab("items"); list.open(index.get(r.key)); } }),
          el("span", { class: "meta", text: " · " + (drops.join(", ") || "no answer") + (r.new_status !== r.base_status ? " · now " + r.new_status : "") }));
        const n = index.get(r.key);
        const d = n === undefined ? null : detailOf(n);
        if (d && d.base) {
          box.appendChild(el("div", { class: "side" }, el("div", { text: d.base.text || "(no answer)" }), el("div", { text: d.answer ? d.answer.text : "(no answer)" })));
        }
        box.appendChild(wordDiff(r.diff));
        out.appendChild(box);
      }
      if (regs.length > 200) out.appendChild(el("p", { class: "meta", text: (regs.length - 200) + " more: tick “regressions” in Items to list them all." }));
    }
    return out;
  }

  // ---- assemble

  document.body.appendChild(header());
  const nav = el("nav", {});
  const main = el("main", {});
  sections.overview = overview();
  sections.items = items();
  if (COMPARISON) sections.comparison = comparison();
  for (const [key, text] of TABS) {
    buttons[key] = el("button", { id: "tab-" + key, text: text, onclick: () => showTab(key) });
    nav.appendChild(buttons[key]);
    main.appendChild(sections[key]);
  }
  document.body.appendChild(nav);
  document.body.appendChild(main);
  window.addEventListener("resize", () => list.draw());
  showTab("overview");
  list.refilter();
  // #item=<key> opens an item, at load and when the address changes; a malformed one is ignored.
  function openFromHash() {
    const wanted = /^#item=(.*)$/.exec(location.hash);
    if (!wanted) return;
    let key;
    try { key = decodeURIComponent(wanted[1]); } catch (e) { return; }
    const n = ITEMS.findIndex((it) => it.k === key);
    if (n >= 0) { showTab("items"); list.open(n); }
  }
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
})();

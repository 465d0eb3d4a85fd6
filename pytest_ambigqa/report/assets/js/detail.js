// report.html, detail: one item's question, gold readings, answer (the gold answers STR-EM
// found marked), citations, scores, transcript, error and the base run's answer.
(function (/** @type {any} the scripts' namespace (page.d.ts) */ ns) {
  "use strict";
  // Highlight spans [start, end, reading] in order, each overlapping one folded into the one
  // before it (which keeps its reading).
  function mergeSpans(spans) {
    const merged = [];
    for (const [start, end, reading] of spans || []) {
      const last = merged[merged.length - 1];
      if (last && start < last[1]) last[1] = Math.max(last[1], end);
      else merged.push([start, end, reading]);
    }
    return merged;
  }
  // The answer with the gold short answers STR-EM found marked, one colour per reading.
  function highlighted(text, spans) {
    const { el } = ns.dom;
    const box = el("div", { class: "answer", id: "answer-text" });
    let at = 0;
    for (const [start, end, reading] of mergeSpans(spans)) {
      if (start > at) box.appendChild(document.createTextNode(text.slice(at, start)));
      box.appendChild(el("mark", { class: "r" + (reading % 6), dataset: { reading: reading + 1 }, title: "gold answer of reading " + (reading + 1), text: text.slice(start, end) }));
      at = end;
    }
    if (at < text.length) box.appendChild(document.createTextNode(text.slice(at)));
    return box;
  }
  function wordDiff(diff) {
    const { el } = ns.dom;
    const box = el("div", { class: "diff" });
    for (const [op, words] of diff) {
      box.appendChild(el(op === "=" ? "span" : op === "-" ? "del" : "ins", { text: words }));
      box.appendChild(document.createTextNode(" "));
    }
    return box;
  }
  // Two answers side by side, each box labelled: the base run's and this run's.
  function sideBySide(base, now) {
    const { el } = ns.dom;
    return el("div", { class: "side" },
      el("div", {}, el("div", { class: "label", text: "base run" }), el("div", { class: "text", text: base })),
      el("div", {}, el("div", { class: "label", text: "this run" }), el("div", { class: "text", text: now })));
  }
  function ids(list) {
    const { el } = ns.dom;
    return list.map((c, n) => [n ? ", " : "", el("span", { class: "id", text: ns.format.visible(c) })]);
  }

  // An llm: system's calls step by step (prompt kind, tokens, latency, cost; every number
  // formatted in Python) with their totals, then the method's intermediate outputs.
  /** @param {import("./payload").Steps} steps */
  function trace(steps) {
    const { el } = ns.dom;
    const right = (n) => n >= 2 && n <= 5 ? "num" : null;
    const t = el("table", { id: "trace" }, el("tr", {}, steps.head.map((h, n) => el("th", { class: right(n), text: h }))),
      steps.rows.map((r) => el("tr", {}, r.map((c, n) => el("td", { class: right(n), text: c })))),
      el("tr", { class: "total" }, steps.total.map((c, n) => el("td", { class: right(n), text: c }))));
    const parts = [el("h3", { text: "Trace: the model calls, step by step" }), t];
    if (steps.outputs.length) {
      parts.push(el("div", { id: "outputs" }, steps.outputs.map((o) => el("div", { class: "output", dataset: { name: o.name } },
        el("div", { class: "name", text: o.name }),
        o.items.length > 1 ? el("ol", {}, o.items.map((x) => el("li", { text: x }))) : el("div", { class: "value", text: o.items[0] || "" })))));
    }
    return parts;
  }

  /** @param {import("./page").Page} page @param {number} i */
  function itemDetail(page, i) {
    const { el } = ns.dom;
    const it = page.items[i];
    const d = page.detailOf(i);
    const out = [];
    out.push(el("h2", { text: ns.format.visible(it.key) }));
    out.push(el("div", { class: "meta" }, el("span", { class: "badge " + it.status, text: it.status }), " ",
      it.type ? it.type + " · " : "", d.duration, d.cached ? " · answer from the response store" : ""));
    if (d.gold) {
      out.push(el("h3", { text: "Question" }), el("p", { id: "question", text: d.gold.question }));
    } else {
      out.push(el("p", { class: "na", text: "Question and gold readings not shown: " + d.gold_absent }));
    }
    if (d.episode) out.push(el("p", { class: "meta", text: d.episode }));
    if (d.gold) {
      out.push(el("h3", { text: "Gold readings" }));
      const ol = el("ol", { class: "readings" });
      d.gold.interpretations.forEach((g, n) => {
        const state = g.hit === null || g.hit === undefined ? null : g.hit ? "hit" : "miss";
        ol.appendChild(el("li", { dataset: { hit: state || "" } },
          state ? el("span", { class: "badge " + state, text: state }) : null, " ",
          el("span", { text: g.question || g.condition || "" }),
          g.answers.length ? el("span", { class: "meta" }, " → ", el("mark", { class: "r" + (n % 6), dataset: { reading: n + 1 }, text: g.answers.join(" | ") })) : null,
          g.passages.length ? el("span", { class: "meta" }, " · passages ", ids(g.passages)) : null));
      });
      out.push(ol);
    }
    out.push(el("h3", { text: "Answer" }));
    if (d.answer) {
      if (d.gold && d.gold.spans.length) {
        out.push(el("p", { class: "meta", id: "highlight-legend", text: "Marked: the gold answers STR-EM found in the answer, " +
          "one colour per reading, numbered as the readings above. A colour names a reading; whether the reading " +
          "was hit or missed is its badge above." }));
      }
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
            el("td", {}, ids(g.citations || []))));
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
          " ", el("span", { class: "id", text: ns.format.visible(c.id) }),
          c.as ? el("span", { class: "meta" }, " (this item's ", el("span", { class: "id", text: ns.format.visible(c.as) }), ")") : null,
          c.title ? el("span", { text: " · " + c.title }) : null));
      }
      for (const c of d.gold.uncited) {
        ul.appendChild(el("li", {}, el("span", { class: "badge", text: "gold, not cited" }), " ",
          el("span", { class: "id", text: ns.format.visible(c.id) }), c.title ? el("span", { text: " · " + c.title }) : null));
      }
      out.push(ul);
    }
    if (d.evidence) out.push(el("h3", { text: "Retrieval recall of gold passages" }), el("p", { text: d.evidence }));
    out.push(el("h3", { text: "Scores" }));
    const t = el("table", { id: "scores" }, el("tr", {}, ["metric", "score", "judge samples", "base run"].map((x) => el("th", { text: x }))));
    for (const m of new Set([...Object.keys(d.scores), ...Object.keys(d.unscored)])) {
      const base = d.base && m in d.base.scores ? d.base.scores[m] : "";
      t.appendChild(el("tr", {}, el("td", { text: page.metric(m).label }),
        m in d.scores ? el("td", { class: "num", text: d.scores[m] }) : el("td", { class: "na", text: "n/a: " + d.unscored[m] }),
        el("td", { class: "meta", text: d.samples[m] || "" }),
        el("td", { class: "num", text: base })));
    }
    out.push(t);
    if (d.steps) out.push(...trace(d.steps));
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
    if (d.calls) {
      out.push(el("h3", { text: "Model calls before the error" }), el("p", { class: "meta", id: "failed-calls", text: d.calls.summary }));
      if (d.calls.last_reply) out.push(el("details", {}, el("summary", { text: "last reply" }), el("pre", { text: d.calls.last_reply })));
    }
    if (d.base) {
      out.push(el("h3", { text: "Base run" }));
      out.push(sideBySide(d.base.text === null || d.base.text === undefined ? "(no answer: " + (d.base.error || d.base.status) + ")" : d.base.text,
        d.answer ? d.answer.text : "(no answer)"));
      const diff = page.diffs.get(it.key);
      if (diff) out.push(el("p", { class: "meta", text: "word diff, base → this run:" }), wordDiff(diff));
    }
    return out;
  }
  ns.detail = { mergeSpans, highlighted, wordDiff, sideBySide, trace, itemDetail };
})(globalThis.ambigqa = globalThis.ambigqa || {});
if (typeof module !== "undefined") module.exports = globalThis.ambigqa;

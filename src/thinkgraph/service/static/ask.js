// The Ask tab: method and its settings as a form, the question streamed (each step as it happens,
// answer text as the model writes it), citations with the sentences that answer, the evidence graph.
"use strict";
(() => {
  const $ = TG.$;
  let methods = [];
  let running = null; // the AbortController of the question being asked
  let evidence = null;

  async function loadMethods() {
    try { methods = await TG.call("/v1/methods"); } catch (e) { TG.notice(e.message); return; }
    $("method").innerHTML = "";
    methods.forEach((m) => $("method").append(TG.el("option", { value: m.name, title: m.summary, text: m.name + (m.needs_llm ? " (LLM)" : "") })));
    $("method").value = (methods.find((m) => m.default) || methods[0]).name;
    buildOptions();
  }

  function buildOptions() {
    const box = $("options");
    box.textContent = "";
    const method = methods.find((m) => m.name === $("method").value);
    if (!method || !method.settings.length) { box.append(TG.el("p", { class: "muted", text: "This method has no settings besides top-k." })); return; }
    method.settings.forEach((s) => {
      let input;
      if (s.type === "boolean") {
        input = TG.el("input", { type: "checkbox" });
        input.checked = Boolean(s.default);
      } else if (s.type === "enum") {
        input = TG.el("select");
        s.choices.forEach((c) => input.append(TG.el("option", { value: c, text: c })));
        input.value = s.default;
      } else {
        input = TG.el("input", { type: s.type === "string" ? "text" : "number", step: s.type === "integer" ? "1" : "any",
          placeholder: s.default === null ? "" : String(s.default) });
      }
      input.dataset.name = s.name;
      input.dataset.type = s.type;
      input.dataset.default = JSON.stringify(s.default);
      box.append(TG.el("label", { title: s.description || "" }, TG.el("span", { text: s.name }), input));
    });
  }

  function chosenOptions() {
    const options = {};
    $("options").querySelectorAll("[data-name]").forEach((input) => {
      const fallback = JSON.parse(input.dataset.default);
      let value;
      if (input.dataset.type === "boolean") value = input.checked;
      else if (input.value === "") return;
      else if (input.dataset.type === "integer" || input.dataset.type === "number") value = Number(input.value);
      else value = input.value;
      if (value !== fallback) options[input.dataset.name] = value;
    });
    return options;
  }

  function addStep(text, cls = "") {
    $("trace").append(TG.el("li", { class: cls, text }));
    $("steps-count").textContent = `${$("trace").children.length}`;
  }

  function stepText(step) {
    const out = step.outputs || {};
    const detail = out.answer ?? out.reply ?? out.sub_query ?? out.thought ?? (out.passages ? `${out.passages.length} passages` : "");
    return `${step.agent} · ${step.action}${detail ? ` — ${TG.short(String(detail), 120)}` : ""}`;
  }

  function setBusy(busy) {
    $("ask").disabled = busy;
    $("cancel").hidden = !busy;
    $("question").readOnly = busy;
  }

  function reset() {
    $("trace").innerHTML = "";
    $("citations").innerHTML = "";
    $("steps-count").textContent = "";
    $("answer").textContent = "";
    $("answer").classList.remove("error");
    $("passage").textContent = "Click a citation (or a passage in the graph) to read its source.";
    $("passage").classList.add("muted");
    $("status").textContent = "running";
    if (evidence) { evidence.destroy(); evidence = null; }
    $("legend").textContent = "";
    window.evidenceGraphReady = false;
  }

  function fail(message) {
    $("answer").textContent = message;
    $("answer").classList.add("error");
    $("status").textContent = "failed";
  }

  function showAnswer(answer) {
    $("answer").textContent = answer.text ?? "";
    if (answer.message) $("answer").append(TG.el("p", { class: "muted", text: answer.message }));
    $("citations").innerHTML = "";
    answer.citations.forEach((c, i) => {
      const link = TG.el("a", { class: "citation", href: "#", onclick: (e) => { e.preventDefault(); TG.showPassage(c.chunk_id, c.start, c.end, c.page); } },
        TG.el("strong", { text: `${c.doc_id}${c.location ? `, ${c.location}` : c.page ? ` p. ${c.page}` : ""}` }), " ", TG.el("q", { text: TG.short((c.plain_quote ?? c.quote).replace(/\s+/g, " "), 240) }));
      $("citations").append(TG.el("li", {}, link));
      if (i === 0) TG.showPassage(c.chunk_id, c.start, c.end, c.page);
    });
    if (!answer.citations.length) $("citations").append(TG.el("li", { class: "muted", text: "No citations." }));
    drawEvidence(answer);
  }

  function drawEvidence(answer) {
    const ev = answer.evidence || {};
    const nodes = ev.nodes || [];
    const ids = new Set(nodes.map((n) => n.id));
    const elements = nodes.map((n) => TG.nodeElement(n));
    const seen = new Set();
    (ev.edges || []).forEach((e, i) => {
      const key = `${e.src}|${e.dst}`;
      if (ids.has(e.src) && ids.has(e.dst) && !seen.has(key)) { seen.add(key); elements.push(TG.edgeElement(e, `e${i}`)); }
    });
    (ev.paths || []).forEach((path, p) => path.slice(1).forEach((dst, i) => {
      const key = `${path[i]}|${dst}`;
      if (ids.has(path[i]) && ids.has(dst) && !seen.has(key)) { seen.add(key); elements.push({ data: { id: `p${p}-${i}`, source: path[i], target: dst, label: "" } }); }
    }));
    TG.drawLegend($("legend"), nodes.map((n) => n.type));
    if (!nodes.length) { $("graph").textContent = "This answer has no evidence graph."; window.evidenceGraphReady = true; return; }
    $("graph").textContent = "";
    evidence = TG.makeGraph($("graph"), elements, { onTap: openNode });
    window.evidenceGraphReady = true;
  }

  function openNode(node) {
    if (node.type === "chunk") { TG.showPassage(node.id); return; }
    TG.call(TG.wsPath(`/nodes/${encodeURIComponent(node.id)}`)).then((full) => {
      const first = (full.provenance || []).find((p) => p.chunk_id);
      if (first) TG.showPassage(first.chunk_id, first.start, first.end);
      else $("passage").textContent = `${node.type}: ${node.text}`;
    }).catch((e) => { $("passage").textContent = e.message; });
  }

  async function readEvents(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let streamed = "";
    let streamStep = null;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const name = /^event: (.*)$/m.exec(block)?.[1];
        if (!name) continue;
        const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null");
        if (name === "trace") addStep(stepText(data));
        else if (name === "llm_call") addStep(`model call: ${data.step} (${data.prompt_tokens} + ${data.completion_tokens} tokens${data.cached ? ", cached" : ""})`, "call");
        else if (name === "token") { // the model writing, live; each call's text replaces the last one's
          if (data.step !== streamStep) { streamStep = data.step; streamed = ""; }
          streamed += data.text;
          $("answer").textContent = streamed;
        }
        else if (name === "answer") { showAnswer(data); $("status").textContent = data.status.replace("_", " "); }
        else if (name === "error") fail(data.message);
      }
    }
  }

  async function ask(event) {
    event.preventDefault();
    if (running) return;
    if (!TG.ws()) { TG.notice("Create a workspace and upload documents first."); return; }
    reset();
    $("answer").textContent = "…";
    running = new AbortController();
    setBusy(true);
    const body = { question: $("question").value, method: $("method").value, options: chosenOptions(), stream: true };
    if ($("top-k").value) body.top_k = Number($("top-k").value);
    try {
      const response = await fetch(TG.wsPath("/ask"), { method: "POST", headers: TG.headers(), body: JSON.stringify(body), signal: running.signal });
      if (!response.ok) fail(await TG.errorText(response));
      else await readEvents(response);
    } catch (e) {
      if (e.name === "AbortError") { $("status").textContent = "cancelled"; addStep("cancelled", "call"); } else fail(e.message);
    } finally {
      running = null;
      setBusy(false);
    }
  }

  $("ask-form").addEventListener("submit", ask);
  $("cancel").onclick = () => running?.abort();
  $("method").onchange = buildOptions;
  loadMethods();
})();

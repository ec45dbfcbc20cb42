// The thinkgraph page: ask with a method, watch the trace stream in, read the answer with its
// citations (each opens its source passage with the cited span highlighted), explore the evidence graph.
"use strict";
const $ = (id) => document.getElementById(id);
const api = (path) => `/v1/workspaces/${encodeURIComponent($("workspace").value)}${path}`;
const headers = () => {
  const h = { "Content-Type": "application/json" };
  if ($("token").value) h.Authorization = `Bearer ${$("token").value}`;
  return h;
};
let graph = null;

async function loadMethods() {
  const response = await fetch("/v1/methods", { headers: headers() });
  const names = response.ok ? await response.json() : ["ppr"];
  $("method").innerHTML = names.map((m) => `<option${m === "ppr" ? " selected" : ""}>${m}</option>`).join("");
}

function addTrace(text) {
  const li = document.createElement("li");
  li.textContent = text;
  $("trace").appendChild(li);
}

async function showPassage(citation) {
  const response = await fetch(api(`/passages/${encodeURIComponent(citation.chunk_id)}`), { headers: headers() });
  if (!response.ok) { $("passage").textContent = "Passage not available."; return; }
  const p = await response.json();
  const from = Math.max(0, (citation.start ?? p.start ?? 0) - (p.start ?? 0));
  const to = Math.min(p.text.length, (citation.end ?? p.end ?? p.text.length) - (p.start ?? 0));
  const box = $("passage");
  box.classList.remove("muted");
  box.textContent = "";
  const title = document.createElement("strong");
  title.textContent = `${p.doc_id}${citation.page ? ` (page ${citation.page})` : ""}\n`;
  const mark = document.createElement("mark");
  mark.id = "highlight";
  mark.textContent = p.text.slice(from, to);
  box.append(title, p.text.slice(0, from), mark, p.text.slice(to));
}

function showAnswer(answer) {
  $("answer").textContent = answer.text ?? answer.message ?? "(no answer)";
  $("citations").innerHTML = "";
  answer.citations.forEach((c, i) => {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.className = "citation";
    a.textContent = `${c.doc_id}${c.page ? ` p. ${c.page}` : ""}: ${c.quote.slice(0, 120)}`;
    a.onclick = () => showPassage(c);
    li.appendChild(a);
    $("citations").appendChild(li);
    if (i === 0) showPassage(c);
  });
  drawGraph(answer);
}

function drawGraph(answer) {
  const ev = answer.evidence || {};
  const ids = new Set((ev.nodes || []).map((n) => n.id));
  const elements = (ev.nodes || []).map((n) => ({ data: { id: n.id, label: (n.text || n.id).slice(0, 40), type: n.type } }));
  (ev.edges || []).forEach((e, i) => {
    if (ids.has(e.src) && ids.has(e.dst)) elements.push({ data: { id: `e${i}`, source: e.src, target: e.dst, label: e.props?.predicate || e.type } });
  });
  (ev.paths || []).forEach((path, p) => path.slice(1).forEach((dst, i) => {
    const src = path[i];
    if (ids.has(src) && ids.has(dst)) elements.push({ data: { id: `p${p}-${i}`, source: src, target: dst, label: "" } });
  }));
  if (graph) graph.destroy();
  graph = cytoscape({
    container: $("graph"), elements,
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 9, "background-color": "#3b82c4", width: 18, height: 18 } },
      { selector: 'node[type = "chunk"]', style: { "background-color": "#e0a030", shape: "round-rectangle" } },
      { selector: "edge", style: { width: 1.5, "line-color": "#9aa5b5", label: "data(label)", "font-size": 7, "curve-style": "bezier" } },
    ],
    layout: { name: elements.length > 1 ? "cose" : "grid", animate: false },
  });
  window.evidenceGraphReady = true;
}

async function ask(event) {
  event.preventDefault();
  $("trace").innerHTML = "";
  $("answer").textContent = "…";
  $("status").textContent = "running";
  window.evidenceGraphReady = false;
  const response = await fetch(api("/ask"), { method: "POST", headers: headers(),
    body: JSON.stringify({ question: $("question").value, method: $("method").value, stream: true }) });
  if (!response.ok) { $("answer").textContent = (await response.json()).detail; $("status").textContent = "failed"; return; }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null");
      if (name === "llm_call") addTrace(`LLM call: ${data.step} (${data.prompt_tokens} + ${data.completion_tokens} tokens)`);
      else if (name === "trace") addTrace(`${data.agent} · ${data.action}`);
      else if (name === "answer") { showAnswer(data); $("status").textContent = data.status; }
      else if (name === "error") { $("answer").textContent = data.detail; $("status").textContent = "failed"; }
    }
  }
}

$("ask-form").addEventListener("submit", ask);
loadMethods();

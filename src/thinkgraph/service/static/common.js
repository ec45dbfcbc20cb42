// Shared by the workbench's tabs: the API helper (token, errors as one line), the workspace picker,
// tabs, notices, and the passage viewer that every citation and graph node opens.
"use strict";
const TG = (window.TG = {});
const $ = (id) => document.getElementById(id);
TG.$ = $;

TG.el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "onclick" || k === "ondblclick") node[k] = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
};

TG.headers = (json = true) => {
  const h = json ? { "Content-Type": "application/json" } : {};
  if ($("token").value) h.Authorization = `Bearer ${$("token").value}`;
  return h;
};
TG.ws = () => $("workspace").value;
TG.wsPath = (path) => `/v1/workspaces/${encodeURIComponent(TG.ws())}${path}`;

TG.errorText = async (response) => {
  try {
    const body = await response.json();
    return body.error?.message ?? body.detail ?? `HTTP ${response.status}`;
  } catch { return `HTTP ${response.status}`; }
};

// fetch JSON; a failed call throws an Error whose message is the service's one-line error
TG.call = async (path, options = {}) => {
  const response = await fetch(path, { ...options, headers: { ...TG.headers(!(options.body instanceof FormData)), ...(options.headers || {}) } });
  if (!response.ok) throw new Error(await TG.errorText(response));
  return response.json();
};

TG.notice = (text, kind = "error") => {
  const box = $("notice");
  box.textContent = text;
  box.className = `notice ${kind}`;
  box.hidden = !text;
};

TG.short = (text, n) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

// the source passage, with the cited span highlighted and its page when the document is paged
TG.showPassage = async (chunkId, start = null, end = null, page = null) => {
  const box = $("passage");
  let p;
  try { p = await TG.call(TG.wsPath(`/passages/${encodeURIComponent(chunkId)}`)); } catch (e) {
    box.textContent = `Passage not available: ${e.message}`;
    return;
  }
  const base = p.start ?? 0;
  const from = Math.max(0, (start ?? base) - base);
  const to = Math.min(p.text.length, (end ?? base + p.text.length) - base);
  box.classList.remove("muted");
  box.textContent = "";
  const title = TG.el("strong", { text: `${p.title || p.doc_id}${page ? ` · page ${page}` : ""}` });
  const mark = TG.el("mark", { id: "highlight", text: p.text.slice(from, to) });
  box.append(title, TG.el("br"), p.text.slice(0, from), mark, p.text.slice(to));
  if (window.matchMedia("(max-width: 760px)").matches || start !== null) mark.scrollIntoView({ block: "nearest" });
};

// tabs ---------------------------------------------------------------------------------------------
TG.showTab = (name) => {
  TG.notice("");
  document.querySelectorAll("#tabs button").forEach((b) => b.setAttribute("aria-selected", String(b.dataset.tab === name)));
  document.querySelectorAll(".tab").forEach((s) => { s.hidden = s.id !== `tab-${name}`; });
  document.dispatchEvent(new CustomEvent("tab", { detail: name }));
};
document.querySelectorAll("#tabs button").forEach((b) => { b.onclick = () => TG.showTab(b.dataset.tab); });

// workspaces -------------------------------------------------------------------------------------------
TG.loadWorkspaces = async (select = null) => {
  let names = [];
  try { names = await TG.call("/v1/workspaces"); TG.notice(""); } catch (e) { TG.notice(e.message); }
  const picker = $("workspace");
  const wanted = select ?? localStorage.getItem("thinkgraph.workspace") ?? picker.value;
  picker.innerHTML = "";
  if (!names.length) picker.append(TG.el("option", { value: "", text: "(no workspace yet: create one)" }));
  names.forEach((n) => picker.append(TG.el("option", { value: n, text: n })));
  if (names.includes(wanted)) picker.value = wanted;
  document.dispatchEvent(new CustomEvent("workspace", { detail: picker.value }));
};

$("workspace").onchange = () => {
  localStorage.setItem("thinkgraph.workspace", TG.ws());
  document.dispatchEvent(new CustomEvent("workspace", { detail: TG.ws() }));
};

$("new-workspace").onsubmit = async (event) => {
  event.preventDefault();
  const name = $("new-workspace-name").value.trim();
  try {
    await TG.call(`/v1/workspaces/${encodeURIComponent(name)}`, { method: "POST" });
    $("new-workspace-name").value = "";
    localStorage.setItem("thinkgraph.workspace", name);
    await TG.loadWorkspaces(name);
    TG.showTab("documents");
  } catch (e) { TG.notice(e.message); }
};

// the token: kept for this browser session, and as a same-site cookie so that /docs opens with it
$("token").value = sessionStorage.getItem("thinkgraph.token") ?? "";
$("token").onchange = () => {
  const token = $("token").value;
  sessionStorage.setItem("thinkgraph.token", token);
  document.cookie = `thinkgraph_token=${encodeURIComponent(token)}; path=/; SameSite=Strict`;
  TG.loadWorkspaces();
};

window.addEventListener("DOMContentLoaded", () => TG.loadWorkspaces());

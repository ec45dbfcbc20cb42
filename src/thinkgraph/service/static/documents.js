// The Documents tab: upload several files (indexed in the background), watch status and progress,
// re-index or delete.
"use strict";
(() => {
  const $ = TG.$;
  let timer = null;
  const ACTIVE = new Set(["queued", "pending", "processing"]);

  function statusCell(doc) {
    const cell = TG.el("td", {}, TG.el("span", { class: `badge status-${doc.status}`, text: doc.status }));
    if (doc.progress && ACTIVE.has(doc.status)) {
      const p = doc.progress;
      const bar = TG.el("progress", { max: String(p.total || 1), value: String(p.total ? p.done : 0), title: p.stage });
      cell.append(" ", bar, TG.el("span", { class: "muted", text: ` ${p.stage}${p.total ? ` ${p.done}/${p.total}` : ""}` }));
    }
    if (doc.error) cell.append(TG.el("div", { class: "error small", text: doc.error }));
    return cell;
  }

  async function act(doc, action) {
    try {
      if (action === "delete") {
        if (!window.confirm(`Delete ${doc.id} and everything only it supports?`)) return;
        await TG.call(TG.wsPath(`/documents/${encodeURIComponent(doc.id)}`), { method: "DELETE" });
      } else {
        await TG.call(TG.wsPath(`/documents/${encodeURIComponent(doc.id)}/reindex?wait=false`), { method: "POST" });
      }
      TG.notice("");
    } catch (e) { TG.notice(e.message); }
    refresh();
  }

  async function refresh() {
    clearTimeout(timer);
    if (!TG.ws()) { $("documents").tBodies[0].innerHTML = ""; $("doc-summary").textContent = "Create a workspace to add documents."; return; }
    let docs;
    try { docs = await TG.call(TG.wsPath("/documents")); } catch (e) { TG.notice(e.message); return; }
    const body = $("documents").tBodies[0];
    body.innerHTML = "";
    docs.forEach((doc) => {
      const actions = TG.el("td", { class: "actions" },
        TG.el("button", { type: "button", text: "Re-index", onclick: () => act(doc, "reindex") }),
        TG.el("button", { type: "button", class: "danger", text: "Delete", onclick: () => act(doc, "delete") }));
      body.append(TG.el("tr", { "data-id": doc.id }, TG.el("td", {}, TG.el("strong", { text: doc.title || doc.id }), TG.el("div", { class: "muted small", text: doc.id })),
        statusCell(doc), TG.el("td", { text: doc.n_chars ? doc.n_chars.toLocaleString() : "" }), actions));
    });
    const counts = docs.reduce((acc, d) => ({ ...acc, [d.status]: (acc[d.status] || 0) + 1 }), {});
    $("doc-summary").textContent = docs.length
      ? Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(" · ")
      : "No documents yet: upload text, Markdown, HTML, PDF, Word, PowerPoint, Excel, CSV, EPUB or OpenDocument files.";
    if (docs.some((d) => ACTIVE.has(d.status))) timer = setTimeout(refresh, 700);
  }

  async function upload(files) {
    if (!files.length) return;
    if (!TG.ws()) { TG.notice("Create a workspace first."); return; }
    const form = new FormData();
    [...files].forEach((f) => form.append("files", f, f.name));
    try {
      await TG.call(TG.wsPath("/uploads"), { method: "POST", body: form });
      TG.notice(`${files.length} file(s) queued for indexing.`, "info");
      $("files").value = "";
    } catch (e) { TG.notice(e.message); }
    refresh();
  }

  $("upload-form").onsubmit = (event) => { event.preventDefault(); upload($("files").files); };
  const drop = $("drop");
  drop.ondragover = (e) => { e.preventDefault(); drop.classList.add("over"); };
  drop.ondragleave = () => drop.classList.remove("over");
  drop.ondrop = (e) => { e.preventDefault(); drop.classList.remove("over"); upload(e.dataTransfer.files); };
  document.addEventListener("workspace", refresh);
  document.addEventListener("tab", (e) => { if (e.detail === "documents") refresh(); });
})();

// The Graph explorer tab: search nodes, expand neighbours (double-click), list communities, and read a
// node's details with its provenance and the passages that mention it.
"use strict";
(() => {
  const $ = TG.$;
  let cy = null;

  function ensureGraph() {
    if (!cy) {
      $("explorer").textContent = "";
      cy = TG.makeGraph($("explorer"), [], { onTap: showNode, onDoubleTap: expand });
    }
    return cy;
  }

  function addNodes(nodes, edges = [], center = null) {
    const graph = ensureGraph();
    const fresh = nodes.filter((n) => graph.getElementById(n.id).empty()).map((n) => TG.nodeElement(n));
    graph.add(fresh);
    edges.forEach((e, i) => {
      const key = `${e.src}|${e.dst}|${e.type}`;
      if (graph.getElementById(key).empty() && !graph.getElementById(e.src).empty() && !graph.getElementById(e.dst).empty()) {
        graph.add({ data: { ...TG.edgeElement(e, key).data, id: key } });
      }
    });
    if (center) graph.getElementById(center).addClass("center");
    graph.layout(TG.layout(graph.nodes().length)).run();
    TG.drawLegend($("explore-legend"), graph.nodes().map((n) => n.data("node").type));
    window.explorerReady = true;
  }

  async function expand(node) {
    try {
      const around = await TG.call(TG.wsPath(`/nodes/${encodeURIComponent(node.id)}/neighbors?limit=30`));
      addNodes([node, ...around.nodes], around.edges, node.id);
      showNode(node);
    } catch (e) { TG.notice(e.message); }
  }

  async function showNode(node) {
    const box = $("node");
    box.classList.remove("muted");
    let full;
    try { full = await TG.call(TG.wsPath(`/nodes/${encodeURIComponent(node.id)}`)); } catch (e) { box.textContent = e.message; return; }
    box.textContent = "";
    box.append(TG.el("h3", { text: TG.short(full.text, 200) }),
      TG.el("p", { class: "muted", text: `${full.type} · ${full.degree} edges · ${full.id}` }));
    const props = Object.entries(full.props || {}).filter(([k]) => !["page_starts"].includes(k));
    if (props.length) {
      const dl = TG.el("dl");
      props.slice(0, 12).forEach(([k, v]) => dl.append(TG.el("dt", { text: k }), TG.el("dd", { text: TG.short(typeof v === "string" ? v : JSON.stringify(v), 200) })));
      box.append(dl);
    }
    const sources = (full.provenance || []).filter((p) => p.chunk_id);
    box.append(TG.el("h4", { text: `Mentioned in ${sources.length} passage(s)` }));
    const list = TG.el("ul", { class: "sources" });
    sources.slice(0, 20).forEach((p) => list.append(TG.el("li", {}, TG.el("a", { href: "#", class: "source",
      onclick: (e) => { e.preventDefault(); TG.showTab("ask"); TG.showPassage(p.chunk_id, p.start, p.end); },
      text: `${p.doc_id} · chars ${p.start ?? "?"}–${p.end ?? "?"}` }))));
    box.append(list, TG.el("button", { type: "button", text: "Expand neighbours", onclick: () => expand(full) }));
  }

  function listHits(nodes, scored = true) {
    const list = $("hits");
    list.innerHTML = "";
    if (!nodes.length) list.append(TG.el("li", { class: "muted", text: "Nothing found." }));
    nodes.forEach((n) => list.append(TG.el("li", {}, TG.el("a", { href: "#", class: "hit", onclick: (e) => { e.preventDefault(); expand(n); },
      text: `${TG.short(n.text.replace(/\s+/g, " "), 90)}${scored && n.score !== undefined ? ` (${n.score.toFixed(2)})` : ""}` }))));
  }

  $("search-form").onsubmit = async (event) => {
    event.preventDefault();
    try {
      const q = encodeURIComponent($("search").value);
      const hits = await TG.call(TG.wsPath(`/search?q=${q}&type=${$("search-type").value}&k=15`));
      listHits(hits);
      if (hits.length) addNodes(hits.slice(0, 8));
    } catch (e) { TG.notice(e.message); }
  };

  $("show-communities").onclick = async () => {
    try {
      const found = await TG.call(TG.wsPath("/communities?limit=30"));
      listHits(found, false);
      if (!found.length) $("hits").firstChild.textContent = "No communities in this index.";
    } catch (e) { TG.notice(e.message); }
  };

  document.addEventListener("workspace", () => {
    if (cy) { cy.destroy(); cy = null; }
    $("hits").innerHTML = "";
    $("explore-legend").textContent = "";
  });
  document.addEventListener("tab", (e) => { if (e.detail === "explore" && cy) { cy.resize(); cy.fit(undefined, 20); } });
})();

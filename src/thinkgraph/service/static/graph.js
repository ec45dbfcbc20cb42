// Graph drawing shared by the evidence graph and the explorer: one colour and shape per node type
// with a legend, short wrapped labels (the full text on click), and the fCoSE layout with label
// sizes included so that nodes and labels do not overlap.
"use strict";
TG.NODE_STYLE = {
  entity: { color: "#3b6fb6", shape: "ellipse" },
  chunk: { color: "#e0a030", shape: "round-rectangle" },
  triplet: { color: "#8e5bb5", shape: "diamond" },
  proposition: { color: "#4caf7a", shape: "round-tag" },
  community: { color: "#d05a5a", shape: "hexagon" },
  document: { color: "#6b7785", shape: "rectangle" },
  node: { color: "#2a9d8f", shape: "ellipse" },
};
TG.styleOf = (type) => TG.NODE_STYLE[type] ?? TG.NODE_STYLE.node;

TG.nodeLabel = (node) => {
  if (node.type === "chunk") return TG.short(`${node.props?.title || node.props?.doc_id || "passage"}`, 24);
  return TG.short(String(node.text || node.id).replace(/\s+/g, " "), 28);
};

TG.drawLegend = (box, types) => {
  box.textContent = "";
  [...new Set(types)].forEach((t) => {
    const swatch = TG.el("span", { class: `swatch shape-${TG.styleOf(t).shape}` });
    swatch.style.background = TG.styleOf(t).color;
    box.append(TG.el("span", { class: "legend-item" }, swatch, t === "chunk" ? "passage" : t));
  });
};

TG.layout = (count) => (count > 1
  ? { name: "fcose", animate: false, randomize: true, nodeDimensionsIncludeLabels: true, nodeSeparation: 90,
      idealEdgeLength: 110, nodeRepulsion: 9000, packComponents: true, padding: 20 }
  : { name: "grid", padding: 40 });

TG.makeGraph = (container, elements, { onTap, onDoubleTap } = {}) => {
  const cy = cytoscape({
    container, elements, wheelSensitivity: 0.3, minZoom: 0.2, maxZoom: 3,
    style: [
      { selector: "node", style: {
        label: "data(label)", "font-size": 10, "text-wrap": "wrap", "text-max-width": 110, "text-valign": "bottom",
        "text-margin-y": 4, "background-color": "data(color)", shape: "data(shape)", width: 22, height: 22,
        "text-background-color": "#ffffff", "text-background-opacity": 0.85, "text-background-padding": 1,
        "min-zoomed-font-size": 6, "border-width": 0 } },
      { selector: "node.center", style: { width: 30, height: 30, "border-width": 3, "border-color": "#222" } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#111" } },
      { selector: "edge", style: {
        width: 1.5, "line-color": "#9aa5b5", "target-arrow-color": "#9aa5b5", "target-arrow-shape": "triangle",
        "arrow-scale": 0.7, "curve-style": "bezier", label: "data(label)", "font-size": 8, color: "#556",
        "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": 0.8,
        "min-zoomed-font-size": 7 } },
    ],
    layout: TG.layout(elements.filter((e) => !e.data.source).length),
  });
  if (onTap) cy.on("tap", "node", (event) => onTap(event.target.data("node")));
  if (onDoubleTap) cy.on("dbltap", "node", (event) => onDoubleTap(event.target.data("node")));
  return cy;
};

TG.nodeElement = (node, extra = {}) => {
  const style = TG.styleOf(node.type);
  return { data: { id: node.id, label: TG.nodeLabel(node), color: style.color, shape: style.shape, node, ...extra } };
};

TG.edgeElement = (edge, key) => ({
  data: { id: key, source: edge.src, target: edge.dst, label: TG.short(String(edge.props?.predicate || edge.type), 22) },
});

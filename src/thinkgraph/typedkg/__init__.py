"""Typed knowledge graphs at GRBench scale: compact integer ids, one CSR adjacency over all edges with
an edge-type column (a fixed number of files however many edge types: typedkg/adjacency.py),
node ids, texts and features in memory-mapped files, and a vector index over node texts. Built
once (from GRBench graph.json, typed triples, or a corpus-built index) and opened in milliseconds."""

from thinkgraph.typedkg.builder import TypedGraphBuilder
from thinkgraph.typedkg.graph import TypedGraph

__all__ = ["TypedGraph", "TypedGraphBuilder"]

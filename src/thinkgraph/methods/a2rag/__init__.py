"""A2RAG (Adaptive Agentic Graph Retrieval): an adaptive controller (gate, Triple-Check,
failure-aware rewrite, bounded retry) over a local-first agentic graph retriever."""

from thinkgraph.methods.a2rag.config import A2RAGConfig
from thinkgraph.methods.a2rag.controller import A2RAGMethod
from thinkgraph.methods.a2rag.retriever import AgenticRetriever, RetrievalState

__all__ = ["A2RAGConfig", "A2RAGMethod", "AgenticRetriever", "RetrievalState"]

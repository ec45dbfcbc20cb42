"""ToPG (proposition graph traversal): Suggestion-Selection cycles over propositions, entities and
passages. This package holds the graph and the Suggest step; see the issue for the modes still to come."""

from thinkgraph.methods.topg.config import ToPGConfig
from thinkgraph.methods.topg.graph import PropositionGraph, build_proposition_graph
from thinkgraph.methods.topg.suggest import Suggester

__all__ = ["PropositionGraph", "Suggester", "ToPGConfig", "build_proposition_graph"]

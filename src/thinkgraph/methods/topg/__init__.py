"""ToPG (proposition graph traversal): Suggestion-Selection cycles over propositions, entities and
passages. Naive and Local modes; the Global mode is still to come."""

from thinkgraph.methods.topg.config import ToPGConfig
from thinkgraph.methods.topg.graph import PropositionGraph, build_proposition_graph
from thinkgraph.methods.topg.method import ToPGMethod
from thinkgraph.methods.topg.suggest import Suggester

__all__ = ["PropositionGraph", "Suggester", "ToPGConfig", "ToPGMethod", "build_proposition_graph"]

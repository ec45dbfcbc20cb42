"""Think-on-Graph 3.0: the MACER loop of Retriever, Responser, Reflector and Constructor agents that
evolve the query and the evidence subgraph over a chunk-triplet-community index."""

from thinkgraph.methods.tog3.config import ToG3Config
from thinkgraph.methods.tog3.loop import ToG3Method

__all__ = ["ToG3Config", "ToG3Method"]

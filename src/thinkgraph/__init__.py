"""thinkgraph: a heterogeneous knowledge-graph index and graph-reasoning QA methods.

Importing this package has no side effects: no model is loaded, no file is read and no
environment variable is consulted until an index or client is created explicitly.
"""

from thinkgraph.errors import ThinkgraphError
from thinkgraph.models import Answer, Citation, Cost, Edge, Node, TraceStep

__all__ = ["Answer", "Citation", "Cost", "Edge", "Node", "ThinkgraphError", "TraceStep", "__version__"]
__version__ = "0.1.0"

"""Question-answering methods over one index. Each owns its prompts and loop."""

from thinkgraph.methods.base import Method, MethodContext
from thinkgraph.methods.registry import METHOD_NAMES, make_method

__all__ = ["METHOD_NAMES", "Method", "MethodContext", "make_method"]

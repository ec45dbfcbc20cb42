"""`kgr`: KG-grounded chain / tree / graph of thoughts with agent or automatic-exploration interaction."""

from thinkgraph.methods.kgr.config import KGRConfig
from thinkgraph.methods.kgr.method import KGRMethod

__all__ = ["KGRConfig", "KGRMethod"]

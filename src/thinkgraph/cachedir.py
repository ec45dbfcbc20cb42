"""The user cache folder of thinkgraph (derived files only: deleting it loses nothing but time).

``THINKGRAPH_CACHE_DIR`` names it; otherwise ``$XDG_CACHE_HOME/thinkgraph`` or ``~/.cache/thinkgraph``.
Read at call time, never at import."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def cache_root(part: str, env: Mapping[str, str] | None = None) -> Path:
    """The folder of one kind of cached file (``onnx`` models, retrieval ``views``)."""
    env = os.environ if env is None else env
    base = env.get("THINKGRAPH_CACHE_DIR") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "thinkgraph")
    return Path(base) / part

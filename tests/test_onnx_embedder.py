"""The query encoder without torch: the packaged MiniLM exported once to ONNX gives the vectors
sentence-transformers gives (within 1e-4), and a later process encodes queries without torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from thinkgraph.embed.local import LocalEmbedder
from thinkgraph.embed.onnx import MAX_DIFF

TEXTS = ["Who trained Lena Sorensen?", "The observatory on Harbor Hill was founded in 1887 by Adela Morrow.",
         "x", "Ünïcödé names — Bjørn Ødegård — and numbers 3.14 " * 30]


def test_onnx_export_matches_sentence_transformers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path))
    onnx_side = LocalEmbedder()
    queries = np.stack([onnx_side.embed([t])[0] for t in TEXTS])  # one text at a time: the ONNX path
    exported = list((tmp_path / "onnx").glob("*.onnx"))
    assert len(exported) == 1 and json.loads(exported[0].with_suffix(".json").read_text())["max_diff"] <= MAX_DIFF
    reference = LocalEmbedder()._model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert np.abs(queries - reference).max() <= MAX_DIFF

    # a later process: a query, and an indexing-sized batch (passages and names mixed), without torch
    probe = ("from thinkgraph.embed.local import LocalEmbedder; import sys, json; e = LocalEmbedder(); "
             "v = e.embed([sys.argv[1]])[0]; batch = e.embed(json.loads(sys.argv[2])); "
             "print(json.dumps({'torch': 'torch' in sys.modules, 'vec': v.tolist(), 'batch': batch.tolist()}))")
    done = subprocess.run([sys.executable, "-c", probe, TEXTS[0], json.dumps(TEXTS * 10)], capture_output=True,
                          text=True, check=True, timeout=300,
                          env={**__import__("os").environ, "THINKGRAPH_CACHE_DIR": str(tmp_path)})
    result = json.loads(done.stdout)
    assert result["torch"] is False
    assert np.abs(np.array(result["vec"]) - reference[0]).max() <= MAX_DIFF
    assert np.abs(np.array(result["batch"]) - np.tile(reference, (10, 1))).max() <= MAX_DIFF


def test_the_query_encoder_loads_once_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    embedder = LocalEmbedder()
    loads: list[str] = []

    def slow_load() -> None:
        loads.append(threading.current_thread().name)
        time.sleep(0.2)  # the first embed arrives while the background load runs

    monkeypatch.setattr(embedder, "_load_onnx", slow_load)
    monkeypatch.setattr(embedder, "_torch", lambda texts: np.ones((len(texts), embedder.dim), dtype=np.float32))
    embedder.prepare_queries()
    vector = embedder.embed(["a question"])  # waits for the load, which returned no encoder: torch then
    embedder.prepare_queries()  # loaded already: nothing starts
    assert loads == ["thinkgraph-query-encoder"] and vector.shape == (1, embedder.dim)

"""Embedders (packaged default offline, remote endpoint) and vector search (exact and HNSW)."""

from __future__ import annotations

import numpy as np
import pytest

from support import FakeOpenAIServer
from thinkgraph.config import EmbeddingSettings
from thinkgraph.embed.factory import make_embedder
from thinkgraph.embed.local import LocalEmbedder
from thinkgraph.embed.vector_index import VectorIndex
from thinkgraph.errors import ConfigError, LLMUnavailableError


def test_packaged_default_model_loads_offline() -> None:
    embedder = make_embedder(EmbeddingSettings())
    assert embedder.name == "sentence-transformers/all-MiniLM-L6-v2"
    vecs = embedder.embed(["The cat sat on the mat.", "A cat was sitting on a rug.", "Stock prices fell."])
    assert vecs.shape == (3, 384) and embedder.dim == 384
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2] + 0.3
    np.testing.assert_allclose(embedder.embed(["Stock prices fell."])[0], vecs[2], atol=1e-5)


def test_unknown_local_model_is_refused_without_download(tmp_path: object) -> None:
    with pytest.raises(ConfigError, match="never downloaded"):
        LocalEmbedder("BAAI/bge-large-en")


def test_remote_embedder_against_local_server(fake_server: FakeOpenAIServer) -> None:
    embedder = make_embedder(EmbeddingSettings(provider="openai", base_url=fake_server.url, model="bge",
                                               batch_size=2))
    vecs = embedder.embed(["a b", "c d", "e f"])
    assert vecs.shape == (3, 16) and embedder.name == "openai:bge" and embedder.dim == 16
    assert [r["input"] for r in fake_server.requests] == [["a b", "c d"], ["e f"]]
    with pytest.raises(ConfigError, match="base_url"):
        make_embedder(EmbeddingSettings(provider="openai"))


def test_remote_embedder_unreachable() -> None:
    from thinkgraph.embed.remote import RemoteEmbedder

    embedder = RemoteEmbedder("http://127.0.0.1:9/v1", "m", max_retries=0)
    with pytest.raises(LLMUnavailableError, match="embedding endpoint"):
        embedder.embed(["x"])


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_exact_search_matches_brute_force() -> None:
    rng = np.random.default_rng(0)
    vecs = _unit(rng, 500, 32)
    ids = [f"n{i}" for i in range(500)]
    index = VectorIndex(ids, vecs)
    q = _unit(rng, 1, 32)[0]
    expected = np.argsort(-(vecs @ q))[:10]
    assert [h[0] for h in index.search(q, 10)] == [ids[i] for i in expected]
    assert not index.approximate and VectorIndex([], np.zeros((0, 0))).search(q, 3) == []


def test_hnsw_above_threshold_has_high_recall() -> None:
    rng = np.random.default_rng(1)
    vecs = _unit(rng, 3000, 32)
    ids = [f"n{i}" for i in range(3000)]
    ann = VectorIndex(ids, vecs, ann_threshold=1000)
    exact = VectorIndex(ids, vecs, ann_threshold=10**9)
    assert ann.approximate
    recall = []
    for q in _unit(rng, 20, 32):
        truth = {h[0] for h in exact.search(q, 10)}
        recall.append(len(truth & {h[0] for h in ann.search(q, 10)}) / 10)
    assert np.mean(recall) >= 0.9
    top_id, top_score = ann.search(vecs[5], 1)[0]
    assert top_id == "n5" and top_score == pytest.approx(1.0, abs=1e-4)


def _hashing_reference(texts: list[str], dim: int) -> np.ndarray:
    """Signed feature hashing written word by word, as the embedder's definition reads."""
    import hashlib
    import re

    out = np.zeros((len(texts), dim))
    for i, text in enumerate(texts):
        for word in re.findall(r"\w+", text.lower()):
            h = int.from_bytes(hashlib.md5(word.encode()).digest(), "big")
            out[i, h % dim] += 1.0 if (h >> 64) % 2 else -1.0
    norms = np.linalg.norm(out, axis=1)
    out[norms == 0, 0] = 1.0
    norms[norms == 0] = 1.0
    return out / norms[:, None]


@pytest.mark.parametrize("dim", [384, 7])
def test_hashing_embedder_matches_its_word_by_word_definition(dim: int) -> None:
    from thinkgraph.embed.hashing import HashingEmbedder

    texts = ["Lena Sorensen trained at the observatory", "", "!!!", "the the the", "Bjørn Ødegård 1887",
             "word " * 300, "a b c d e f g h i j k l m n o p q r s t u v w x y z"]
    ours = HashingEmbedder(dim).embed(texts)
    assert ours.dtype == np.float32 and ours.shape == (len(texts), dim)
    np.testing.assert_allclose(ours, _hashing_reference(texts, dim), atol=1e-6)
    assert HashingEmbedder(dim).embed([]).shape == (0, dim)

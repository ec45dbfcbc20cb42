"""File names of a typed-graph directory and the id hash used for look-ups."""

from __future__ import annotations

import hashlib

import numpy as np

FORMAT_VERSION = 2  # 2: one CSR over all edges with an edge-type column (1: one CSR per edge type)
EDGE_TABLE_VERSION = 2
READABLE_VERSIONS = (1, 2)
META = "meta.json"
NODE_TYPES = "node_type.npy"
IDS, IDS_OFFSETS = "ids.bin", "ids.off.npy"
TEXTS, TEXTS_OFFSETS = "texts.bin", "texts.off.npy"
FEATURES, FEATURES_START, FEATURES_END = "features.bin", "features.start.npy", "features.end.npy"
ID_HASHES, ID_ORDER = "id_hash.npy", "id_order.npy"
VECTORS = "vectors.faiss"
EDGE_INDPTR, EDGE_INDICES, EDGE_TYPES = "edges.indptr.npy", "edges.indices.npy", "edges.type.npy"
CSR_DIR = "csr"  # format 1: csr/<k>.indptr.npy and csr/<k>.indices.npy per edge type k


def id_hash(ext_id: str) -> int:
    """A stable 63-bit hash of an external id (sorted hashes + a permutation replace a dict of millions
    of strings; a collision is resolved by comparing the ids themselves)."""
    return int.from_bytes(hashlib.blake2b(ext_id.encode(), digest_size=8).digest(), "little") >> 1


def offsets(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out

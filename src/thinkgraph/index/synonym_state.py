"""What the synonym stage keeps between runs: the HNSW graph of the entity vectors it has seen, which
entity sits at which position, and the pairs it found, so that the next run searches only the new
entities (index/resolve.py).

The files live beside the index (``{store.path}.ann/``: the index file's folder for SQLite, this
host's cache folder for PostgreSQL) under a fresh token per save; the store's manifest names the token
that matches its SYNONYM edges, written in the same transaction as them. A missing, foreign or stale
copy (another host built the stages, a run died between writing the files and committing) is never
used: the stage then rebuilds from the entity vectors, which gives the same edges, only slower."""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from thinkgraph.graph.ann import PairIndex
from thinkgraph.npyfiles import load_npy, load_npz
from thinkgraph.store.base import GraphStore

log = logging.getLogger(__name__)

STATE_META = "synonyms_ann"  # the token of the state files that match the SYNONYM edges
STATE_FORMAT = 1


@dataclass
class SynonymState:
    """Positions are never reused: ``ids[p]`` is the entity whose vector sits at position p of
    ``index`` (``index.alive[p]`` False once it left); ``pairs`` are the positions of every linked pair."""

    threshold: float
    index: PairIndex
    ids: list[str] = field(default_factory=list)
    pair_a: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    pair_b: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    pair_cos: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    position: int | None = None  # the index's change-log position its vectors were read at (None: no log)

    @classmethod
    def empty(cls, threshold: float, dim: int) -> SynonymState:
        return cls(threshold, PairIndex.empty(dim))

    def position_of(self) -> dict[str, int]:
        """Live entities only."""
        alive = self.index.alive
        return {node_id: p for p, node_id in enumerate(self.ids) if alive[p]}

    def add(self, ids: list[str], vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
        positions = self.index.add(vectors)
        self.ids.extend(ids)
        return positions

    def remove(self, positions: npt.NDArray[np.int64]) -> None:
        self.index.remove(positions)
        live = self.index.alive
        keep = live[self.pair_a] & live[self.pair_b]
        self.pair_a, self.pair_b, self.pair_cos = self.pair_a[keep], self.pair_b[keep], self.pair_cos[keep]

    def extend_pairs(self, pairs: list[tuple[int, int, float]]) -> None:
        if pairs:
            a, b, c = zip(*pairs, strict=True)
            self.pair_a = np.concatenate([self.pair_a, np.array(a, dtype=np.int64)])
            self.pair_b = np.concatenate([self.pair_b, np.array(b, dtype=np.int64)])
            self.pair_cos = np.concatenate([self.pair_cos, np.array(c, dtype=np.float32)])

    def id_pairs(self) -> dict[tuple[str, str], float]:
        """Every kept pair by entity ids, the smaller id first (as the edges are written)."""
        out: dict[tuple[str, str], float] = {}
        for a, b, c in zip(self.pair_a.tolist(), self.pair_b.tolist(), self.pair_cos.tolist(), strict=True):
            x, y = self.ids[a], self.ids[b]
            out[(x, y) if x < y else (y, x)] = c
        return out


def state_folder(store: GraphStore) -> Path:
    return Path(f"{store.path}.ann")


def load_state(store: GraphStore, threshold: float, dim: int | None) -> SynonymState | None:
    """The state matching the store's SYNONYM edges, or None (then the stage rebuilds). ``dim``: the
    entity vectors' dimension (None: whatever the state's)."""
    token = store.get_meta(STATE_META)
    if not token:
        return None
    stem = state_folder(store) / f"synonyms-{token}"
    try:
        meta = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
        if meta.get("format") != STATE_FORMAT or meta.get("threshold") != threshold or \
                (dim is not None and meta.get("dim") != dim):
            return None
        index = PairIndex.load(stem)
        ids = [i.decode() for i in load_npy(stem.with_suffix(".ids.npy")).tolist()]
        pairs = load_npz(stem.with_suffix(".pairs.npz"))
        position = meta.get("position")
        state = SynonymState(threshold, index, ids, pairs["a"], pairs["b"], pairs["cos"],
                             position if isinstance(position, int) else None)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:  # faiss raises RuntimeError on a bad file
        log.info("synonym index state %s not usable (%s); rebuilding it", stem, exc)
        return None
    if len(state.ids) != index.size:
        return None
    return state


def save_state(store: GraphStore, state: SynonymState) -> str:
    """Writes the files under a new token and returns it; the caller records the token in the
    transaction that writes the edges, then calls ``prune_states``."""
    token = secrets.token_hex(8)
    folder = state_folder(store)
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"synonyms-{token}"
    state.index.save(stem)
    np.save(stem.with_suffix(".ids.npy"), np.array([i.encode() for i in state.ids], dtype=bytes),
            allow_pickle=False)
    np.savez(stem.with_suffix(".pairs.npz"), a=state.pair_a, b=state.pair_b, cos=state.pair_cos)
    meta = {"format": STATE_FORMAT, "threshold": state.threshold, "dim": state.index.dim, "position": state.position}
    stem.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")  # last: a whole state or none
    return token


def prune_states(store: GraphStore, keep: str) -> None:
    """Files of every other token go (older states, a save whose transaction never committed)."""
    folder = state_folder(store)
    for path in folder.glob("synonyms-*"):
        if not path.name.startswith(f"synonyms-{keep}."):
            path.unlink(missing_ok=True)

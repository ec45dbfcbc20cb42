"""Where the entity graph changed since the communities were last built: a fingerprint per entity of
its edges (neighbours and weights), kept beside the index like the synonym state
(index/synonym_state.py) under a token the manifest names. An entity whose fingerprint differs, or that
is new, is where Leiden may move nodes (graph/leiden.py); every other node keeps its community, until
MAX_DRIFT of the graph changed since every node last could. Without a usable copy (another host built
the stages, the files were deleted) every node may move: the warm start from the stored partition
still holds, only less locally."""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from thinkgraph.index.synonym_state import state_folder
from thinkgraph.npyfiles import load_npz
from thinkgraph.store.base import GraphStore

log = logging.getLogger(__name__)

STATE_META = "communities_state"  # the token of the fingerprints that match the stored communities
# Once this share of the nodes changed since every node last could move, every node may move again
# (ours): local updates alone would let the partition drift from what a rebuild finds (a scale corpus
# grown by a quarter four times: modularity 8.5% under a rebuild's; with this rule 0.9%), and a change
# this large rewrites most communities anyway.
MAX_DRIFT = 0.10
_MIX = np.uint64(0x9E3779B97F4A7C15)  # a 64-bit odd constant (Fibonacci hashing) that spreads the bits

Fingerprints = npt.NDArray[np.uint64]


def _id_hashes(ids: Sequence[str]) -> Fingerprints:
    raw = b"".join(hashlib.blake2b(i.encode(), digest_size=8).digest() for i in ids)
    return np.frombuffer(raw, dtype=np.uint64).copy()


def fingerprints(ids: Sequence[str], edges: Sequence[tuple[int, int]], weights: Sequence[float]) -> Fingerprints:
    """Per node, an order-independent sum (mod 2**64) of its edges' mixed (neighbour, weight)."""
    out = np.zeros(len(ids), dtype=np.uint64)
    if not len(edges):
        return out
    pairs = np.asarray(edges, dtype=np.int64)
    bits = np.asarray(weights, dtype=np.float64).view(np.uint64)
    own = _id_hashes(ids)
    with np.errstate(over="ignore"):
        np.add.at(out, pairs[:, 0], (own[pairs[:, 1]] ^ bits) * _MIX)
        np.add.at(out, pairs[:, 1], (own[pairs[:, 0]] ^ bits) * _MIX)
    return out


@dataclass(frozen=True, slots=True)
class Change:
    """Per node, whether its edges changed since the last build (new nodes too), and the share of nodes
    changed since the last build in which every node could move (the baseline)."""

    changed: list[bool]
    drift: float
    baseline: Fingerprints  # per node, its fingerprint at the baseline (0 for a node new since)


@dataclass(frozen=True)
class SavedState:
    """What the last build left: per entity (``ids``) its fingerprints then and at the baseline, and its
    community at each level (``levels[l][i]``: an index into ``communities``, -1 for none)."""

    ids: list[str]
    fingerprints: Fingerprints
    baseline: Fingerprints
    levels: npt.NDArray[np.int32]
    communities: list[str]

    def change(self, ids: Sequence[str], current: Fingerprints) -> Change:
        last = dict(zip(self.ids, self.fingerprints.tolist(), strict=True))
        base = dict(zip(self.ids, self.baseline.tolist(), strict=True))
        values = current.tolist()
        changed = [last.get(node_id) != fp for node_id, fp in zip(ids, values, strict=True)]
        baseline = np.array([base.get(node_id, 0) for node_id in ids], dtype=np.uint64)
        drifted = sum(base.get(node_id) != fp for node_id, fp in zip(ids, values, strict=True))
        return Change(changed, drifted / max(1, len(ids)), baseline)

    def edge_counts(self, present: npt.NDArray[np.bool_] | None = None) -> tuple[int, int]:
        """The SUMMARY_FOR and CHILD_OF edges this state stands for; with ``present`` (per entity of the
        state, whether it is still in the graph) those left once the others were deleted with their edges."""
        kept = self.levels if present is None else self.levels[:, present]
        members = int((kept >= 0).sum())
        children = len({int(c) for c in self.levels[1:].ravel().tolist() if c >= 0})
        return members, children


def load_state(store: GraphStore) -> SavedState | None:
    """None when there is no usable state."""
    token = store.get_meta(STATE_META)
    if not token:
        return None
    path = state_folder(store) / f"communities-{token}.npz"
    try:
        saved = load_npz(path)
        return SavedState([i.decode() for i in saved["ids"].tolist()], saved["fingerprints"], saved["baseline"],
                          saved["levels"], [c.decode() for c in saved["communities"].tolist()])
    except (OSError, ValueError, KeyError) as exc:
        log.info("community state %s not usable (%s); every node may move", path, exc)
        return None


def save_state(store: GraphStore, state: SavedState) -> str:
    """Writes the file under a new token and returns it (recorded by the caller's transaction)."""
    token = secrets.token_hex(8)
    folder = state_folder(store)
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / f"communities-{token}.npz", ids=np.array([i.encode() for i in state.ids], dtype=bytes),
             fingerprints=state.fingerprints, baseline=state.baseline, levels=state.levels,
             communities=np.array([c.encode() for c in state.communities], dtype=bytes))
    return token


def prune(store: GraphStore, keep: str) -> None:
    for path in state_folder(store).glob("communities-*"):
        if path.name != f"communities-{keep}.npz":
            path.unlink(missing_ok=True)

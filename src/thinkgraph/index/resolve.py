"""Entity resolution. Names are unified by normalisation (they share one id); entities whose
embeddings have cosine >= threshold are linked by SYNONYM edges (ToPG App. A), which keep the
decision auditable and reversible instead of merging nodes.

The pairs come from an HNSW graph over the entity vectors (graph/ann.py), about n log n where the
all-pairs product was quadratic; the graph is kept between runs (index/synonym_state.py), so a run
searches only the entities that are new since the last one, and entities that left are tombstoned (the
store already dropped their edges with them). Names that differ in their numbers or dates are never
linked, however close their vectors: "1892" and "1895", "9 May 1964" and "4 April 1964", "50 Hz" and
"60 Hz" embed almost alike and name different things."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from thinkgraph.graph.ann import exact_pairs
from thinkgraph.index.synonym_state import STATE_META, SynonymState, load_state, prune_states, save_state
from thinkgraph.models import Edge, EdgeType, NodeType
from thinkgraph.names import MONTHS
from thinkgraph.store.base import GraphStore

log = logging.getLogger(__name__)

# Tombstones beyond this share of the HNSW graph rebuild it from the live vectors (ours: a removal
# costs nothing until then; the rebuild, about n log n, comes once per that many removals).
MAX_DEAD_SHARE = 0.25

_DATE_PART = re.compile(r"\d+(?:[.,]\d+)*[a-z]*|\b(?:" + "|".join(MONTHS) + r")\b")
_SHORT_MONTH = {m[:3]: m for m in MONTHS if len(m) > 4}
_WORD = re.compile(r"\w+")  # the hashing embedder's words (embed/hashing.py)


def date_key(name: str) -> tuple[str, ...]:
    """The numbers and month names of a name, in any order ("5 March 1892" and "March 5, 1892" share
    one key; "1990" and "1990s" do not). Thousands separators are dropped."""
    parts: list[str] = []
    for match in _DATE_PART.finditer(name.casefold()):
        part = match.group(0)
        if part[0].isdigit():
            part = part.replace(",", "")
        parts.append(_SHORT_MONTH.get(part, part))
    return tuple(sorted(parts))


def may_link(a: str, b: str) -> bool:
    """Two names may be synonyms only when they state the same numbers and dates."""
    return date_key(a) == date_key(b)


@dataclass(frozen=True, slots=True)
class NameWords:
    """A name's word counts and their sum of squares, computed once per name (a name meets many
    candidates: at a million passages 517k entity names gave 4.5M candidate pairs)."""

    counts: Counter[str]
    squares: int

    @classmethod
    def of(cls, text: str) -> NameWords:
        counts = Counter(_WORD.findall(text.lower()))
        return cls(counts, sum(n * n for n in counts.values()))

    def cosine(self, other: NameWords) -> float:
        small, large = (self, other) if len(self.counts) <= len(other.counts) else (other, self)
        dot = sum(n * large.counts[w] for w, n in small.counts.items() if w in large.counts)
        norm = math.sqrt(self.squares * other.squares)
        return dot / norm if norm else 0.0


def word_cosine(a: str, b: str) -> float:
    """The cosine of two texts' word counts: what the hashing embedder's vectors stand for, without the
    collisions of its hashing trick (two different names whose words fall into the same slots have
    cosine 1 there; a million passages' names gave 4.5 million such pairs)."""
    return NameWords.of(a).cosine(NameWords.of(b))


@dataclass(frozen=True, slots=True)
class SynonymUpdate:
    edges: int  # SYNONYM edges in the index afterwards
    new_entities: int  # entities searched this run
    removed_entities: int  # entities that left since the last run
    rebuilt: bool  # the HNSW graph was built from scratch


def exact_synonym_pairs(ids: Sequence[str], vectors: npt.NDArray[np.float32], names: Sequence[str],
                        threshold: float, *, lexical: bool = False) -> dict[tuple[str, str], float]:
    """The reference (quadratic): every pair at cosine >= threshold whose names may link."""
    out: dict[tuple[str, str], float] = {}
    for a, b, cos in exact_pairs(vectors, threshold):
        if may_link(names[a], names[b]) and (not lexical or word_cosine(names[a], names[b]) >= threshold - 1e-6):
            x, y = ids[a], ids[b]
            out[(x, y) if x < y else (y, x)] = cos
    return out


def resolve_entities(store: GraphStore, threshold: float, *, rebuild: bool = False, lexical: bool = False) -> int:
    """Bring the SYNONYM edges up to date with the entity vectors. Returns their count."""
    return update_synonyms(store, threshold, rebuild=rebuild, lexical=lexical).edges


def update_synonyms(store: GraphStore, threshold: float, *, rebuild: bool = False,
                    lexical: bool = False) -> SynonymUpdate:
    """``lexical``: the vectors are hashed word counts (the hashing embedder), so a pair must also reach
    the threshold on the words themselves (see ``word_cosine``)."""
    position = store.change_position()  # (read first: whatever changes after it is seen next run)
    state = None if rebuild else load_state(store, threshold, None)
    followed = _touched(store, state) if state is not None else None
    if followed is not None and state is not None:
        new_ids, new_vectors, gone = followed
    else:
        ids, vectors = _all_vectors(store)
        if not ids:
            with store.transaction():
                store.delete_edges_of_type(EdgeType.SYNONYM)
                store.set_meta(STATE_META, "")
            return SynonymUpdate(0, 0, 0, True)
        dim = int(vectors.shape[1])
        state = None if rebuild or state is None or state.index.dim != dim else state
        if state is None:
            state = SynonymState.empty(threshold, dim)
        new_ids, new_rows, gone = _diff(state, ids, vectors)
        new_vectors = vectors[new_rows]
    fresh = not state.ids
    state.remove(gone)
    if state.index.dead_share > MAX_DEAD_SHARE:
        state = _compact(state)
        fresh = True
    positions = state.add(new_ids, new_vectors) if new_ids else np.zeros(0, dtype=np.int64)
    state.extend_pairs(_linkable(store, state, state.index.pairs_from(positions, threshold),
                                 threshold if lexical else None))
    state.position = position
    edges = _write(store, state, rewrite=fresh)
    log.info("synonyms: %d new entities searched, %d gone, %d edges", len(new_ids), len(gone), edges)
    return SynonymUpdate(edges, len(new_ids), len(gone), fresh)


def _all_vectors(store: GraphStore, node_ids: Sequence[str] | None = None
                 ) -> tuple[list[str], npt.NDArray[np.float32]]:
    """The entity vectors (of ``node_ids`` only, when given) in id order: the same graph whatever the
    order they were written in."""
    ids, vectors = store.get_vectors([NodeType.ENTITY], node_ids=node_ids)
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return [ids[i] for i in order], (np.ascontiguousarray(vectors[order], dtype=np.float32) if ids else vectors)


def _touched(store: GraphStore, state: SynonymState
             ) -> tuple[list[str], npt.NDArray[np.float32], npt.NDArray[np.int64]] | None:
    """What ``_diff`` finds, read from the entities the change log says were touched since the state
    was saved instead of from every entity vector (1.3 s of adding 100 documents to 100k passages).
    None when the log does not reach back to the state."""
    changes = store.changes_since(state.position) if state.position is not None else None
    if changes is None:
        return None
    touched = sorted(changes.vectors | changes.nodes)
    ids, vectors = _all_vectors(store, touched)
    if not ids:
        vectors = np.zeros((0, state.index.dim), dtype=np.float32)
    if vectors.shape[1] != state.index.dim:
        return None
    new_ids, new_rows, gone = _diff(state, ids, vectors, scope=touched)
    return new_ids, vectors[new_rows], gone


def _diff(state: SynonymState, ids: list[str], vectors: npt.NDArray[np.float32], *,
          scope: Sequence[str] | None = None) -> tuple[list[str], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(ids to add, their rows in ``vectors``, positions to tombstone). An entity whose vector changed
    (an edit, a merge) leaves and comes back, so its pairs are searched again. ``scope``: the only
    entities that may have changed (``ids`` holds those of them still there); all when None."""
    known = state.position_of()
    if scope is not None:
        known = {i: known[i] for i in scope if i in known}
    row_of = {node_id: r for r, node_id in enumerate(ids)}
    kept = [(row_of[i], p) for i, p in known.items() if i in row_of]
    gone = [p for i, p in known.items() if i not in row_of]
    if kept:
        rows, positions = (np.array(x, dtype=np.int64) for x in zip(*kept, strict=True))
        changed = np.any(state.index.vectors(positions) != vectors[rows], axis=1)
        gone.extend(positions[changed].tolist())
        stay = {ids[r] for r in rows[~changed].tolist()}
    else:
        stay = set()
    new_rows = np.array([r for r, node_id in enumerate(ids) if node_id not in stay], dtype=np.int64)
    return [ids[r] for r in new_rows.tolist()], new_rows, np.array(sorted(gone), dtype=np.int64)


def _compact(state: SynonymState) -> SynonymState:
    """A new HNSW graph of the live vectors, keeping the pairs among them."""
    live = np.flatnonzero(state.index.alive)
    fresh = SynonymState.empty(state.threshold, state.index.dim)
    fresh.add([state.ids[p] for p in live.tolist()], state.index.vectors(live))
    moved = np.full(state.index.size, -1, dtype=np.int64)
    moved[live] = np.arange(len(live))
    fresh.pair_a, fresh.pair_b, fresh.pair_cos = moved[state.pair_a], moved[state.pair_b], state.pair_cos
    return fresh


def _linkable(store: GraphStore, state: SynonymState, pairs: list[tuple[int, int, float]],
              words_at: float | None) -> list[tuple[int, int, float]]:
    """The pairs whose names state the same numbers and dates, and (``words_at``) whose words reach
    that cosine; names are read for the candidates only."""
    wanted = sorted({p for a, b, _ in pairs for p in (a, b)})
    names = {n.id: n.text for n in store.get_nodes([state.ids[p] for p in wanted])}
    texts = {p: names.get(state.ids[p], "") for p in wanted}
    dates = {p: date_key(t) for p, t in texts.items()}  # each name's features once, not once per pair
    words = {p: NameWords.of(t) for p, t in texts.items()} if words_at is not None else {}
    kept = []
    for a, b, c in pairs:
        if dates[a] == dates[b] and (words_at is None or words[a].cosine(words[b]) >= words_at - 1e-6):
            kept.append((a, b, c))
    return kept


def _write(store: GraphStore, state: SynonymState, *, rewrite: bool) -> int:
    """Make the SYNONYM edges equal the state's pairs: only the missing ones are added, unless edges
    the state does not hold are there (a fresh state, a merge that moved edges), when all are rewritten."""
    wanted = state.id_pairs()
    have = set() if rewrite else {(e.src, e.dst) for e in store.iter_edges([EdgeType.SYNONYM])}
    rewrite = rewrite or not have <= wanted.keys()
    token = save_state(store, state)
    with store.transaction():
        if rewrite:
            store.delete_edges_of_type(EdgeType.SYNONYM)
            have = set()
        store.add_edges(Edge(a, b, EdgeType.SYNONYM, weight=c, props={"cosine": round(c, 4)})
                        for (a, b), c in sorted(wanted.items()) if (a, b) not in have)
        store.set_meta(STATE_META, token)
    prune_states(store, token)
    return len(wanted)

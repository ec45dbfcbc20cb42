"""Stable content-hash identifiers for nodes and edges."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_WS = re.compile(r"\s+")
_PUNCT_EDGE = re.compile(r"^[\W_]+|[\W_]+$")


def content_hash(*parts: str, length: int = 16) -> str:
    """Hex digest of the parts joined unambiguously."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:length]


def normalize_name(name: str) -> str:
    """Canonical form of an entity name: NFKC, case-folded, single spaces, no edge punctuation."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _WS.sub(" ", text).strip()
    return _PUNCT_EDGE.sub("", text)


def document_node_id(doc_id: str) -> str:
    return f"doc:{doc_id}"


def chunk_id(text: str) -> str:
    return f"chunk:{content_hash(text)}"


def entity_id(name: str) -> str:
    return f"ent:{content_hash(normalize_name(name))}"


def triplet_id(subject: str, predicate: str, obj: str) -> str:
    return f"tri:{content_hash(normalize_name(subject), predicate.strip().casefold(), normalize_name(obj))}"


def proposition_id(text: str) -> str:
    return f"prop:{content_hash(' '.join(text.split()).casefold())}"


def community_id(level: int, member_ids: list[str]) -> str:
    return f"com:{level}:{content_hash(*sorted(member_ids))}"


def edge_id(src: str, edge_type: str, dst: str, label: str = "") -> str:
    """Id of an edge; ``label`` separates parallel edges of one type (an OPENREL predicate)."""
    return f"e:{content_hash(src, edge_type, dst, label)}"

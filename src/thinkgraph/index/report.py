"""What an indexing run reports."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class IndexReport:
    indexed: int = 0
    unchanged: int = 0
    updated: int = 0
    failed: int = 0
    chunks: int = 0
    extraction_failures: int = 0
    skipped: list[str] = field(default_factory=list)
    synonyms: int = 0
    synonyms_searched: int = 0  # entities whose synonyms this run searched (the new ones, or all on a rebuild)
    communities: int = 0
    community_levels: int = 0
    communities_written: int = 0  # communities new or changed in this run (the rest were kept)
    summary_failures: int = 0  # community summaries the model failed (they keep the model-free text)
    communities_skipped: bool = False  # by [index] communities (see config.py)
    embedded: int = 0
    stopped: str | None = None  # why the run stopped early (budget), if it did
    rebuilt_stages: list[str] = field(default_factory=list)  # derived stages this run (re)built
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage (see index/stages.py)

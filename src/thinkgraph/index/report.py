"""What an indexing run reports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from thinkgraph.models import Cost

INDEX_STEP_PREFIX = "index."  # the LLM steps of indexing (extraction, summaries), as the usage meter names them


@dataclass(slots=True)
class IndexReport:
    indexed: int = 0
    unchanged: int = 0
    updated: int = 0
    failed: int = 0
    chunks: int = 0
    extraction_failures: int = 0
    skipped: list[str] = field(default_factory=list)  # "SOURCE: REASON", one per file or record not indexed
    skipped_by_kind: dict[str, int] = field(default_factory=dict)  # their count per kind of reason (loaders.py)
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
    llm_calls: dict[str, int] = field(default_factory=dict)  # this run's calls to the model per step (index.*)
    llm_cached_calls: int = 0  # this run's calls answered from the index's LLM cache instead
    extractor: str = ""  # the extractor this run used for new and changed documents
    # The extractor the index was built with, when this run's is another and met unchanged documents:
    # those keep their extraction (only new and changed documents are extracted again).
    extractor_kept: str | None = None


def count_skip(report: IndexReport, line: str, kind: str) -> None:
    report.skipped.append(line)
    report.skipped_by_kind[kind] = report.skipped_by_kind.get(kind, 0) + 1


def kept_extractor(recorded: str | None, used: str, unchanged: int) -> str | None:
    """``recorded`` (the index's extractor) when a run with extractor ``used`` left ``unchanged``
    documents as they were extracted. Imported facts beside an extractor (``nolm+import``) are that
    extractor's; a run that only imports (``import``) adds its facts' own documents."""
    bases = {name.removesuffix("+import") for name in (recorded or "", used)}
    if not unchanged or not recorded or len(bases) == 1 or "import" in bases:
        return None
    return recorded


def index_call_counts(steps: Mapping[str, Cost]) -> dict[str, tuple[int, int]]:
    """(calls, cached calls) per indexing step of a usage meter's ``steps``: taken before and after a
    run, their difference is the run's (a service's meter also counts questions and earlier runs)."""
    return {step: (c.calls, c.cached_calls) for step, c in steps.items() if step.startswith(INDEX_STEP_PREFIX)}


def record_llm_calls(report: IndexReport, before: Mapping[str, tuple[int, int]],
                     after: Mapping[str, tuple[int, int]]) -> None:
    for step, (calls, cached) in after.items():
        calls_before, cached_before = before.get(step, (0, 0))
        if calls > calls_before:
            report.llm_calls[step] = calls - calls_before
        report.llm_cached_calls += cached - cached_before

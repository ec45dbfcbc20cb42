"""Crash-and-resume trials: `thinkgraph index` killed with SIGKILL at a random moment, then run again
to completion, compared with an uninterrupted run of the same input. Used by the robustness test and
by benchmarks/robustness.py (twenty trials per extractor).

The comparison is by content: node ids are content hashes, so the same input must give the same
nodes (with their text), edges and vectors, whatever moment the first run died."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from thinkgraph.store.sqlite import SQLiteStore

EXTRACTION_REPLY = json.dumps({
    "entities": [{"entity_name": "Adela Morrow", "entity_type": "Person", "entity_description": "A shipbuilder."},
                 {"entity_name": "Harbor Hill Observatory", "entity_type": "Place", "entity_description": "An "
                  "observatory."}],
    "relationships": [{"source_entity": "Adela Morrow", "target_entity": "Harbor Hill Observatory",
                       "relation": "founded", "relationship_description": "She founded it in 1887."}]})


FIRST = ("Ada", "Bruno", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kaya", "Lars")
LAST = ("Quinn", "Okafor", "Brandt", "Sorensen", "Morrow", "Reyes", "Vik", "Nandakumar", "Lindqvist", "Tanaka")
PLACES = ("Velden", "Kestrel Bay", "Skarn", "Leipzig", "Aldermark", "Lagos", "Toronto", "Edinburgh")
WORKS = ("Morrow Refractor", "Harbor Hill Catalogue", "Skarn Lighthouse", "Velden Rowing Club", "Northcoast Press")


def synthetic_corpus(folder: Path, documents: int, seed: int = 0) -> tuple[Path, Path]:
    """A corpus of ``documents`` short biographies that name people, places and works, and its OpenIE
    file (one triple per sentence), so that every extractor finds entities and communities form."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    corpus, openie = folder / "corpus.jsonl", folder / "openie.jsonl"
    with corpus.open("w", encoding="utf-8") as docs, openie.open("w", encoding="utf-8") as facts:
        for number in range(documents):
            person = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            place, work, other = rng.choice(PLACES), rng.choice(WORKS), f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            triples = [[person, "was born in", place], [person, "worked on", work], [other, "trained", person]]
            text = (f"{person} was born in {place} in {1850 + number}. {person} later worked on the {work}. "
                    f"{other} trained {person} for several years. "
                    "Adela Morrow founded the Harbor Hill Observatory.")  # what EXTRACTION_REPLY names, in every text
            docs.write(json.dumps({"id": f"d{number}", "title": person, "text": text}) + "\n")
            facts.write(json.dumps({"doc_id": f"d{number}", "entities": [person, place, work, other],
                                    "triples": triples}) + "\n")
    return corpus, openie


@dataclass
class Content:
    """What an index holds, by content."""

    nodes: dict[str, str] = field(default_factory=dict)  # id -> type + text digest
    edges: set[tuple[str, str, str]] = field(default_factory=set)
    vectors: set[str] = field(default_factory=set)
    documents: dict[str, str] = field(default_factory=dict)  # id -> status

    @classmethod
    def of(cls, index: Path) -> Content:
        store = SQLiteStore(index, create=False)
        try:
            content = cls()
            for node in store.iter_nodes():
                content.nodes[node.id] = f"{node.type}:{hashlib.sha256(node.text.encode()).hexdigest()[:16]}"
            content.edges = {(e.src, e.dst, str(e.type)) for e in store.iter_edges()}
            content.vectors = set(store.get_vectors()[0])
            content.documents = {d.id: str(d.status) for d in store.list_documents()}
        finally:
            store.close()
        return content

    def duplicated(self) -> int:
        """Nodes that say the same thing under another id (the same type and text twice)."""
        return sum(n - 1 for n in Counter(self.nodes.values()).values() if n > 1)


@dataclass
class Trial:
    killed_after_s: float
    lost: int  # nodes, edges or vectors of the reference missing after the resume
    extra: int  # ... present after the resume but not in the reference
    duplicated: int
    documents_differ: bool
    resumed_exit: int

    @property
    def ok(self) -> bool:
        return not (self.lost or self.extra or self.duplicated or self.documents_differ) and self.resumed_exit == 0


def index_command(index: Path, config: Path, corpus: Path, extractor: str, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "thinkgraph", "-c", str(config), "-i", str(index), "index", str(corpus),
            "-e", extractor, *extra]


def _env(llm_url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")} | {"HF_HUB_OFFLINE": "1"}
    return env | ({"THINKGRAPH_LLM_BASE_URL": llm_url} if llm_url else {})


def reference(work: Path, config: Path, corpus: Path, extractor: str, extra: list[str],
              llm_url: str | None) -> tuple[Content, float]:
    index = work / f"reference-{extractor}.db"
    started = time.perf_counter()
    done = subprocess.run(index_command(index, config, corpus, extractor, extra), env=_env(llm_url),
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"the uninterrupted run failed: {done.stderr[-2000:]}")
    return Content.of(index), time.perf_counter() - started


def crash_and_resume(work: Path, config: Path, corpus: Path, extractor: str, extra: list[str], want: Content,
                     kill_after_s: float, number: int, llm_url: str | None) -> Trial:
    index = work / f"trial-{extractor}-{number}.db"
    command = index_command(index, config, corpus, extractor, extra)
    victim = subprocess.Popen(command, env=_env(llm_url), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(kill_after_s)
    if victim.poll() is None:
        victim.send_signal(signal.SIGKILL)
    victim.wait()
    resumed = subprocess.run(command, env=_env(llm_url), capture_output=True, text=True, timeout=900)
    got = Content.of(index)
    lost = len(set(want.nodes) - set(got.nodes)) + len(want.edges - got.edges) + len(want.vectors - got.vectors)
    extra_items = len(set(got.nodes) - set(want.nodes)) + len(got.edges - want.edges) + \
        len(got.vectors - want.vectors)
    return Trial(kill_after_s, lost, extra_items, got.duplicated() - want.duplicated(),
                 got.documents != want.documents, resumed.returncode)


def trials(work: Path, config: Path, corpus: Path, extractor: str, count: int, *, extra: list[str] | None = None,
           llm_url: str | None = None, seed: int = 0) -> list[Trial]:
    """``count`` kills at moments spread over the uninterrupted run's duration (process start-up
    included, so some land before any work and some during the derived stages)."""
    work.mkdir(parents=True, exist_ok=True)
    want, seconds = reference(work, config, corpus, extractor, extra or [], llm_url)
    rng = random.Random(seed)
    return [crash_and_resume(work, config, corpus, extractor, extra or [], want, rng.uniform(0.3, seconds),
                             number, llm_url) for number in range(count)]

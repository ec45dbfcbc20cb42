"""The CLI starts fast because heavy modules are imported where they are used: `--help` loads no
numpy, scipy, torch or igraph, and `ask` never loads torch or igraph (the query embedder is ONNX)."""

from __future__ import annotations

import subprocess
import sys

import typer

from thinkgraph import api, cli
from thinkgraph.methods import catalog


def test_cli_method_names_are_the_catalog_names() -> None:
    commands = typer.main.get_command(cli.app).commands  # type: ignore[attr-defined]
    for command, default in (("ask", catalog.DEFAULT_METHOD), ("eval", [catalog.DEFAULT_METHOD])):
        method = next(p for p in commands[command].params if p.name == "method")
        assert method.default == default and all(name in method.help for name in catalog.METHOD_NAMES), command
    assert api.DEFAULT_METHOD == catalog.DEFAULT_METHOD


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return set(done.stdout.split())


def test_help_imports_no_heavy_module() -> None:
    loaded = _modules_after("import thinkgraph.cli, thinkgraph.api")
    assert not loaded & {"numpy", "scipy", "torch", "igraph", "pydantic", "sentence_transformers"}


def test_an_llm_free_ask_loads_no_llm_client_agent_method_torch_or_igraph(tmp_path) -> None:  # noqa: ANN001
    from support import FIXTURES
    from thinkgraph.api import ThinkGraph
    from thinkgraph.config import Settings
    from thinkgraph.embed.hashing import HashingEmbedder

    index = tmp_path / "i.db"
    with ThinkGraph(index, settings=Settings(), embedder=HashingEmbedder()) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    loaded = _modules_after(
        "import os; os.environ['THINKGRAPH_EMBED_PROVIDER'] = 'hashing'\n"
        "from thinkgraph.api import ThinkGraph\n"
        f"tg = ThinkGraph.open({str(index)!r}); assert tg.ask('Who commanded the fleet?', method='ppr').citations")
    assert not loaded & {"httpx", "torch", "igraph", "thinkgraph.llm.backend", "thinkgraph.methods.kgr",
                         "thinkgraph.methods.a2rag", "thinkgraph.methods.tog3", "thinkgraph.methods.topg"}
    assert "thinkgraph.methods.passages" in loaded

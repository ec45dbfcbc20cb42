"""The CLI starts fast because heavy modules are imported where they are used: `--help` loads no
numpy, scipy, torch or igraph, and `ask` never loads torch or igraph (the query embedder is ONNX)."""

from __future__ import annotations

import subprocess
import sys

from thinkgraph import api, cli
from thinkgraph.methods import registry


def test_cli_method_names_are_the_registry_names() -> None:
    assert cli.METHOD_NAMES == registry.METHOD_NAMES
    assert cli.DEFAULT_METHOD == registry.DEFAULT_METHOD == api.DEFAULT_METHOD


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return set(done.stdout.split())


def test_help_imports_no_heavy_module() -> None:
    loaded = _modules_after("import thinkgraph.cli, thinkgraph.api")
    assert not loaded & {"numpy", "scipy", "torch", "igraph", "pydantic", "sentence_transformers"}

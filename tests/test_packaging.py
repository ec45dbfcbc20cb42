"""The package as users get it: the wheel and sdist built from this tree (``python -m build``), and the
wheel installed into a fresh virtual environment with no checkout on the path, where the command,
indexing (with the packaged embedding model, exported to ONNX into an empty cache), asking, both
framework adapters and the served page with its vendored scripts all work.

The fresh environment sees the development environment's third-party packages through a .pth file:
installing torch and the rest again would take minutes, and what is checked here is that the WHEEL
carries everything of thinkgraph's own (modules, the page, vendored scripts, py.typed). thinkgraph
itself is imported from the wheel's files, which the test asserts."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from support import ROOT, SAMPLE_CORPUS

pytestmark = pytest.mark.slow  # (it loads the embedding model, in the fresh environment)

PACKAGE = ROOT / "src" / "thinkgraph"
QUESTION = "Who founded the Harbor Hill Observatory?"


def package_files() -> list[str]:
    """Every file of the package in this tree, as the wheel names it (thinkgraph/...)."""
    return sorted(f"thinkgraph/{p.relative_to(PACKAGE).as_posix()}" for p in PACKAGE.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def _one(folder: Path, pattern: str) -> Path:
    found = list(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_wheel_and_sdist_carry_every_file_of_the_package(dist: Path) -> None:
    wanted = package_files()
    assert "thinkgraph/py.typed" in wanted and "thinkgraph/service/static/index.html" in wanted
    assert "thinkgraph/service/static/vendor/cytoscape.min.js" in wanted
    assert "thinkgraph/integrations/langchain.py" in wanted
    wheel = set(zipfile.ZipFile(_one(dist, "thinkgraph-*.whl")).namelist())
    assert [f for f in wanted if f not in wheel] == []
    with tarfile.open(_one(dist, "thinkgraph-*.tar.gz")) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert [f for f in wanted if f"src/{f}" not in names] == []
    assert {"pyproject.toml", "README.md", "LICENSE"} <= names


@dataclass(frozen=True)
class Installed:
    venv: Path
    work: Path  # a folder outside the checkout: the working directory of every command
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=self.work, env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("fresh")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # third-party packages from the development environment, after the fresh one's own site-packages
    deps = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    Path(site, "_development_packages.pth").write_text("\n".join(deps) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q",
                           "--disable-pip-version-check", str(_one(dist, "thinkgraph-*.whl"))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    work = root / "work"
    shutil.copytree(SAMPLE_CORPUS, work / "corpus")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "THINKGRAPH_", "VIRTUAL_ENV"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               THINKGRAPH_CACHE_DIR=str(root / "cache"),  # empty: the ONNX export runs from the wheel
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return Installed(venv, work, env)


def test_the_installed_wheel_indexes_and_answers_without_the_checkout(installed: Installed) -> None:
    where = installed.run(installed.bin("python"), "-c", "import thinkgraph; print(thinkgraph.__file__)")
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(installed.venv), where.stdout  # the wheel's, not src/
    helped = installed.run(installed.bin("thinkgraph"), "--help")
    assert helped.returncode == 0 and "index" in helped.stdout and "serve" in helped.stdout, helped.stderr
    indexed = installed.run(installed.bin("thinkgraph"), "index", "corpus", "--json", timeout=600)
    assert indexed.returncode == 0, indexed.stderr[-3000:]
    assert json.loads(indexed.stdout)["indexed"] == 4
    assert list((installed.work.parent / "cache" / "onnx").rglob("*.onnx")), "the query encoder was exported"
    asked = installed.run(installed.bin("thinkgraph"), "ask", QUESTION, "-m", "ppr", "--json")
    assert asked.returncode == 0, asked.stderr[-3000:]
    answer = json.loads(asked.stdout)
    assert answer["status"] == "evidence_only"  # no LLM configured: the cited evidence
    assert any(c["doc_id"] == "people.md" and "founded the Harbor Hill Observatory" in c["quote"]
               for c in answer["citations"])


ADAPTERS = f"""
import sys
import thinkgraph.integrations.langchain as lc, thinkgraph.integrations.llamaindex as li
assert all(m.__file__.startswith(sys.prefix) for m in (lc, li)), (lc.__file__, li.__file__)
docs = lc.ThinkGraphRetriever.from_index("thinkgraph.db", top_k=2).invoke({QUESTION!r})
nodes = li.ThinkGraphRetriever("thinkgraph.db", top_k=2).retrieve({QUESTION!r})
print(len(docs), len(nodes), [d.metadata["chunk_id"] for d in docs] == [n.node.node_id for n in nodes])
"""


def test_the_adapters_work_from_the_wheel(installed: Installed) -> None:
    if not (installed.work / "thinkgraph.db").exists():  # (when this test runs alone)
        assert installed.run(installed.bin("thinkgraph"), "index", "corpus", timeout=600).returncode == 0
    done = installed.run(installed.bin("python"), "-c", ADAPTERS)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["2", "2", "True"]  # two passages, the same from both frameworks


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_installed_wheel_serves_the_page_and_its_vendored_scripts(installed: Installed, dist: Path) -> None:
    port = _free_port()
    server = subprocess.Popen([installed.bin("thinkgraph"), "serve", "--root", "workspaces", "--port", str(port)],
                              cwd=installed.work, env=installed.env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if httpx.get(f"{url}/v1/health", timeout=2).is_success:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        page = httpx.get(f"{url}/", timeout=10)
        script = httpx.get(f"{url}/static/vendor/cytoscape.min.js", timeout=10)
        docs = httpx.get(f"{url}/docs", timeout=10)
    finally:
        server.terminate()
        output = server.communicate(timeout=20)[0]
    assert page.status_code == 200 and "/static/vendor/cytoscape.min.js" in page.text, output[-2000:]
    shipped = zipfile.ZipFile(_one(dist, "thinkgraph-*.whl")).read("thinkgraph/service/static/vendor/cytoscape.min.js")
    assert script.status_code == 200 and script.content == shipped
    assert docs.status_code == 200 and "/static/vendor/swagger-ui-bundle.js" in docs.text

"""The commands in README.md and docs/*.md run as written, offline, on the sample corpus.

A fenced block whose info string is ``bash runnable`` (or ``python runnable``) runs on its own in a fresh
folder that links the repository's top-level files and folders and holds a copy of ``sample.db``, the
sample corpus's index, with no LLM endpoint configured; it must exit 0. docs/development.md documents
the marker. The same module checks the docs' relative links, the README's length and method table,
and that the generated parts (docs/generate.py) are current.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import ROOT, SAMPLE_CORPUS

DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Top-level entries of the checkout not linked into a block's folder (state a block could write into).
NOT_LINKED = {".git", ".thinkgraph", "thinkgraph.db", "thinkgraph.toml", "sample.db", "my.db"}
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
BLOCK_TIMEOUT_S = 240


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    language: str
    runnable: bool
    text: str

    @property
    def label(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def fenced_blocks(path: Path) -> list[Block]:
    """Every fenced code block of a Markdown file (CommonMark fences: a block opened by n backticks
    closes at a line of at least n of the same character and nothing else, so a block shown inside a
    longer fence is content, not a block)."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            i += 1
            continue
        fence, words = m.group("fence"), m.group("info").split()
        start, body = i, []
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close.group("fence")[0] == fence[0] and len(close.group("fence")) >= len(fence) \
                    and not close.group("info").strip():
                break
            body.append(lines[i])
            i += 1
        blocks.append(Block(path, start + 1, words[0] if words else "", "runnable" in words[1:],
                            "\n".join(body) + "\n"))
        i += 1
    return blocks


RUNNABLE = [b for path in DOC_FILES for b in fenced_blocks(path) if b.runnable]


def _env() -> dict[str, str]:
    """No THINKGRAPH_* setting (no LLM endpoint, no service token) but the session's cache folder;
    the virtual environment's bin/ first on PATH, so `thinkgraph` and `python` are the project's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
    if "THINKGRAPH_CACHE_DIR" in os.environ:
        env["THINKGRAPH_CACHE_DIR"] = os.environ["THINKGRAPH_CACHE_DIR"]
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sample.db, indexed once for every block (each block works on a copy)."""
    path = tmp_path_factory.mktemp("docs-index") / "sample.db"
    done = subprocess.run([sys.executable, "-m", "thinkgraph", "--index", str(path), "index", str(SAMPLE_CORPUS)],
                          capture_output=True, text=True, env=_env(), timeout=BLOCK_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return path


def _workdir(tmp_path: Path, sample_index: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in NOT_LINKED and not entry.name.endswith((".db", ".db-wal", ".db-shm")):
            (work / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    venv = Path(sys.prefix)
    if not (work / ".venv").exists() and venv != Path(sys.base_prefix):
        (work / ".venv").symlink_to(venv, target_is_directory=True)
    for part in sample_index.parent.glob(sample_index.name + "*"):
        if part.is_file():
            shutil.copy2(part, work / part.name)
    return work


def test_the_docs_have_runnable_blocks() -> None:
    readme = [b for b in RUNNABLE if b.path.name == "README.md"]
    assert readme and len(RUNNABLE) >= 10, [b.label for b in RUNNABLE]
    assert all(b.language in ("bash", "sh", "python") for b in RUNNABLE), \
        [b.label for b in RUNNABLE if b.language not in ("bash", "sh", "python")]


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.label for b in RUNNABLE])
def test_runnable_block(block: Block, sample_index: Path, tmp_path: Path) -> None:
    work = _workdir(tmp_path, sample_index)
    if block.language == "python":
        script = work / "block.py"
        script.write_text(block.text, encoding="utf-8")
        command = [sys.executable, str(script)]
    else:
        command = ["bash", "-euo", "pipefail", "-c", block.text]
    done = subprocess.run(command, cwd=work, capture_output=True, text=True, env=_env(), timeout=BLOCK_TIMEOUT_S)
    assert done.returncode == 0, (f"{block.label} exited {done.returncode}\n--- block\n{block.text}"
                                  f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")


def test_the_block_parser_skips_blocks_shown_inside_a_longer_fence(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("````markdown\n```bash runnable\nfalse\n```\n````\n\n```bash runnable\ntrue\n```\n"
                    "```python\nprint(1)\n```\n", encoding="utf-8")
    blocks = fenced_blocks(page)
    assert [(b.line, b.language, b.runnable, b.text) for b in blocks] == [
        (1, "markdown", False, "```bash runnable\nfalse\n```\n"), (7, "bash", True, "true\n"),
        (10, "python", False, "print(1)\n")]


# --- links, the README's shape, generated parts ------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but hyphens and spaces dropped,
    spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip()).lower()
    text = "".join(c for c in text if c in " -" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    code = {line for b in fenced_blocks(path) for line in range(b.line, b.line + b.text.count("\n") + 2)}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if number in code or not (m := re.match(r"^#{1,6}\s+(.*)$", line)):
            continue
        slug = github_slug(m.group(1))
        out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return out


def _prose(path: Path) -> str:
    """The page without its fenced blocks (a link written inside code is not a link)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for b in fenced_blocks(path):
        for i in range(b.line - 1, min(len(lines), b.line + b.text.count("\n") + 1)):
            lines[i] = ""
    return "\n".join(lines)


def broken_links(path: Path) -> list[str]:
    """The relative links of a page whose file, or whose heading in a Markdown file, does not exist."""
    broken = []
    for m in LINK.finditer(_prose(path)):
        target = m.group("target")
        if re.match(r"^[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in anchors(dest)):
            broken.append(target)
    return broken


@pytest.mark.parametrize("path", DOC_FILES, ids=[str(p.relative_to(ROOT)) for p in DOC_FILES])
def test_relative_links_point_to_files_and_headings_that_exist(path: Path) -> None:
    assert not broken_links(path), f"{path.relative_to(ROOT)}: {broken_links(path)}"


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## Exit codes (1-3)\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n[ok](other.md#exit-codes-1-3) [self](#page) [web](https://example.org/x)\n"
                    "[gone](missing.md) [no heading](other.md#exit-codes)\n\n```bash\n[code](nowhere.md)\n```\n",
                    encoding="utf-8")
    assert broken_links(page) == ["missing.md", "other.md#exit-codes"]


def test_each_docs_page_starts_with_what_the_reader_will_find() -> None:
    for path in sorted((ROOT / "docs").glob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# ") and lines[1] == "" and lines[2].strip(), path.name


def test_the_readme_is_short_and_its_method_table_has_every_method() -> None:
    from thinkgraph.methods.catalog import METHOD_NAMES

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    table = re.search(r"<!-- method-table -->\n(.*?)<!-- /method-table -->", text, re.S)
    assert table, "the README's method table is kept between <!-- method-table --> markers"
    rows = re.findall(r"^\| `([\w-]+)`", table.group(1), re.M)
    assert sorted(rows) == sorted(METHOD_NAMES)


def test_the_generated_parts_of_the_docs_are_current() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "generate.py"), "--check"],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 0, done.stderr

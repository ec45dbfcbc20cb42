"""Every file `thinkgraph index` is given is accounted for (issue 49), through the real entry point:
read, or skipped with its reason, counted by kind in the report and the JSON report, kept in the index
for `documents --skipped`; input of which nothing could be read is exit 2 naming what was found; a file
that needs the office extra says how to install it, and is read by the next run once it is installed.
The extra is made missing for one run by a `sitecustomize` that blocks its import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from office_files import write_csv, write_docx
from thinkgraph.errors import ExitCode

pytest.importorskip("docx")  # the office extra (the dev install has it)

HINT = "pip install 'thinkgraph[office]'"


def run(*args: str, tmp: Path, missing: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_") and k != "COLUMNS"}
    if missing:
        site = tmp / "site"
        site.mkdir(exist_ok=True)
        blocks = "".join(f"sys.modules[{m!r}] = None\n" for m in missing)
        (site / "sitecustomize.py").write_text(f"import sys\n{blocks}", encoding="utf-8")
        env["PYTHONPATH"] = str(site)
    config = tmp / "hashing.toml"
    config.write_text('[embedding]\nprovider = "hashing"\ndim = 64\n', encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "thinkgraph", "--config", str(config), *args], capture_output=True,
                          text=True, env=env, timeout=300)


def test_a_folder_of_one_word_file_without_the_extra_is_exit_2_with_the_install_line(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    write_docx(folder / "notes.docx")
    index = tmp_path / "d.db"
    done = run("--index", str(index), "index", str(folder), tmp=tmp_path, missing=("docx",))
    assert done.returncode == ExitCode.INPUT, done.stdout + done.stderr
    assert "1 skipped (1 needs an extra)" in done.stdout
    assert f"skipped {folder / 'notes.docx'}: reading .docx files needs the office extra: {HINT}" in done.stdout
    assert done.stderr.strip() == (f"error: nothing was indexed: every input was skipped (1 needs an extra); {HINT} "
                                   f"reads the files that need an extra; no index was left at {index}")
    assert not index.exists()
    again = run("--index", str(index), "index", str(folder), tmp=tmp_path)  # the extra installed
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("indexed 1 document (1 chunk), 0 unchanged, 0 updated, 0 failed, 0 skipped")


def test_a_mixed_folder_lists_counts_and_keeps_what_it_skipped_until_it_can_read_it(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (folder / "a.txt").write_text("Ada Lund built the Skarn Lighthouse.", encoding="utf-8")
    write_docx(folder / "notes.docx")
    write_csv(folder / "data.csv")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n")
    index = tmp_path / "m.db"
    done = run("--index", str(index), "index", str(folder), "--json", tmp=tmp_path, missing=("docx",))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["indexed"] == 2  # a.txt and data.csv (CSV needs no extra)
    assert report["skipped_by_kind"] == {"needs an extra": 1, "unsupported type": 1, "hidden": 1}
    listed = run("--index", str(index), "documents", "--skipped", "--json", tmp=tmp_path)
    assert listed.returncode == 0, listed.stderr
    kinds = {Path(s["source"]).name: s["kind"] for s in json.loads(listed.stdout)}
    assert kinds == {"notes.docx": "needs an extra", "photo.png": "unsupported type", "folder": "hidden"}
    table = run("--index", str(index), "documents", "--skipped", tmp=tmp_path)
    assert "3 skipped files" in table.stdout and "photo.png" in table.stdout and "unsupported file type '.png'" \
        in table.stdout
    again = run("--index", str(index), "index", str(folder), "--json", tmp=tmp_path)  # after installing the extra
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert (second["indexed"], second["unchanged"]) == (1, 2)
    left = run("--index", str(index), "documents", "--skipped", "--json", tmp=tmp_path)
    assert {Path(s["source"]).name for s in json.loads(left.stdout)} == {"photo.png", "folder"}
    docs = run("--index", str(index), "documents", "--json", tmp=tmp_path)
    assert {d["id"] for d in json.loads(docs.stdout)} == {"a.txt", "data.csv", "notes.docx"}


def test_an_empty_folder_or_one_of_unsupported_files_is_exit_2_naming_what_was_found(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run("--index", str(tmp_path / "e.db"), "index", str(empty), tmp=tmp_path)
    assert done.returncode == ExitCode.INPUT
    assert f"skipped {empty}: no files in this folder" in done.stdout
    assert done.stderr.startswith("error: nothing was indexed: every input was skipped (1 empty)")
    images = tmp_path / "images"
    images.mkdir()
    for name in ("a.png", "b.jpg"):
        (images / name).write_bytes(b"\xff\xd8\xff")
    done = run("--index", str(tmp_path / "i.db"), "index", str(images), tmp=tmp_path)
    assert done.returncode == ExitCode.INPUT
    assert done.stderr.startswith("error: nothing was indexed: every input was skipped (2 unsupported type)")
    assert "unsupported file type '.jpg'" in done.stdout


def test_the_index_inside_the_folder_it_indexes_is_not_a_skipped_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Ada Lund built the Skarn Lighthouse.", encoding="utf-8")
    first = run("--index", str(tmp_path / "here.db"), "index", str(tmp_path), "--json", tmp=tmp_path)
    again = run("--index", str(tmp_path / "here.db"), "index", str(tmp_path), "--json", tmp=tmp_path)
    for done in (first, again):
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["skipped_by_kind"] == {"unsupported type": 1}  # hashing.toml, not here.db*

"""Loading files with counted skips, and token chunking with offsets."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support import SAMPLE_CORPUS
from thinkgraph.errors import InputError
from thinkgraph.index.chunking import chunk_document
from thinkgraph.index.loaders import Skipped, load_paths
from thinkgraph.models import SourceDocument
from thinkgraph.tokens import TokenCounter


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def _split(items: list) -> tuple[list[SourceDocument], list[Skipped]]:
    return [i for i in items if isinstance(i, SourceDocument)], [i for i in items if isinstance(i, Skipped)]


def test_sample_corpus_loads_with_ids_and_titles() -> None:
    docs, skipped = _split(list(load_paths([SAMPLE_CORPUS])))
    assert not skipped
    by_id = {d.id: d for d in docs}
    assert set(by_id) >= {"harbor-observatory.md", "people.md", "skarn-lighthouse.txt"}
    assert by_id["harbor-observatory.md"].title == "The Harbor Hill Observatory"
    assert by_id["skarn-lighthouse.txt"].title == "skarn-lighthouse"


def test_bad_files_are_skipped_with_reasons(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("Fine text.", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("   \n", encoding="utf-8")
    (tmp_path / "binary.txt").write_bytes(b"abc\x00\x01\x02")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "big.md").write_text("x" * 5000, encoding="utf-8")
    (tmp_path / "notes.docx").write_bytes(b"PK")  # a Word file that is not one: skipped with a reason
    (tmp_path / "photo.png").write_bytes(b"\x89PNG")  # a type thinkgraph does not read: listed, not left out
    (tmp_path / "notes.pdf").write_bytes(b"%PDF")  # matched, unreadable: skipped with a reason
    docs, skipped = _split(list(load_paths([tmp_path], max_bytes=1000)))
    assert [d.id for d in docs] == ["ok.txt"]
    reasons = {Path(s.source).name: s.reason for s in skipped}
    assert reasons["empty.txt"] == "empty"
    assert reasons["binary.txt"] == "binary file"
    assert reasons["latin1.txt"].startswith("not UTF-8")
    assert reasons["big.md"].startswith("too large")
    assert reasons["notes.docx"].startswith("unreadable Word file") and "unreadable PDF" in reasons["notes.pdf"]
    assert reasons["photo.png"].startswith("unsupported file type '.png'")


def test_explicit_unsupported_file_and_missing_path(tmp_path: Path) -> None:
    image = tmp_path / "a.png"
    image.write_bytes(b"\x89PNG")
    (item,) = list(load_paths([image]))
    assert isinstance(item, Skipped) and "unsupported file type '.png'" in item.reason
    with pytest.raises(InputError, match="no such file"):
        list(load_paths([tmp_path / "nope"]))


def test_a_device_or_pipe_given_is_skipped_unread(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)  # reading it would wait for a writer forever
    given = [pipe, Path(os.devnull)]  # /dev/null was called "no files in this folder"
    skipped = list(load_paths(given))
    assert all(isinstance(s, Skipped) and s.reason.startswith("not a file or folder") for s in skipped)
    assert [s.source for s in skipped if isinstance(s, Skipped)] == [str(p) for p in given]


def test_include_exclude_and_recursion(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "a.md").write_text("A", encoding="utf-8")
    (tmp_path / "sub" / "b.txt").write_text("B", encoding="utf-8")
    (tmp_path / "sub" / "deep" / "c.txt").write_text("C", encoding="utf-8")
    docs, _ = _split(list(load_paths([tmp_path], include=["*.txt"], exclude=["sub/deep/*"])))
    assert [d.id for d in docs] == ["sub/b.txt"]


def test_jsonl_records_and_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    lines = [json.dumps({"id": "p1", "title": "T", "text": "Hello."}), "{not json", json.dumps([1, 2]),
             json.dumps({"id": "p2", "text": ""}), "", json.dumps({"title": "no id", "text": "Body."})]
    path.write_text("\n".join(lines), encoding="utf-8")
    docs, skipped = _split(list(load_paths([path])))
    assert [(d.id, d.title) for d in docs] == [("p1", "T"), ("corpus:6", "no id")]
    assert [s.source.rsplit(":", 1)[1] for s in skipped] == ["2", "3", "4"]
    assert "malformed JSON" in skipped[0].reason and "'text'" in skipped[2].reason


def test_chunks_cover_text_with_overlap_and_exact_offsets(counter: TokenCounter) -> None:
    text = " ".join(f"word{i} is here." for i in range(400))
    doc = SourceDocument("d", "", text, "d")
    chunks = chunk_document(doc, counter, size=100, overlap=20)
    assert len(chunks) > 3
    spans = counter.offsets(text)
    for c in chunks:
        assert text[c.start:c.end] == c.text and c.n_tokens <= 100
        assert c.doc_id == "d" and c.id.startswith("chunk:")
    assert chunks[0].start == 0 and chunks[-1].end == spans[-1][1]
    # consecutive windows share `overlap` tokens, more where a word's pieces straddle the cut
    assert spans[60][0] <= chunks[1].start <= spans[80][0]
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert not text[before.end:after.start].strip()  # no text between windows


@pytest.mark.parametrize(("size", "overlap"), [(12, 3), (7, 0), (30, 10)])
def test_windows_end_and_start_between_words(counter: TokenCounter, size: int, overlap: int) -> None:
    """WordPiece splits rare names into pieces; a window never ends or starts inside one."""
    text = " ".join(f"Ilse Bergmansdottir{i} kept Skarnholmsfyr lighthouse in 18{i:02d}." for i in range(40))
    chunks = chunk_document(SourceDocument("d", "", text, "d"), counter, size=size, overlap=overlap)
    for c in chunks:
        assert c.n_tokens <= size and text[c.start:c.end] == c.text
        assert c.start == 0 or not text[c.start - 1].isalnum()
        assert c.end == len(text) or not (text[c.end - 1].isalnum() and text[c.end].isalnum())
    assert chunks[-1].end == len(text)
    assert all(not text[before.end:after.start].strip() for before, after in zip(chunks, chunks[1:], strict=False))


def test_short_and_empty_documents(counter: TokenCounter) -> None:
    assert chunk_document(SourceDocument("e", "", "", "e"), counter, size=10, overlap=2) == []
    (only,) = chunk_document(SourceDocument("s", "", "One short line.", "s"), counter, size=1024, overlap=20)
    assert only.text == "One short line." and only.start == 0
    with pytest.raises(ValueError):
        chunk_document(SourceDocument("s", "", "x", "s"), counter, size=10, overlap=10)


def test_token_counter_counts_and_truncates(counter: TokenCounter) -> None:
    assert counter.count("") == 0
    text = "alpha beta gamma delta epsilon"
    assert counter.count(text) == 5
    assert counter.truncate(text, 2) == "alpha beta"
    assert counter.truncate(text, 50) == text


def test_pdf_html_and_markdown_documents(tmp_path: Path) -> None:
    from support import make_pdf
    from thinkgraph.index.formats import page_of

    (tmp_path / "report.pdf").write_bytes(make_pdf(["Alpha results on page one", "Beta results on page two"]))
    (tmp_path / "scan.pdf").write_bytes(make_pdf(["", ""]))
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    (tmp_path / "page.html").write_text("<html><head><title>Guide</title><style>p{}</style></head><body><h1>Guide"
                                        "</h1><p>Use the <b>north</b> gate.</p><script>var x=1;</script></body></html>")
    (tmp_path / "notes.md").write_text("Intro line\n\nNotes\n=====\n\nSome *emphasis*.\n")
    items = {Path(i.source).name: i for i in load_paths([tmp_path])}
    pdf = items["report.pdf"]
    assert pdf.text == "Alpha results on page one\n\nBeta results on page two" and pdf.page_starts == (0, 27)
    assert page_of(pdf.page_starts, pdf.text.index("Beta")) == 2 and page_of((), 5) is None
    assert isinstance(items["scan.pdf"], Skipped) and "no text layer" in items["scan.pdf"].reason
    assert isinstance(items["broken.pdf"], Skipped) and "PDF" in items["broken.pdf"].reason
    html = items["page.html"]
    assert html.title == "Guide" and "Use the\nnorth\ngate." in html.text and "var x" not in html.text
    md = items["notes.md"]
    assert md.title == "Notes" and md.text.startswith("Intro line")  # setext heading; source text kept

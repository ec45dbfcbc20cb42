"""Word, PowerPoint, Excel, CSV, EPUB and OpenDocument files (issue 49), built here by the formats'
own libraries: each converts to text that keeps its structure, each part (slide, sheet and rows,
chapter, section) starts at an exact offset of that text, and a citation through the real command
line names the place in the file its quote comes from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from office_files import write_all, write_csv, write_docx, write_epub, write_ods, write_odt, write_pptx, write_xlsx
from thinkgraph.errors import InputError
from thinkgraph.index.formats import parse_document
from thinkgraph.locations import location, place

pytest.importorskip("docx")  # the office extra (the dev install has it)

HASHING = '[embedding]\nprovider = "hashing"\ndim = 64\n'


def _parsed(path: Path):  # noqa: ANN202
    return parse_document(path.name, path.read_bytes())


def _part_text(parsed, label: str) -> str:  # noqa: ANN001
    """The text of the part labelled ``label``, from its start to the next part's."""
    starts = [p.start for p in parsed.parts] + [len(parsed.text)]
    i = [p.label for p in parsed.parts].index(label)
    return parsed.text[starts[i]:starts[i + 1]]


def test_word_keeps_headings_lists_and_tables_and_names_sections(tmp_path: Path) -> None:
    parsed = _parsed(write_docx(tmp_path / "report.docx"))
    assert parsed.title == "Skarn harbour report"
    assert [p.label for p in parsed.parts] == ["section 'The Lighthouse'", "section 'The Keepers'"]
    assert parsed.text.startswith("# The Lighthouse\n\nThe Skarn Lighthouse was built in 1871")
    assert "\n- It has a white tower\n" in parsed.text and "\n## The Keepers\n" in parsed.text
    assert parsed.text.endswith("- Keeper | Years\n- Nils Berg | 1871-1902")
    start = parsed.text.index("Nils Berg kept")
    assert location(parsed.parts, start, start + 20) == "section 'The Keepers'"


def test_word_pages_are_the_ones_word_recorded_and_none_are_guessed(tmp_path: Path) -> None:
    import docx
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.add_heading("Findings", 1)
    document.add_paragraph("Page one holds the survey of the cape.")
    long = document.add_paragraph()
    long.add_run("The survey went on ")
    long.runs[0]._r.append(OxmlElement("w:lastRenderedPageBreak"))  # a page began inside this paragraph
    long.add_run("across the page.")
    starts = document.add_paragraph()
    starts.add_run("Page three begins with this line.")._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    document.save(tmp_path / "paged.docx")
    parsed = _parsed(tmp_path / "paged.docx")
    at = parsed.text.index("Page three")
    assert parsed.page_starts == (0, at, at)  # two pages began by this line: it is on page 3
    assert place(parsed.parts, parsed.page_starts, at, at + 10) == "page 3, section 'Findings'"
    survey = parsed.text.index("The survey went on")
    assert place(parsed.parts, parsed.page_starts, survey, survey + 5) == "page 1, section 'Findings'"
    assert _parsed(write_docx(tmp_path / "flat.docx")).page_starts == ()  # no recorded pages: none made up


def test_powerpoint_is_one_part_per_slide_with_notes_and_tables(tmp_path: Path) -> None:
    parsed = _parsed(write_pptx(tmp_path / "deck.pptx"))
    assert [p.label for p in parsed.parts] == ["slide 1", "slide 2", "slide 3"]
    assert _part_text(parsed, "slide 2").strip() == ("## The lens\n\n- Ilse Brandt ground the great lens of the "
                                                     "observatory.\n\nNotes: Mention her workshop.")
    assert _part_text(parsed, "slide 3").strip() == "## Visitors\n\n- Year | Visitors\n- 2020 | 1200"
    assert parsed.title == "Harbor Hill"


def test_excel_rows_name_their_columns_and_keep_their_numbers(tmp_path: Path) -> None:
    parsed = _parsed(write_xlsx(tmp_path / "book.xlsx"))
    assert [p.label for p in parsed.parts] == ["sheet 'Sales'", "sheet 'Staff'"]
    sales = parsed.parts[0]
    assert [number for _, number in sales.rows] == [1, 2, 4]  # the empty row 3 is not made up
    row4 = sales.rows[2][0]
    line = parsed.text[row4:parsed.text.index("\n", row4)]
    assert line == "- Region: Vestfold; Revenue: 80.5"
    assert location(parsed.parts, row4 + 2, row4 + len(line)) == "sheet 'Sales', row 4"
    assert location(parsed.parts, sales.rows[1][0], row4 + 5) == "sheet 'Sales', rows 2-4"
    assert "- Name: Ilse Brandt; Role: optician" in _part_text(parsed, "sheet 'Staff'")


def test_opendocument_spreadsheet_rows_count_repeated_rows(tmp_path: Path) -> None:
    parsed = _parsed(write_ods(tmp_path / "tides.ods"))
    assert parsed.text == ("## Tides\n\n- Harbour | High water\n- Harbour: Skarn; High water: 06:12\n"
                           "- Harbour: Kestrel Bay; High water: 07:40")
    at = parsed.text.index("Kestrel Bay")
    assert location(parsed.parts, at, at + 5) == "sheet 'Tides', row 6"  # rows 3-5: one empty row, repeated


def test_csv_rows_are_numbered_as_in_the_file(tmp_path: Path) -> None:
    parsed = _parsed(write_csv(tmp_path / "people.csv"))
    assert parsed.text.splitlines() == ["- name | town", "- name: Ada Lund; town: Skarn",
                                        "- name: Nils Berg; town: Harbor Hill", "- name: Oda Vik; town: Tromsbay"]
    at = parsed.text.index("Nils Berg")
    assert location(parsed.parts, at, at + 9) == "row 3"
    semicolons = tmp_path / "semi.csv"
    semicolons.write_text("a;b\n1;2\n", encoding="utf-8")
    assert _parsed(semicolons).text == "- a | b\n- a: 1; b: 2"  # the delimiter is sniffed


def test_epub_chapters_follow_the_reading_order_and_the_table_of_contents(tmp_path: Path) -> None:
    parsed = _parsed(write_epub(tmp_path / "tales.epub"))
    assert parsed.title == "Tales of Skarn"
    assert [p.label for p in parsed.parts] == ["chapter 1 'The Keeper'", "chapter 2 'The Lens'"]
    assert _part_text(parsed, "chapter 2 'The Lens'") == "# The Lens\n\nIlse Brandt ground the lens in Tromsbay."


def test_opendocument_text_keeps_headings_lists_and_sections(tmp_path: Path) -> None:
    parsed = _parsed(write_odt(tmp_path / "notes.odt"))
    assert parsed.title == "Harbor notes"
    assert parsed.text == ("# Observatory\n\nHarbor Hill Observatory stands above the bay.\n\n- a dome of copper"
                           "\n\n## Staff\n\nOda Vik runs the observatory's archive.")
    assert [p.label for p in parsed.parts] == ["section 'Observatory'", "section 'Staff'"]


@pytest.mark.parametrize("name", ["x.docx", "x.pptx", "x.xlsx", "x.epub", "x.odt", "x.ods"])
def test_a_broken_office_file_is_one_line_naming_it(name: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_document(name, b"PK\x03\x04 not really a zip")
    assert str(caught.value).startswith(f"{name}: unreadable") and "\n" not in str(caught.value)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_") and k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "thinkgraph", *args], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.fixture(scope="module")
def office_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("office")
    write_all(root / "folder")
    config = root / "hashing.toml"
    config.write_text(HASHING, encoding="utf-8")
    done = _cli("--index", str(root / "o.db"), "--config", str(config), "index", str(root / "folder"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["indexed"] == 6 and report["skipped"] == [] and report["skipped_by_kind"] == {}
    return root / "o.db", config


@pytest.mark.parametrize("question, doc, where", [
    ("What revenue did Vestfold have?", "book.xlsx", "sheet 'Sales', row 4"),
    ("Who ground the great lens of the observatory?", "deck.pptx", "slide 2"),
    ("In which town does Oda Vik live?", "people.csv", "row 4"),
    ("Who kept the Skarn Lighthouse for thirty years?", "report.docx", "section 'The Keepers'"),
    ("Where did Ilse Brandt grind the lens?", "tales.epub", "chapter 2 'The Lens'"),
    ("Who runs the observatory's archive?", "notes.odt", "section 'Staff'"),
])
def test_ask_cites_the_slide_sheet_row_or_chapter(office_index: tuple[Path, Path], question: str, doc: str,
                                                  where: str) -> None:
    index, config = office_index
    done = _cli("--index", str(index), "--config", str(config), "ask", question, "-m", "hybrid", "--top-k", "6",
                "--json")
    assert done.returncode == 0, done.stderr
    cited = {(c["doc_id"], c["location"]) for c in json.loads(done.stdout)["citations"]}
    assert (doc, where) in cited, cited
    shown = _cli("--index", str(index), "--config", str(config), "ask", question, "-m", "hybrid", "--top-k", "6")
    assert f"{doc} chars " in shown.stdout and f", {where} (" in shown.stdout, shown.stdout


def test_uploads_over_http_cite_their_sheet_and_a_missing_extra_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    from thinkgraph.service.app import create_app
    from thinkgraph.service.settings import ServiceSettings

    config = tmp_path / "hashing.toml"
    config.write_text(HASHING, encoding="utf-8")
    book = write_xlsx(tmp_path / "book.xlsx").read_bytes()
    with TestClient(create_app(ServiceSettings(root=tmp_path / "ws", config_path=config)),
                    base_url="http://127.0.0.1:8765") as client:
        assert client.post("/v1/workspaces/w").status_code == 201
        sent = client.post("/v1/workspaces/w/documents", files={"file": ("book.xlsx", book, "application/x")})
        assert sent.is_success, sent.text
        assert sent.json()["document"]["title"] == "book"
        asked = client.post("/v1/workspaces/w/ask", json={"question": "What revenue did Vestfold have?",
                                                          "method": "hybrid"}).json()
        first = asked["citations"][0]
        assert first["location"] == "sheet 'Sales', row 4"
        assert first["plain_quote"] == "- Region: Vestfold; Revenue: 80.5"
        passage = client.get(f"/v1/workspaces/w/passages/{first['chunk_id']}").json()
        assert passage["location"] == "sheet 'Sales' to sheet 'Staff'"  # the whole workbook is one passage
        monkeypatch.setitem(sys.modules, "openpyxl", None)  # the office extra not installed
        refused = client.post("/v1/workspaces/w/documents", files={"file": ("other.xlsx", book, "application/x")})
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == ("other.xlsx: reading .xlsx files needs the office extra: "
                                                      "pip install 'thinkgraph[office]'")

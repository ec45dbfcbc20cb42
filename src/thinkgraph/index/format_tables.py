"""Spreadsheets to text: Excel workbooks (.xlsx, .xlsm; openpyxl) and OpenDocument spreadsheets (.ods;
odfpy), both from the office extra, one part per sheet, and delimited text (.csv, .tsv; the standard
library) as one table. Each row is one line that names
its columns ("Region: North; Revenue: 120"), numbered as in the file, so that a citation says "sheet
'Sales', row 7" and a reader finds row 7. A first row of text cells is taken for the column names;
without one, columns are named by letter as a spreadsheet shows them."""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from thinkgraph.errors import InputError
from thinkgraph.index.convert import ParsedDocument, TextBuilder
from thinkgraph.index.extras import office_module
from thinkgraph.textfiles import NotText, decode_text

CSV_DELIMITERS = ",;\t|"
MAX_REPEAT = 1000  # an OpenDocument cell or row said to repeat more often than this is kept this often
SNIFF_BYTES = 64 * 1024


def cell_text(value: object) -> str:
    """A cell as a reader of the sheet sees it: 120 rather than 120.0, a date without a midnight time."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return " ".join(str(value).split())


def column_letter(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _is_header(cells: Sequence[str], values: Sequence[object]) -> bool:
    filled = [(c, v) for c, v in zip(cells, values, strict=True) if c]
    return len(filled) >= 1 and all(isinstance(v, str) and not _number(c) for c, v in filled)


def _number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def add_table(builder: TextBuilder, rows: Iterable[tuple[int, Sequence[object]]]) -> int:
    """The table's rows (number in the file, cell values) as lines; returns how many were kept."""
    names: list[str] | None = None
    kept = 0
    for number, values in rows:
        cells = [cell_text(v) for v in values]
        if not any(cells):
            continue
        if names is None and kept == 0 and _is_header(cells, values):
            names = cells
            builder.row(" | ".join(c for c in cells if c), number)
        else:
            labels = [(names[i] if names is not None and i < len(names) and names[i] else column_letter(i))
                      for i in range(len(cells))]
            builder.row("; ".join(f"{label}: {cell}" for label, cell in zip(labels, cells, strict=True) if cell),
                        number)
        kept += 1
    return kept


def parse_xlsx(name: str, data: bytes) -> ParsedDocument:
    openpyxl = office_module("openpyxl", name)
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as exc:
        raise InputError(f"{name}: unreadable Excel file ({type(exc).__name__}: {exc})") from exc
    builder = TextBuilder()
    try:
        for sheet in workbook.worksheets:
            builder.part(f"sheet '{sheet.title}'")
            builder.heading(sheet.title, 2)
            sheet.reset_dimensions()  # a writer's recorded size may be wrong ("A1"): read every row and column
            add_table(builder, enumerate(sheet.iter_rows(min_row=1, values_only=True), start=1))
        title = workbook.properties.title or None
    finally:
        workbook.close()
    return builder.document(title)


def _ods_cells(row: Any, teletype: Any) -> list[str]:
    """A row's cells as shown; a run of repeated empty cells (a sheet's unused columns) is not spelled out."""
    cells: list[str] = []
    pending = 0  # empty cells not yet added: only those before a filled one are
    for cell in row.childNodes:
        if getattr(cell, "qname", (None, None))[1] not in ("table-cell", "covered-table-cell"):
            continue
        text = " ".join(teletype.extractText(cell).split())
        repeat = int(cell.getAttribute("numbercolumnsrepeated") or 1)
        if not text:
            pending += repeat
            continue
        cells.extend([""] * pending + [text] * min(repeat, MAX_REPEAT))
        pending = 0
    return cells


def _ods_rows(table: Any, teletype: Any) -> Iterator[tuple[int, list[str]]]:
    from odf.table import TableRow

    number = 1
    for row in table.getElementsByType(TableRow):
        repeat = int(row.getAttribute("numberrowsrepeated") or 1)
        cells = _ods_cells(row, teletype)
        for i in range(min(repeat, MAX_REPEAT) if any(cells) else 0):
            yield number + i, cells
        number += repeat


def parse_ods(name: str, data: bytes) -> ParsedDocument:
    office_module("odf", name)
    from odf import dc, teletype
    from odf.opendocument import load
    from odf.table import Table

    try:
        document = load(io.BytesIO(data))
    except Exception as exc:  # odfpy raises whatever its zip and XML readers raise
        raise InputError(f"{name}: unreadable OpenDocument file ({type(exc).__name__}: {exc})") from exc
    builder = TextBuilder()
    for table in document.spreadsheet.getElementsByType(Table):
        sheet = str(table.getAttribute("name") or "")
        builder.part(f"sheet '{sheet}'")
        builder.heading(sheet, 2)
        add_table(builder, _ods_rows(table, teletype))
    found = document.meta.getElementsByType(dc.Title)
    return builder.document(teletype.extractText(found[0]).strip() or None if found else None)


def _csv_rows(text: str, dialect: type[csv.Dialect] | csv.Dialect) -> Iterator[tuple[int, list[str]]]:
    yield from enumerate(csv.reader(io.StringIO(text, newline=""), dialect), start=1)


def parse_csv(name: str, data: bytes) -> ParsedDocument:
    try:
        text = decode_text(data)
    except NotText as exc:
        raise InputError(f"{name}: {exc}") from None
    dialect: type[csv.Dialect] | csv.Dialect = csv.excel_tab if name.lower().endswith(".tsv") else csv.excel
    with contextlib.suppress(csv.Error):  # one column, or too little text to tell: the extension's delimiter
        dialect = csv.Sniffer().sniff(text[:SNIFF_BYTES], delimiters=CSV_DELIMITERS)
    builder = TextBuilder()
    builder.part("")
    try:
        add_table(builder, _csv_rows(text, dialect))
    except csv.Error as exc:
        raise InputError(f"{name}: malformed delimited text ({exc})") from exc
    return builder.document(None)

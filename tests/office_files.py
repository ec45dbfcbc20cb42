"""Small Word, PowerPoint, Excel, CSV, EPUB and OpenDocument files, written by the formats' own
libraries (the office extra) for the tests that index them. Each holds one fact a question can find
in a known place: a section, a slide, a sheet's row, a CSV row, a chapter."""

from __future__ import annotations

from pathlib import Path


def write_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = "Skarn harbour report"
    document.add_heading("The Lighthouse", 1)
    document.add_paragraph("The Skarn Lighthouse was built in 1871 on the northern cape.")
    document.add_paragraph("It has a white tower", style="List Bullet")
    document.add_heading("The Keepers", 2)
    document.add_paragraph("Nils Berg kept the Skarn Lighthouse for thirty years.")
    table = document.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Keeper", (0, 1): "Years", (1, 0): "Nils Berg", (1, 1): "1871-1902"}.items():
        table.cell(row, col).text = text
    document.save(path)
    return path


def write_pptx(path: Path) -> Path:
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Harbor Hill"
    first.placeholders[1].text_frame.text = "An observatory on the hill\nOpen since 1902"
    second = deck.slides.add_slide(deck.slide_layouts[1])
    second.shapes.title.text = "The lens"
    second.placeholders[1].text_frame.text = "Ilse Brandt ground the great lens of the observatory."
    second.notes_slide.notes_text_frame.text = "Mention her workshop."
    third = deck.slides.add_slide(deck.slide_layouts[5])
    third.shapes.title.text = "Visitors"
    grid = third.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for (row, col), text in {(0, 0): "Year", (0, 1): "Visitors", (1, 0): "2020", (1, 1): "1200"}.items():
        grid.cell(row, col).text = text
    deck.save(path)
    return path


def write_xlsx(path: Path) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    sales = book.active
    sales.title = "Sales"
    sales.append(["Region", "Revenue"])
    sales.append(["North", 120])
    sales.append([])  # an empty row 3: the next row is still row 4
    sales.append(["Vestfold", 80.5])
    staff = book.create_sheet("Staff")
    staff.append(["Name", "Role"])
    staff.append(["Ilse Brandt", "optician"])
    book.save(path)
    return path


def write_csv(path: Path) -> Path:
    path.write_text("name,town\nAda Lund,Skarn\nNils Berg,Harbor Hill\nOda Vik,Tromsbay\n", encoding="utf-8")
    return path


def write_epub(path: Path) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("tales-of-skarn")
    book.set_title("Tales of Skarn")
    book.set_language("en")
    one = epub.EpubHtml(title="The Keeper", file_name="one.xhtml", lang="en")
    one.content = "<html><body><h1>The Keeper</h1><p>Nils Berg kept the light.</p></body></html>"
    two = epub.EpubHtml(title="The Lens", file_name="two.xhtml", lang="en")
    two.content = "<html><body><h1>The Lens</h1><p>Ilse Brandt ground the lens in Tromsbay.</p></body></html>"
    for chapter in (one, two):
        book.add_item(chapter)
    book.toc = (epub.Link("one.xhtml", "The Keeper", "one"), epub.Link("two.xhtml", "The Lens", "two"))
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", one, two]
    epub.write_epub(str(path), book)
    return path


def write_odt(path: Path) -> Path:
    from odf import dc
    from odf.opendocument import OpenDocumentText
    from odf.text import H, List, ListItem, P

    document = OpenDocumentText()
    document.meta.addElement(dc.Title(text="Harbor notes"))
    document.text.addElement(H(outlinelevel=1, text="Observatory"))
    document.text.addElement(P(text="Harbor Hill Observatory stands above the bay."))
    items = List()
    item = ListItem()
    item.addElement(P(text="a dome of copper"))
    items.addElement(item)
    document.text.addElement(items)
    document.text.addElement(H(outlinelevel=2, text="Staff"))
    document.text.addElement(P(text="Oda Vik runs the observatory's archive."))
    document.save(str(path))
    return path


WRITERS = {"report.docx": write_docx, "deck.pptx": write_pptx, "book.xlsx": write_xlsx, "people.csv": write_csv,
           "tales.epub": write_epub, "notes.odt": write_odt}


def write_all(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return {name: write(folder / name) for name, write in WRITERS.items()}


def write_ods(path: Path) -> Path:
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    def row(*texts: str, repeated: int = 1) -> TableRow:
        made = TableRow(numberrowsrepeated=repeated) if repeated > 1 else TableRow()
        for text in texts:
            cell = TableCell()
            if text:
                cell.addElement(P(text=text))
            made.addElement(cell)
        made.addElement(TableCell(numbercolumnsrepeated=1020))  # a sheet's unused columns
        return made

    document = OpenDocumentSpreadsheet()
    table = Table(name="Tides")
    for made in (row("Harbour", "High water"), row("Skarn", "06:12"), row("", "", repeated=3),
                 row("Kestrel Bay", "07:40")):
        table.addElement(made)
    document.spreadsheet.addElement(table)
    document.save(str(path))
    return path

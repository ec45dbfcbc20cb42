"""`thinkgraph copy SRC DST`: move an index between SQLite and PostgreSQL (registered on the app of
thinkgraph.cli.app)."""

from __future__ import annotations

import json

import typer
from rich.markup import escape

from thinkgraph.cli.app import app, one_line_errors
from thinkgraph.cli.output import out


@app.command()
@one_line_errors
def copy(
    src: str = typer.Argument(..., help="Index to copy: an SQLite file or postgresql://...?schema=NAME."),
    dst: str = typer.Argument(..., help="New index to create: an SQLite file or postgresql://...?schema=NAME."),
    as_json: bool = typer.Option(False, "--json", help="Print the rows copied per section as JSON."),
) -> None:
    """Copy a whole index (graph, vectors, LLM cache, usage, audit): nothing is embedded or asked again."""
    from thinkgraph.store.copy import copy_index
    from thinkgraph.store.factory import open_store

    source = open_store(src, create=False)
    try:
        target = open_store(dst, create=True)
        try:
            counts = copy_index(source, target)
            shown = (source.describe(), target.describe())
        finally:
            target.close()
    finally:
        source.close()
    if as_json:
        print(json.dumps(counts, indent=2))
        return
    out.print(escape(f"copied {shown[0]} to {shown[1]}: " + ", ".join(f"{n} {name}" for name, n in counts.items())),
              highlight=False)

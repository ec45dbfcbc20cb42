"""Reading the text files users hand in (documents, OpenIE, triples, questions): binary data and text
that is not UTF-8 become one-line errors (or skips) naming the file and where, never a decode traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from thinkgraph.errors import InputError

BINARY_PROBE_BYTES = 8192  # a NUL byte this early means binary data, not text


class NotText(ValueError):
    """Bytes that are not UTF-8 text; the message says why."""


def decode_text(data: bytes) -> str:
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        raise NotText("binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotText(f"not UTF-8 (byte {exc.start})") from None


def text_lines(path: str | Path, what: str) -> Iterator[str]:
    """The lines of a UTF-8 text file, read as a stream (line endings kept)."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{what} not found: {file}" if not file.exists() else f"{file} is not a file ({what})")
    with file.open("rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if b"\x00" in raw:
                raise InputError(f"{file}:{lineno}: binary data where {what} (UTF-8 text) was expected")
            try:
                yield raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{file}:{lineno}: not UTF-8 text (byte {exc.start}); expected {what}") from None


def read_text(path: str | Path, what: str) -> str:
    return "".join(text_lines(path, what))

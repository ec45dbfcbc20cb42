"""The optional packages some file formats need (the ``office`` extra), and the one-line hint a file
gets when its package is not installed: the file is skipped with it, and the next `thinkgraph index`
after the install reads it."""

from __future__ import annotations

import importlib
from pathlib import PurePath
from types import ModuleType

from thinkgraph.errors import InputError

OFFICE_EXTRA = "office"
INSTALL_HINT = f"pip install 'thinkgraph[{OFFICE_EXTRA}]'"
NEEDS_EXTRA = "needs an extra"  # the kind of skip (index/loaders.py) of a file that NeedsExtra


class NeedsExtra(InputError):
    """A file whose format needs a package of an extra that is not installed."""


def office_module(module: str, file_name: str) -> ModuleType:
    """``module`` imported, or NeedsExtra naming the file and the install that reads files of its kind."""
    try:
        return importlib.import_module(module)
    except ImportError:
        what = PurePath(file_name).suffix.lower() or file_name
        raise NeedsExtra(f"{file_name}: reading {what} files needs the {OFFICE_EXTRA} extra: {INSTALL_HINT}") \
            from None

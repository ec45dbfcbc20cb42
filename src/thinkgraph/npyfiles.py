"""Reading numpy files from several threads at once.

numpy parses an .npy header with ``ast.literal_eval``, and CPython 3.11's compiler is not safe to run
in two threads at once: a service answering in one thread while it indexed in another failed with
"SystemError: AST constructor recursion depth mismatch" (the view cache, the community and synonym
states and bm25s all read .npy files). Every such read in the project goes through here, one header at a
time: a memory-mapped array or one read by ``load_npy`` holds the lock only for its header, an .npz
(``load_npz``: the community and synonym states) for the whole read of its arrays."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import numpy as np

_HEADERS = threading.Lock()  # (a lock around a library call, not shared data)


@contextmanager
def numpy_headers() -> Iterator[None]:
    """Held while a library reads .npy files itself (bm25s)."""
    with _HEADERS:
        yield


def load_npy(path: Path, *, mmap_mode: Literal["r"] | None = None) -> np.ndarray:
    with _HEADERS:
        array: np.ndarray = np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
    return array


def load_npz(path: Path) -> dict[str, np.ndarray]:
    """Every array of an .npz file, read now (an NpzFile parses each header when it is first asked for)."""
    with _HEADERS, np.load(path, allow_pickle=False) as arrays:
        return {key: arrays[key] for key in arrays.files}

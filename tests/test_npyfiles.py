"""Reading .npy files from many threads at once (thinkgraph/npyfiles.py) gives whole arrays, and an .npz
is read at once. The lock itself is for CPython 3.11's compiler race ("AST constructor recursion depth
mismatch"), which a unit test cannot provoke reliably: tests/robustness/test_concurrent_clients.py met it
in about half its runs before every .npy read went through npyfiles."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from thinkgraph.npyfiles import load_npy, load_npz


def test_many_threads_read_headers_without_tripping_each_other(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.arange(10))
    np.savez(tmp_path / "b.npz", x=np.arange(3), y=np.ones(2))

    def read(_: int) -> int:
        total = 0
        for _ in range(150):
            total += int(load_npy(tmp_path / "a.npy", mmap_mode="r")[3])
            total += int(load_npz(tmp_path / "b.npz")["x"][2])
        return total

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(read, range(16))) == [150 * 5] * 16
    assert load_npz(tmp_path / "b.npz").keys() == {"x", "y"}

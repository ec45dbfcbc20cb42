"""A real local model for the tests and benchmarks: llama-cpp-python's OpenAI-compatible server (the
server most local users run) with a GGUF model assembled offline from registry packages
(``thinkgraph.llm.local_models``): Gemma 3 270M (``gemma-270m``, the fast model of the real-model tests)
or Qwen2.5-Coder-1.5B-Instruct (``qwen-1.5b``, the model that follows instructions).

Tests that use it are skipped when the packages are missing, unless THINKGRAPH_REQUIRE_LLAMA is set
(CI sets it), in which case they fail: a missing model must not pass silently.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from thinkgraph.llm.local_models import PackagedModel, assemble, get_model

REQUIRE_ENV = "THINKGRAPH_REQUIRE_LLAMA"
DEFAULT_MODEL = "gemma-270m"
MODEL_ALIAS = get_model(DEFAULT_MODEL).alias
START_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class RealModel:
    base_url: str
    model: str
    log: Path


def missing_packages(name: str = DEFAULT_MODEL) -> list[str]:
    llama = [] if importlib.util.find_spec("llama_cpp") else ["llama_cpp"]
    return llama + get_model(name).missing_packages()


def test_cache() -> Path:
    """Where the tests keep assembled models (THINKGRAPH_TEST_MODEL_CACHE, else ~/.cache/thinkgraph-tests)."""
    cache = Path(os.environ.get("THINKGRAPH_TEST_MODEL_CACHE", Path.home() / ".cache" / "thinkgraph-tests"))
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def model_file(cache_dir: Path, name: str = DEFAULT_MODEL) -> Path:
    """The model's GGUF file, assembled from its packages' parts once (offline, checked) into ``cache_dir``."""
    return assemble(get_model(name), cache_dir)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


THREADS_ENV = "THINKGRAPH_LLAMA_THREADS"


def physical_cores() -> int:
    """The machine's physical cores, as scripts/local_model.sh counts them (never 0): on Linux the distinct
    cores (hyperthread siblings once) of the CPUs this process may run on, on macOS ``hw.physicalcpu``,
    else the CPUs it may run on."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    cores: set[str] = set()
    for cpu in allowed:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        siblings = next((f for f in (topology / "core_cpus_list", topology / "thread_siblings_list") if f.exists()),
                        None)
        if siblings is None:
            cores.clear()
            break
        cores.add(siblings.read_text().strip())
    if cores:
        return len(cores)
    if sys.platform == "darwin":
        with contextlib.suppress(OSError, ValueError, subprocess.SubprocessError):
            n = int(subprocess.run(["sysctl", "-n", "hw.physicalcpu"], capture_output=True, text=True,
                                   timeout=10).stdout)
            if n > 0:
                return n
    return max(1, len(allowed) or os.cpu_count() or 1)


def default_threads() -> int:
    """The server's threads when a caller names none: every physical core, as scripts/local_model.sh
    serves, or THINKGRAPH_LLAMA_THREADS (1 on a machine shared with other work: llama.cpp's threads
    spin-wait on each other, and with another server on this 2-core machine Gemma 3 270M wrote 22.8
    tokens/s on one thread against 0.9 on two)."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"{THREADS_ENV} must be a number of threads (1 or more), not {value!r}")
        return int(value)
    return physical_cores()


class LlamaServer:
    """``python -m llama_cpp.server`` on a free loopback port, stopped on exit."""

    def __init__(self, model: Path, log: Path, *, n_ctx: int = 8192, n_threads: int | None = None,
                 packaged: PackagedModel | None = None, cache_size: int | None = None,
                 logprobs: bool = True) -> None:
        """``n_threads`` writes and reads prompts (``--n_threads`` and ``--n_threads_batch``, as
        scripts/local_model.sh's ``--threads``); None: ``default_threads()``. ``cache_size``: llama-cpp-python's
        prompt cache of that many bytes (``--cache true --cache_size``, as the script serves); None: none.
        ``logprobs``: False serves without prompt logits (``--logits_all false``, the script's default), so
        that the server refuses log-probabilities and reads prompts faster; the real-model tests keep them."""
        # The session's Gemma server of the real-model tests (no ``packaged``) runs with llama-cpp-python's
        # default chat format, as those tests were written against; ``of`` serves a model as users do.
        self.alias = (packaged or get_model(DEFAULT_MODEL)).alias
        self.port = _free_port()
        self.log = log
        self.threads = n_threads or default_threads()
        self.command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias",
                        self.alias, "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(n_ctx),
                        "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]
        if cache_size is not None:
            self.command += ["--cache", "true", "--cache_size", str(cache_size)]
        if not logprobs:
            self.command += ["--logits_all", "false"]
        if packaged is not None and packaged.chat_format:
            self.command += ["--chat_format", packaged.chat_format]
        self.process: subprocess.Popen[bytes] | None = None

    @classmethod
    def of(cls, name: str, cache_dir: Path, log: Path, **kwargs: Any) -> LlamaServer:
        """The server of a packaged model by name (``gemma-270m``, ``qwen-1.5b``), assembled if needed."""
        packaged = get_model(name)
        return cls(assemble(packaged, cache_dir), log, packaged=packaged, **kwargs)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> RealModel:
        sink = self.log.open("wb")
        self.process = subprocess.Popen(self.command, stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}: "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    self._first_product()
                    return RealModel(self.base_url, self.alias, self.log)
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"llama_cpp.server did not answer within {START_TIMEOUT_S:.0f} s")

    def _first_product(self) -> None:
        """One token of a completion: a build with CPU features the machine does not grant (AMX tiles in
        a sandbox) answers /models and then dies on its first matrix product, which every test would
        otherwise report as "cannot connect"."""
        assert self.process is not None
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(f"{self.base_url}/chat/completions", timeout=120.0,
                       json={"model": self.alias, "max_tokens": 1, "messages": [{"role": "user", "content": "Hi"}]})
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=1.0)
        if self.process.poll() is not None:
            raise RuntimeError(
                f"llama_cpp.server died on its first completion (exit {self.process.returncode}); a build for "
                "CPU features this machine does not grant? Rebuild it portable: CMAKE_ARGS='-DGGML_NATIVE=OFF' "
                "pip install --no-cache-dir --force-reinstall --no-deps llama-cpp-python (scripts/env.sh). "
                f"Log: {self.log.read_text(errors='replace')[-1500:]}")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# Every method on small settings (a tiny CPU model is slow): the real-model tests and
# benchmarks/real_model.py ask these.
SMALL_METHODS: list[tuple[str, dict[str, Any]]] = [
    ("none", {}),
    ("naive", {}),
    ("ppr", {}),
    ("ircot", {}),
    ("a2rag", {"i_max": 1}),
    ("topg", {"mode": "naive"}),
    ("topg", {"mode": "local", "max_iter": 1}),
    ("topg", {"mode": "global", "breadth": 2, "global_max_iter": 1, "min_facts": 20}),
    ("tog3", {"horizon": 2}),
    ("kgr", {"strategy": "cot", "interaction": "agent", "steps": 3}),
    ("kgr", {"strategy": "cot", "interaction": "explore", "steps": 2, "search_depth": 1}),
    ("kgr", {"strategy": "tot", "interaction": "agent", "steps": 2, "k": 2, "t": 1}),
    ("kgr", {"strategy": "tot", "interaction": "explore", "steps": 1, "k": 2, "t": 1, "search_depth": 1}),
    ("kgr", {"strategy": "got", "interaction": "agent", "steps": 2, "k": 2, "t": 2, "evaluator": "score"}),
    ("kgr", {"strategy": "got", "interaction": "explore", "steps": 1, "k": 2, "t": 2, "search_depth": 1}),
    ("kg-textrag", {}),
    ("kg-graphrag", {}),
]

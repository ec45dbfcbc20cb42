"""The local model is served on every physical core unless asked for fewer, with the prompt cache on:
scripts/local_model.sh (``--threads N``, ``--no-cache``, ``--print`` shows the server command without
installing, assembling or starting anything) and the tests' and benchmarks' launcher (tests/realmodel.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import realmodel

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "local_model.sh"
needs_venv = pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "python").exists(),
                                reason="--print reads the model's path from ./.venv (scripts/env.sh creates it)")


def _script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def _flag(command: list[str], name: str) -> str:
    assert command.count(name) == 1, command
    return command[command.index(name) + 1]


def _printed(*args: str, env: dict[str, str] | None = None) -> list[str]:
    done = _script(*args, "--print", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout  # the command alone: nothing was installed, assembled or started
    return lines[0].split()


def test_the_usage_names_the_thread_and_cache_options() -> None:
    done = _script("--help")
    assert done.returncode == 0
    for option in ("--threads N", "--no-cache", "--logprobs", "--print"):
        assert option in done.stdout
    assert f"core, {realmodel.physical_cores()} on this machine" in done.stdout


@needs_venv
@pytest.mark.parametrize("model", ["qwen-1.5b", "gemma-270m"])
def test_the_server_reads_and_writes_on_every_physical_core_by_default(model: str) -> None:
    command = _printed(model)
    cores = str(realmodel.physical_cores())
    assert _flag(command, "--n_threads") == cores and _flag(command, "--n_threads_batch") == cores
    assert command[1:3] == ["-m", "llama_cpp.server"] and _flag(command, "--n_ctx") == "8192"


@needs_venv
@pytest.mark.parametrize("model", ["qwen-1.5b", "gemma-270m"])
def test_threads_1_serves_on_one_thread_for_a_shared_machine(model: str) -> None:
    command = _printed(model, "--threads", "1", "--port", "8123")
    assert _flag(command, "--n_threads") == "1" and _flag(command, "--n_threads_batch") == "1"
    assert _flag(command, "--port") == "8123"


@needs_venv
@pytest.mark.parametrize(("model", "cache_bytes"), [("qwen-1.5b", 128 << 20), ("gemma-270m", 48 << 20)])
def test_the_prompt_cache_is_on_and_bounded_unless_refused(model: str, cache_bytes: int) -> None:
    """Bounded well below llama-cpp-python's 2 GiB default: each kept state also holds its prompt's logits,
    which the bound does not count (22 times the counted size for Qwen, 57 for Gemma)."""
    command = _printed(model)
    assert _flag(command, "--cache") == "true" and _flag(command, "--cache_size") == str(cache_bytes)
    assert "--cache" not in _printed(model, "--no-cache") and "--cache_size" not in _printed(model, "--no-cache")


@needs_venv
@pytest.mark.parametrize("model", ["qwen-1.5b", "gemma-270m"])
def test_no_prompt_logits_unless_log_probabilities_are_asked_for(model: str) -> None:
    """Every prompt token's logits are computed only for log-probabilities (17% of Qwen's prompt reading):
    off by default, and the client is told to read verdicts as written; on with --logprobs."""
    assert _flag(_printed(model), "--logits_all") == "false"
    assert "--logits_all" not in _printed(model, "--logprobs")
    assert "--logits_all" not in _printed(model, "--logprobs", "--no-cache", "--threads", "1")


@pytest.mark.parametrize("args", [["--threads"], ["--threads", "0"], ["--threads", "two"], ["--threads", "-1"]])
def test_a_bad_thread_count_is_a_usage_error(args: list[str]) -> None:
    done = _script("gemma-270m", *args, "--print")
    assert done.returncode == 2 and "--threads needs a number of threads" in done.stderr


def _fake_lscpu(tmp_path: Path, rows: list[str]) -> dict[str, str]:
    """A PATH whose lscpu prints ``rows`` (CPU,Core,Socket) after lscpu's comment lines."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    lscpu = bin_dir / "lscpu"
    lscpu.write_text("#!/bin/sh\nprintf '# The following is the parsable format\\n# CPU,Core,Socket\\n"
                     + "".join(f"{row}\\n" for row in rows) + "'\n")
    lscpu.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


@needs_venv
@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux: the CPUs this process may run on")
@pytest.mark.parametrize(("layout", "expected"), [("a core each", "allowed"), ("siblings of one core", "1"),
                                                  ("two sockets", "allowed")])
def test_physical_cores_count_siblings_once_and_only_the_cpus_allowed(tmp_path: Path, layout: str,
                                                                      expected: str) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    rows = {"a core each": [f"{cpu},{n},0" for n, cpu in enumerate(allowed)],
            "siblings of one core": [f"{cpu},0,0" for cpu in allowed],
            "two sockets": [f"{cpu},0,{n}" for n, cpu in enumerate(allowed)]}[layout]
    rows.append(f"{max(allowed) + 1},{len(allowed) + 7},0")  # a core outside this process's CPU set: not counted
    command = _printed("gemma-270m", env=_fake_lscpu(tmp_path, rows))
    count = str(len(allowed)) if expected == "allowed" else expected
    assert _flag(command, "--n_threads") == count and _flag(command, "--n_threads_batch") == count


@needs_venv
def test_without_a_usable_lscpu_the_count_falls_back_and_is_never_zero(tmp_path: Path) -> None:
    env = _fake_lscpu(tmp_path, ["0,,"])  # no core column (some virtual machines)
    threads = int(_flag(_printed("gemma-270m", env=env), "--n_threads"))
    assert 1 <= threads <= (os.cpu_count() or 1)


def test_physical_cores_is_at_least_one_and_at_most_the_cpus() -> None:
    cores = realmodel.physical_cores()
    assert 1 <= cores <= (os.cpu_count() or 1)


def test_the_launcher_serves_on_every_physical_core_unless_a_caller_or_the_environment_says(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(realmodel.THREADS_ENV, raising=False)
    model, log = Path("model.gguf"), Path("server.log")
    cores = str(realmodel.physical_cores())
    default = realmodel.LlamaServer(model, log).command
    assert _flag(default, "--n_threads") == cores and _flag(default, "--n_threads_batch") == cores
    assert "--cache" not in default  # the tests' server: no prompt cache unless asked
    one = realmodel.LlamaServer(model, log, n_threads=1).command
    assert _flag(one, "--n_threads") == "1" and _flag(one, "--n_threads_batch") == "1"
    cached = realmodel.LlamaServer(model, log, cache_size=128 << 20).command
    assert _flag(cached, "--cache") == "true" and _flag(cached, "--cache_size") == str(128 << 20)
    monkeypatch.setenv(realmodel.THREADS_ENV, "1")
    assert _flag(realmodel.LlamaServer(model, log).command, "--n_threads_batch") == "1"
    assert _flag(realmodel.LlamaServer(model, log, n_threads=3).command, "--n_threads") == "3"
    monkeypatch.setenv(realmodel.THREADS_ENV, "0")
    with pytest.raises(ValueError, match=realmodel.THREADS_ENV):
        realmodel.LlamaServer(model, log)


@pytest.mark.skipif(sys.platform != "linux", reason="lscpu and sysfs: Linux")
def test_the_script_and_the_launcher_count_the_same_cores() -> None:
    done = subprocess.run(["bash", "-c", f"source <(sed -n '/^physical_cores()/,/^}}/p' {SCRIPT}); physical_cores"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == str(realmodel.physical_cores())

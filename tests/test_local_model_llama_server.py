"""`scripts/local_model.sh --server llama-server`: llama.cpp's own server, built once into the cache
(scripts/build_llama_server.sh), with a slot of 8,192 tokens per question in flight (``--parallel N``), every
physical core, its prompt cache in RAM unless refused. ``--print`` shows the command and builds nothing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import realmodel

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "scripts" / "local_model.sh"
BUILD = ROOT / "scripts" / "build_llama_server.sh"
needs_venv = pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "python").exists(),
                                reason="--print reads the model's path from ./.venv (scripts/env.sh creates it)")


def _run(script: Path, *args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "THINKGRAPH_CACHE_DIR": str(cache)})


def _command(tmp_path: Path, *args: str) -> list[str]:
    done = _run(RECIPE, *args, "--server", "llama-server", "--print", cache=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    return lines[0].split()


def _flag(command: list[str], name: str) -> str:
    assert command.count(name) == 1, command
    return command[command.index(name) + 1]


@needs_venv
@pytest.mark.parametrize("model", ["qwen-1.5b", "gemma-270m"])
def test_llama_server_serves_one_slot_on_every_core_with_its_prompt_cache(tmp_path: Path, model: str) -> None:
    command = _command(tmp_path, model)
    assert command[0] == str(tmp_path / "llama-server" / "11434.0.0" / "llama-server")
    assert not Path(command[0]).exists()  # --print built nothing
    cores = str(realmodel.physical_cores())
    assert _flag(command, "-t") == cores and _flag(command, "-tb") == cores
    assert _flag(command, "-np") == "1" and _flag(command, "-c") == "8192"
    assert _flag(command, "--cache-ram") == "2048"
    assert "--logits_all" not in command  # llama-cpp-python's flag: never handed to llama.cpp's server


@needs_venv
def test_parallel_slots_each_get_the_full_context_and_no_cache_is_honoured(tmp_path: Path) -> None:
    command = _command(tmp_path, "qwen-1.5b", "--parallel", "4", "--threads", "1", "--no-cache", "--port", "8123")
    assert _flag(command, "-np") == "4" and _flag(command, "-c") == str(4 * 8192) and "--kv-unified" in command
    assert _flag(command, "-t") == "1" and _flag(command, "--port") == "8123"
    assert _flag(command, "--cache-ram") == "0"


@pytest.mark.parametrize(("args", "message"), [
    (["--parallel", "2"], "--parallel needs --server llama-server"),
    (["--server", "llama-server", "--parallel", "0"], "--parallel needs a number of slots"),
    (["--server", "llama-server", "--parallel", "99999999999999999999"], "--parallel needs a number of slots"),
    (["--server", "ollama"], "--server needs llama-cpp-python or llama-server"),
    (["--server"], "--server needs llama-cpp-python or llama-server"),
])
def test_bad_server_options_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    done = _run(RECIPE, "gemma-270m", *args, "--print", cache=tmp_path)
    assert done.returncode == 2 and message in done.stderr


def test_the_usage_names_the_server_options(tmp_path: Path) -> None:
    done = _run(RECIPE, "--help", cache=tmp_path)
    assert done.returncode == 0 and "--server NAME" in done.stdout and "--parallel N" in done.stdout


def test_a_built_server_is_found_in_the_cache_and_not_built_again(tmp_path: Path) -> None:
    binary = tmp_path / "llama-server" / "11434.0.0" / "llama-server"
    assert _run(BUILD, "--path", cache=tmp_path).stdout.strip() == str(binary)
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    done = _run(BUILD, cache=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == str(binary) and "building" not in done.stderr


def test_the_build_script_refuses_what_it_does_not_know_before_building(tmp_path: Path) -> None:
    done = _run(BUILD, "--help", cache=tmp_path)
    assert done.returncode == 2 and "usage: bash scripts/build_llama_server.sh [--path]" in done.stderr
    assert not (tmp_path / "llama-server").exists()

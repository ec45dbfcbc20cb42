"""One documented configuration, read from a TOML file and the environment at call time.

Nothing here runs at import. API keys are read only from the environment variable that
``LLMSettings.api_key_env`` names, are never written to a file, and never appear in reprs.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from thinkgraph.errors import ConfigError

DEFAULT_INCLUDE = ("*.txt", "*.md", "*.markdown", "*.jsonl", "*.html", "*.htm", "*.pdf")  # files taken from folders

DEFAULT_CONFIG_FILE = "thinkgraph.toml"
DEFAULT_EMBED_MODEL = "all-MiniLM-L6-v2"

# ToG-3 App. A: chunk size 1024 tokens with 20 overlap, at most 2 triplets per chunk,
# hierarchical Leiden with maximum cluster size 5.
TOG3_CHUNK_TOKENS = 1024
TOG3_CHUNK_OVERLAP = 20
TOG3_MAX_TRIPLETS_PER_CHUNK = 2
TOG3_MAX_CLUSTER_SIZE = 5
# ToPG App. A: entities reconciled when their embeddings have cosine >= 0.9.
TOPG_SYNONYM_COSINE = 0.9


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


CallKind = Literal["answer", "verdict", "extraction", "action", "summary", "query", "report"]
StructuredOutput = Literal["auto", "json_schema", "json_object_schema", "ollama_format", "json_object", "none"]


class CompletionCaps(_Section):
    """Completion tokens asked for per kind of call (``max_tokens`` of the request). Each default fits
    its job with room to spare, so that a model that rambles stops early instead of running to the
    context limit. In a TOML file: ``[llm.max_tokens]`` with any of the keys, or one number for all."""

    answer: int = Field(default=384, ge=1)  # a short answer with citations ("a name, a date, a phrase")
    verdict: int = Field(default=256, ge=1)  # a JSON verdict, a score or a ranking with a short reason
    extraction: int = Field(default=1024, ge=1)  # entities and triplets / propositions of one chunk
    action: int = Field(default=256, ge=1)  # one Thought + Action step, or one reasoning sentence
    summary: int = Field(default=300, ge=1)  # a document or community summary
    query: int = Field(default=128, ge=1)  # keywords, a rewritten or evolved query, sub-questions
    report: int = Field(default=2048, ge=1)  # a long synthesised report (ToPG global mode)

    @model_validator(mode="before")
    @classmethod
    def _one_number_for_all(cls, value: object) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            return {kind: value for kind in cls.model_fields}
        return value

    def for_kind(self, kind: CallKind) -> int:
        return int(getattr(self, kind))


class LLMSettings(_Section):
    """An OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp, LM Studio, OpenAI)."""

    base_url: str | None = None  # None: no LLM configured
    model: str = "default"
    api_key_env: str = "THINKGRAPH_LLM_API_KEY"
    api_key: SecretStr | None = Field(default=None, exclude=True)  # filled from the environment only
    context_window: int = 8192  # tokens the model accepts, prompt plus completion
    max_tokens: CompletionCaps = Field(default_factory=CompletionCaps)  # per kind of call
    # Structured output: "auto" negotiates the form the server accepts (remembered in the index);
    # or pin one of json_schema | json_object_schema | ollama_format | json_object | none.
    structured_output: StructuredOutput = "auto"
    max_reply_bytes: int = 1_000_000  # a larger response body is malformed (never read into memory whole)
    temperature: float = 0.0  # greedy decoding, as ToG-3 App. A
    seed: int | None = None  # sent with every request when set (eval --seed sets it)
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_s: float = 1.0  # first retry delay; doubles each retry, capped at 30 s
    concurrency: int = 8
    max_repairs: int = 2  # re-asks when structured output fails to parse
    budget_calls: int | None = None  # stop a run cleanly after this many uncached calls
    budget_tokens: int | None = None

    @property
    def configured(self) -> bool:
        return bool(self.base_url)


class EmbeddingSettings(_Section):
    provider: Literal["local", "openai", "hashing"] = "local"  # hashing: model-free, for huge graphs
    model: str = DEFAULT_EMBED_MODEL  # packaged default, a local sentence-transformers path, or a remote name
    base_url: str | None = None  # for provider "openai"
    api_key_env: str = "THINKGRAPH_EMBED_API_KEY"
    api_key: SecretStr | None = Field(default=None, exclude=True)
    batch_size: int = 64
    dim: int | None = None  # for provider "hashing" (default 384)
    ann_threshold: int = 100_000  # exact numpy search below this many vectors, HNSW above


class IndexSettings(_Section):
    chunk_tokens: int = TOG3_CHUNK_TOKENS
    chunk_overlap: int = TOG3_CHUNK_OVERLAP
    extractor: Literal["nolm", "llm", "propositions", "import"] = "nolm"
    max_triplets_per_chunk: int = TOG3_MAX_TRIPLETS_PER_CHUNK
    # nolm: also keep each sentence that names an entity as a proposition, so that ToPG can run on
    # an index built without a model (a sentence is a coarser unit than ToPG's LLM propositions).
    nolm_propositions: bool = False
    synonym_threshold: float = TOPG_SYNONYM_COSINE
    max_cluster_size: int = TOG3_MAX_CLUSTER_SIZE
    leiden_seed: int = 42
    summarize_communities: bool = True  # only when an LLM is configured
    # Hierarchical communities (ToG-3's community layer; only tog3 reads them). "auto" builds them
    # except for imported graphs (--openie/--triples: the HippoRAG setting of ppr, naive, a2rag and
    # topg), where their Leiden levels and vectors were a third of the indexing time; "always"/"never"
    # decide for every extractor. tog3 refuses an index built without them (or -o use_communities=false).
    communities: Literal["auto", "always", "never"] = "auto"
    max_file_bytes: int = 20_000_000  # larger files are skipped and counted
    embed_node_types: list[str] = Field(
        default_factory=lambda: ["document", "chunk", "entity", "triplet", "community", "proposition"]
    )
    # Per-document summaries (A2RAG's gate compares queries with them): "auto" asks the LLM when one
    # is configured (one call per document, cached) and takes the opening sentences otherwise.
    document_summaries: Literal["auto", "first_sentences", "llm"] = "auto"
    summary_words: int = 60
    include: list[str] = Field(default_factory=lambda: list(DEFAULT_INCLUDE))
    exclude: list[str] = Field(default_factory=list)
    batch_docs: int = 32  # documents committed per batch (a kill loses at most one batch)


class RetrievalSettings(_Section):
    """Graph-aware evidence retrieval used by `ask` (HippoRAG-style PPR over entities and passages)."""

    top_k: int = 5
    entity_seeds: int = 5
    seed_min_cosine: float = 0.3
    damping: float = 0.5  # HippoRAG 2 uses 0.5 for its PPR
    passage_weight: float = 0.05  # HippoRAG 2: dense passage scores enter the reset vector at 0.05
    dense_mix: float = 0.0  # >0 blends dense and PPR ranks (reciprocal-rank style); 0 = PPR alone, as HippoRAG 2


class Settings(_Section):
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)


_ENV_OVERRIDES: dict[str, tuple[str, str]] = {
    "THINKGRAPH_LLM_BASE_URL": ("llm", "base_url"),
    "THINKGRAPH_LLM_MODEL": ("llm", "model"),
    "THINKGRAPH_LLM_CONTEXT_WINDOW": ("llm", "context_window"),
    "THINKGRAPH_EMBED_PROVIDER": ("embedding", "provider"),
    "THINKGRAPH_EMBED_MODEL": ("embedding", "model"),
    "THINKGRAPH_EMBED_BASE_URL": ("embedding", "base_url"),
}


def load_settings(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``path`` (or ./thinkgraph.toml when present), then environment overrides."""
    env = os.environ if env is None else env
    data: dict[str, dict[str, object]] = {}
    file = Path(path) if path else Path(DEFAULT_CONFIG_FILE)
    if path and not file.is_file():
        raise ConfigError(f"config file not found: {file}")
    if file.is_file():
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {file} is not valid TOML: {exc}") from exc
    for var, (section, key) in _ENV_OVERRIDES.items():
        if env.get(var):
            data.setdefault(section, {})[key] = env[var]
    for section in ("llm", "embedding"):
        if "api_key" in data.get(section, {}):
            raise ConfigError(f"[{section}] api_key must not be in a file; set the variable named by api_key_env")
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid configuration at {where}: {first['msg']}") from exc
    if key := env.get(settings.llm.api_key_env):
        settings.llm.api_key = SecretStr(key)
    if key := env.get(settings.embedding.api_key_env):
        settings.embedding.api_key = SecretStr(key)
    return settings

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

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator

from thinkgraph.errors import ConfigError

# Files taken from folders: every format `index` reads (docs/command-line.md lists them, and the extra some need).
DEFAULT_INCLUDE = ("*.txt", "*.md", "*.markdown", "*.jsonl", "*.html", "*.htm", "*.pdf", "*.docx", "*.pptx",
                   "*.xlsx", "*.xlsm", "*.csv", "*.tsv", "*.epub", "*.odt", "*.ods")

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
DEFAULT_MAX_QUESTION_CHARS = 4000  # [ask] max_question_chars


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
    # Ask for token log-probabilities with yes/no verdicts, read as P(yes) (llm/judgement.py). A server that
    # refuses the request fields (an HTTP 4xx naming logprobs) is asked again without them, once per run;
    # false never asks (the verdict as written decides then).
    logprobs: bool = True
    budget_calls: int | None = None  # stop a run cleanly after this many uncached calls
    budget_tokens: int | None = None

    @property
    def configured(self) -> bool:
        return bool(self.base_url)

    @field_validator("base_url")
    @classmethod
    def _an_http_url(cls, value: str | None) -> str | None:
        # anything else would be retried as a network failure before it is reported
        if value and not value.strip().lower().startswith(("http://", "https://")):
            raise ValueError(f"an http:// or https:// address such as http://127.0.0.1:8000/v1 (given {value!r})")
        return value


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
    extractor: Literal["nolm", "spacy", "llm", "propositions", "import"] = "nolm"
    max_triplets_per_chunk: int = Field(TOG3_MAX_TRIPLETS_PER_CHUNK, ge=1)
    # nolm / spacy: also keep each sentence that names an entity as a proposition, so that ToPG runs on
    # an index built without a model (a sentence is a coarser unit than ToPG's LLM propositions). On by
    # default: every method that runs without an LLM runs on the default index; false saves their
    # vectors (one per such sentence) where topg is not wanted.
    nolm_propositions: bool = True
    # nolm / spacy: the document's title entity (a title that reads as a name) is linked to every entity
    # of a sentence that does not name it, beside the sentence's own pairs (ours): a passage goes on about
    # its title in sentences that say "she" or "it", and without the link their entities were unreachable
    # from it. (Sentence propositions still mention only what they name: adding the title to them, as
    # ToPG's decontextualised propositions name their subject, cost topg 2 of HotpotQA's first 20.)
    # False: sentence co-occurrence alone (indexes built before 2026-11-29; documents already indexed keep
    # their links until they change or the index is rebuilt).
    nolm_title_links: bool = True
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
    # Keep what retrieval derives from the index (vectors, graph matrices, BM25, entity names) under the
    # user cache folder, per content revision, so that a new process answers without decoding the
    # whole index again (`thinkgraph ask` on MuSiQue: 3 s -> under 1 s). Derived data only.
    view_cache: bool = True
    # With the view cache: an indexing run (and a removal) ends by building that view for the index it
    # leaves (ours). Otherwise the first `ask` builds it: 45 s at 100k passages, 10+ minutes at 1M,
    # most of it the passages' HNSW graph (benchmarks/scale.py).
    prepare_view: bool = True
    # The derived stages' page cache (SQLite; ours): an eighth of the index's size (never less than the
    # 256 MiB every writer has), at most this. Their rows (community memberships, vectors) are keyed by content
    # hashes and land at random pages of the tables' indexes; once those outgrow the cache each insert
    # reads a page back (random inserts at 100k passages: 9.9 us a row with 256 MiB, 19.3 with 16 MiB;
    # the 1M build's community write: 30 us a row). The cache fills only as pages are used.
    derived_page_cache_mb: int = Field(default=4096, ge=0)


class RetrievalSettings(_Section):
    """Graph-aware evidence retrieval used by `ask` (HippoRAG-style PPR over entities and passages).
    Every lever is a switch so that `eval -m ppr:KEY=VALUE` measures it on and off."""

    top_k: int = Field(5, ge=1)
    entity_seeds: int = 5  # facts whose entities seed the walk (HippoRAG 2's link_top_k = 5)
    # When the facts seed the walk beside the linked question entities. HippoRAG 2 seeds on facts
    # after an LLM recognition filter drops the irrelevant ones; without that filter the best facts
    # by embedding often name neighbours the question is not about, and beside exact question
    # entities they cost MuSiQue dev 9 points of R@2 (benchmarks/retrieval_compare.py ablation).
    # "without_links": facts seed only questions in which no entity is linked.
    fact_seeds: Literal["always", "without_links", "never"] = "without_links"
    seed_min_cosine: float = 0.3
    damping: float = Field(0.5, gt=0.0, lt=1.0)  # HippoRAG 2 uses 0.5 for its PPR
    passage_weight: float = Field(0.05, ge=0.0)  # HippoRAG 2: passage scores enter the reset vector at 0.05
    # BM25 (bm25s, Snowball stemmer) fused with dense cosine over passages and facts: names and
    # numbers that MiniLM blurs are matched exactly. 0.7 is the dense weight of the plain hybrid.
    lexical: bool = True
    dense_weight: float = Field(0.7, ge=0.0, le=1.0)
    # HippoRAG 1's query-entity seeds beside HippoRAG 2's fact seeds: the question's named entities
    # (exact names, fuzzy above the cutoff) reach the walk even when no extracted fact matches well.
    link_entities: bool = True
    link_weight: float = Field(1.0, ge=0.0)  # relative to the fact seeds (both are in [0, 1] before specificity)
    fuzzy_link_cutoff: float = 90.0  # rapidfuzz ratio for a name-like question phrase to link
    # LLM-free multi-hop: a second walk that also starts from the entities of the first walk's best
    # passages (the first hop's answers are the second hop's subjects), each passage weighted by
    # its score relative to the best. 0 turns it off. Two passages: HotpotQA's and most of
    # MuSiQue's questions are 2-hop, and a question's first hop rarely ranks below second; more
    # passages pull the walk toward neighbours of weaker guesses (HotpotQA dev R@2 67 -> 55 with 3,
    # measured before the second walk was added to the first rather than replacing it).
    # The bridges count half as much as the question's own seeds, since they are guesses.
    bridge_passages: int = Field(2, ge=0)
    bridge_weight: float = Field(0.5, ge=0.0)
    # The second walk's passage prior: "residual" scores passages against the question without the
    # names of the entities the first-hop passages contain, so that the second hop's passage matches
    # on what is asked of the bridge, not on the first entity's name (retrieval/second_hop.py);
    # "question": the whole question, as the first walk.
    second_hop_query: Literal["question", "residual"] = "residual"
    # Rank second the best passage sharing an entity with the first, by residual question and walk
    # score (a width-one beam over passage chains; retrieval/second_hop.py).
    hop_chain: bool = True
    # >0 blends the final ranking with the hybrid passage ranking (reciprocal ranks), so that a walk
    # with nothing to add degrades to the dense/lexical ranking; 0 = PPR alone, as HippoRAG 2.
    dense_mix: float = Field(0.0, ge=0.0, le=1.0)
    # The walk. "exact": PPR on the whole entity-passage graph (conjugate gradients) with the passage
    # prior over every passage, HippoRAG 2's form. "local" (ours): the prior over the `prior_candidates`
    # best passages by dense search (HNSW on a large index) and as many by BM25, fused among
    # themselves, and local push PPR (graph/local_ppr.py, Andersen-Chung-Lang) from that sparse reset,
    # whose work is bounded by the reset and `push_eps`, not by the index: with a prior over every
    # passage the reset touches every passage and a question cost 1.6 s at 1M passages. On the dev
    # sets "local" is within a question of "exact" (docs/benchmarks.md, the ppr ablation). "auto": local from
    # `local_from_passages` passages (the size at which dense search turns to HNSW), exact below.
    walk: Literal["auto", "exact", "local"] = "auto"
    local_from_passages: int = Field(100_000, ge=0)
    prior_candidates: int = Field(1000, ge=1)
    # The local walk's candidates include the passages of its seed entities, of a seed in more passages
    # than this (a country, a year, a large city) only this many, the best by BM25 (ours): the second
    # walk's bridges brought 20-50k passages to score densely per question at a million passages.
    seed_passages_max: int = Field(1000, ge=1)
    push_eps: float = Field(1e-5, gt=0.0)


class AskSettings(_Section):
    """What a question may be, for every method and every way of asking (the command line, Python, the
    service, MCP)."""

    # A longer question is refused in one line rather than sent to the encoder and the model as it is
    # (a pasted document is not a question); the service's request schema has the same default.
    max_question_chars: int = Field(default=DEFAULT_MAX_QUESTION_CHARS, ge=1)


class ReaderSettings(_Section):
    """The one reader, every method's final answer step (methods/reader.py). Each setting is also an
    option of every method for one run (``ask -o evidence_sentences=2``, ``eval -m
    ppr:evidence_sentences=2``), beside the method's own."""

    # How much of each passage the reader is shown: its N sentences that bear most on the question and
    # the entities linked to it, with the sentence a pronoun among them stands for, and "…" where
    # sentences were left out (retrieval/compaction.py); a passage that short is shown whole. 0: whole
    # passages, ppr's measured prompt byte for byte. The default stays 0: on the curve of F1 against
    # prompt tokens (benchmarks/answer_quality.py --methods ppr ppr:evidence_sentences=N, first 20 dev
    # questions) no N kept ppr's F1 on both datasets (4: MuSiQue the same, 9% fewer tokens; HotpotQA one
    # question worse; docs/local-models.md).
    evidence_sentences: int = Field(default=0, ge=0)


READER_OPTIONS = tuple(ReaderSettings.model_fields)  # every method's options that the reader reads


class Settings(_Section):
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    ask: AskSettings = Field(default_factory=AskSettings)
    reader: ReaderSettings = Field(default_factory=ReaderSettings)


_ENV_OVERRIDES: dict[str, tuple[str, str]] = {
    "THINKGRAPH_LLM_BASE_URL": ("llm", "base_url"),
    "THINKGRAPH_LLM_MODEL": ("llm", "model"),
    "THINKGRAPH_LLM_CONTEXT_WINDOW": ("llm", "context_window"),
    "THINKGRAPH_LLM_CONCURRENCY": ("llm", "concurrency"),
    "THINKGRAPH_LLM_TIMEOUT_S": ("llm", "timeout_s"),  # a CPU model reading a long prompt needs minutes
    "THINKGRAPH_LLM_LOGPROBS": ("llm", "logprobs"),  # false: verdicts as written (no log-probabilities asked)
    "THINKGRAPH_READER_EVIDENCE_SENTENCES": ("reader", "evidence_sentences"),  # 0: whole passages
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
    if llm_key := env.get(settings.llm.api_key_env):
        settings.llm.api_key = SecretStr(llm_key)
    if embedding_key := env.get(settings.embedding.api_key_env):
        settings.embedding.api_key = SecretStr(embedding_key)
    return settings

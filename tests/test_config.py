"""Settings from file and environment; secrets only from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from thinkgraph.config import TOG3_CHUNK_OVERLAP, TOG3_CHUNK_TOKENS, Settings, load_settings
from thinkgraph.errors import ConfigError


def test_defaults_are_the_papers_numbers() -> None:
    s = Settings()
    assert (s.index.chunk_tokens, s.index.chunk_overlap) == (TOG3_CHUNK_TOKENS, TOG3_CHUNK_OVERLAP) == (1024, 20)
    assert s.index.max_triplets_per_chunk == 2 and s.index.max_cluster_size == 5
    assert s.index.synonym_threshold == 0.9 and not s.llm.configured


def test_file_then_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "thinkgraph.toml"
    cfg.write_text('[llm]\nbase_url = "http://file/v1"\nmodel = "from-file"\ncontext_window = 4096\n'
                   '[index]\nchunk_tokens = 256\n', "utf-8")
    s = load_settings(cfg, env={"THINKGRAPH_LLM_MODEL": "from-env", "THINKGRAPH_LLM_CONCURRENCY": "1"})
    assert s.llm.base_url == "http://file/v1" and s.llm.model == "from-env" and s.llm.context_window == 4096
    assert s.llm.concurrency == 1 and load_settings(cfg, env={}).llm.concurrency == 8
    with pytest.raises(ConfigError, match="llm.concurrency"):
        load_settings(cfg, env={"THINKGRAPH_LLM_CONCURRENCY": "many"})
    assert s.index.chunk_tokens == 256
    monkeypatch.chdir(tmp_path)  # ./thinkgraph.toml is read when no path is given
    assert load_settings(env={}).llm.model == "from-file"


def test_api_key_from_named_variable_only(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[llm]\napi_key_env = "MY_KEY"\n', "utf-8")
    s = load_settings(cfg, env={"MY_KEY": "sk-abc"})
    assert s.llm.api_key.get_secret_value() == "sk-abc" and "sk-abc" not in repr(s)
    cfg.write_text('[llm]\napi_key = "sk-abc"\n', "utf-8")
    with pytest.raises(ConfigError, match="must not be in a file"):
        load_settings(cfg, env={})


@pytest.mark.parametrize("content, message", [
    ("[llm\n", "not valid TOML"),
    ("[llm]\ncontext_window = 'big'\n", "llm.context_window"),
    ("[index]\nextractor = 'magic'\n", "index.extractor"),
    ("[nope]\nx = 1\n", "nope"),
    ("[retrieval]\ntop_k = -3\n", "retrieval.top_k"),  # no evidence at all is not a setting
    ("[retrieval]\ntop_k = 0\n", "retrieval.top_k"),
    ("[llm]\nbase_url = 'not-a-url'\n", "llm.base_url.*http://"),  # refused at once, not retried
])
def test_invalid_files_are_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(content, "utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings(cfg, env={})
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "missing.toml", env={})

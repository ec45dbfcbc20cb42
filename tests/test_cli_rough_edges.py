"""The rough edges a first user meets (issue 40), each through the real entry point: `python -m
thinkgraph` in a subprocess whose output is a pipe, as in CI, cron or `| less`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import SAMPLE_CORPUS, FakeOpenAIServer
from thinkgraph.errors import ExitCode


def run(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The command with stdout and stderr piped, no THINKGRAPH_ settings and no COLUMNS (a pipe has no width)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_") and k != "COLUMNS"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "thinkgraph", *args], capture_output=True, text=True,
                          env=full_env, timeout=300, input=stdin)


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rough") / "sample.db"
    done = run("--index", str(path), "index", str(SAMPLE_CORPUS))
    assert done.returncode == 0, done.stderr
    return path


def test_help_shows_flags_as_flags_and_click_metavars() -> None:
    top = run("--help", env={"COLUMNS": "200"})
    asked = run("ask", "--help", env={"COLUMNS": "200"})
    indexed = run("index", "--help", env={"COLUMNS": "200"})
    for done in (top, asked, indexed):
        assert done.returncode == 0, done.stderr
        assert not any(f"<{t}" in done.stdout for t in ("bool", "str", "path", "int", "list")), done.stdout
    lines = {line.split()[1]: line for line in top.stdout.splitlines() if line.startswith("│ --")}
    assert "PATH" in lines["--index"] and "PATH" in lines["--config"]
    assert lines["--verbose"].split()[1:4] == ["--verbose", "-v", "Log"]  # a flag: no type between
    assert "Usage: thinkgraph ask [OPTIONS] QUESTION" in asked.stdout
    assert "INTEGER RANGE [x>=1]" in asked.stdout and "│ --json " in asked.stdout
    assert "Usage: thinkgraph index [OPTIONS] [PATHS]..." in indexed.stdout


@pytest.mark.parametrize("args, message", [
    (["ask", "Who?", "--top-k", "0"], "error: invalid value for '--top-k' / '-k': Input should be greater than or "
                                      "equal to 1; see `thinkgraph ask --help`"),
    (["ask"], "error: missing argument 'question'; see `thinkgraph ask --help`"),
    (["ask", "Who?", "--bogus"], "error: no such option: --bogus"),
])
def test_a_usage_error_is_one_line(args: list[str], message: str) -> None:
    done = run(*args)
    assert done.returncode == ExitCode.USAGE and done.stdout == ""
    assert done.stderr.startswith(message) and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_thinkgraph_alone_still_shows_its_help() -> None:
    done = run()
    assert done.returncode == ExitCode.USAGE and "Usage: thinkgraph [OPTIONS] COMMAND" in done.stdout + done.stderr


def test_piped_output_is_not_wrapped_at_80_columns(sample_index: Path) -> None:
    done = run("-i", str(sample_index), "ask", "Who trained Lena Sorensen?")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("answer synthesis needs an LLM endpoint") and lines[0].endswith("retrieved evidence")
    quote = lines[lines.index(next(line for line in lines if line.startswith("[1] people.md"))) + 1]
    assert len(quote) > 200 and quote.rstrip().endswith("among them Lena Sorensen.")
    narrow = run("-i", str(sample_index), "ask", "Who trained Lena Sorensen?", env={"COLUMNS": "60"})
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60  # a width the user sets still counts


def test_quotes_are_shown_as_plain_text_and_keep_their_offsets(sample_index: Path) -> None:
    import json

    human = run("-i", str(sample_index), "ask", "Who trained Lena Sorensen?")
    assert human.returncode == 0, human.stderr
    assert "    Joseph Okafor (1889-1961) was an astronomer" in human.stdout and "**" not in human.stdout
    as_json = run("-i", str(sample_index), "ask", "Who trained Lena Sorensen?", "--json")
    cited = json.loads(as_json.stdout)["citations"][0]
    source = (SAMPLE_CORPUS / cited["doc_id"]).read_text(encoding="utf-8")
    assert cited["quote"].startswith("**Joseph Okafor**")  # the data keeps the source's characters
    assert source[cited["start"]:cited["end"]] == cited["quote"]


def test_plain_text_drops_markdown_markup_only() -> None:
    from thinkgraph.citations import display_quote, plain_text

    assert plain_text("## The Lens ##\n> It was *ground* by **Ilse Brandt** ([notes](http://x.org/a))") == \
        "The Lens\nIt was ground by Ilse Brandt (notes)"
    assert plain_text("5 * 3 * 2, snake_case_name, a*b, #1, `cfg`") == "5 * 3 * 2, snake_case_name, a*b, #1, cfg"
    assert display_quote("**Ilse\n Brandt** ground it", 400) == "Ilse Brandt ground it"


def test_the_graph_evidence_says_what_the_tilde_means(sample_index: Path) -> None:
    done = run("-i", str(sample_index), "ask", "Who trained Lena Sorensen?")
    assert done.returncode == 0, done.stderr
    paths = done.stdout.split("Graph evidence", 1)[1]
    assert " ~ " in paths  # the sample's paths hold co-occurrence links
    assert paths.splitlines()[0] == (" (A ~ B: named in one sentence, or one is the title of the document whose "
                                     "sentence names the other)")


@pytest.mark.parametrize("question, message", [
    ("🙂🎉", "error: the question has no words to search for (only symbols, emoji or punctuation)"),
    ("?!… 🙂", "error: the question has no words to search for"),
    ("word " * 4000, "error: the question is 20,000 characters long; the limit is 4,000 ([ask] max_question_chars)"),
])
def test_a_question_without_words_or_too_long_is_refused_in_one_line(sample_index: Path, question: str,
                                                                      message: str) -> None:
    done = run("-i", str(sample_index), "ask", question)
    assert done.returncode == ExitCode.INPUT and done.stdout == ""  # no evidence ranked, no score of 1.000
    assert done.stderr.startswith(message) and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_question_of_dash_is_read_from_standard_input(sample_index: Path) -> None:
    """A question too long for the argument list (the OS refuses some 100 KB), or piped, comes on stdin."""
    asked = run("-i", str(sample_index), "ask", "-", stdin="Who trained Lena Sorensen?\n")
    assert asked.returncode == 0 and "Evidence" in asked.stdout, asked.stderr
    long = run("-i", str(sample_index), "ask", "-", stdin="word " * 40_000)  # (the last space is no part of it)
    assert long.returncode == ExitCode.INPUT and long.stderr.startswith("error: the question is 199,999 characters")


def test_an_option_given_twice_is_refused(sample_index: Path) -> None:
    done = run("-i", str(sample_index), "ask", "Who trained Lena?", "-m", "tog3", "-o", "horizon=1", "-o", "horizon=2")
    assert done.returncode == ExitCode.USAGE and done.stderr.startswith("error: option 'horizon' is given twice")


def test_several_settings_in_one_option_are_refused_with_the_form_that_works(sample_index: Path) -> None:
    done = run("-i", str(sample_index), "ask", "Who trained Lena?", "-m", "tog3", "-o", "horizon=1,reader=paper")
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert done.stderr.startswith("error: option 'horizon=1,reader=paper' holds more than one setting")
    assert "(-o horizon=1 -o reader=paper)" in done.stderr
    listed = run("-i", str(sample_index), "ask", "Who?", "-m", "tog3", "-o", "x=[1,2], y=3")
    assert listed.returncode == ExitCode.USAGE and "(-o x=[1,2] -o y=3)" in listed.stderr  # a comma inside a value
    quoted = run("-i", str(sample_index), "ask", "Who?", "-m", "tog3", "-o", 'reader_notes="a,b=c"')
    assert "more than one setting" not in quoted.stderr and "reader_notes" in quoted.stderr  # one JSON string


def test_the_question_length_limit_is_a_setting(sample_index: Path, tmp_path: Path) -> None:
    config = tmp_path / "thinkgraph.toml"
    config.write_text("[ask]\nmax_question_chars = 12\n", encoding="utf-8")
    refused = run("-c", str(config), "-i", str(sample_index), "ask", "Who trained Lena?")
    assert refused.returncode == ExitCode.INPUT and "the limit is 12 ([ask] max_question_chars)" in refused.stderr
    asked = run("-c", str(config), "-i", str(sample_index), "ask", "Lena? 🙂")  # words and an emoji: asked
    assert asked.returncode == 0 and "Evidence" in asked.stdout, asked.stderr


def test_index_without_a_terminal_prints_progress_lines(tmp_path: Path) -> None:
    import re

    done = run("-i", str(tmp_path / "p.db"), "index", str(SAMPLE_CORPUS))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    form = re.compile(r"\[\d+\.\d s\] [\w ]+: (\d+ done|\d+/\d+|started)")
    assert lines and all(form.fullmatch(line) for line in lines), lines
    stages = [line.split("] ", 1)[1] for line in lines]
    assert "documents: 4 done" in stages and "synonyms: started" in stages and "communities: started" in stages
    assert "indexed 4 documents" in done.stdout  # the report stays on stdout
    quiet = run("-i", str(tmp_path / "q.db"), "index", str(SAMPLE_CORPUS), "--json")
    assert quiet.returncode == 0 and quiet.stderr == ""  # --json: a script reads the report, nothing else


def test_progress_lines_are_spaced_out_and_the_last_count_is_said() -> None:
    import io

    from rich.console import Console

    from thinkgraph.cli.progress import LineProgress

    buffer = io.StringIO()
    lines = LineProgress(Console(file=buffer, width=200), every_s=3600)
    for done in range(1, 101):
        lines("embed", done, 100)
    lines("synonyms", 0, None)
    lines.finish()
    said = [line.split("] ", 1)[1] for line in buffer.getvalue().splitlines()]
    assert said == ["embed: 1/100", "synonyms: started", "embed: 100/100"]


def test_files_deleted_from_an_indexed_folder_get_a_hint_with_the_remove_command(tmp_path: Path) -> None:
    import json
    import shlex
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE_CORPUS, corpus)
    index = tmp_path / "v.db"
    assert run("-i", str(index), "index", str(corpus)).returncode == 0
    (corpus / "people.md").unlink()
    (corpus / "kestrel-bay.md").unlink()
    again = run("-i", str(index), "index", str(corpus), "--json")
    assert again.returncode == 0, again.stderr
    hint = [line for line in again.stderr.splitlines() if line.startswith("hint:")]
    assert hint == ["hint: 2 indexed document(s) come from files that are gone from the folder; they stay in the "
                    f"index until removed: thinkgraph --index {index} remove kestrel-bay.md people.md"]
    listed = json.loads(run("-i", str(index), "documents", "--json").stdout)
    assert len(listed) == 4  # nothing was deleted by the hint
    command = shlex.split(hint[0].split("until removed: ", 1)[1])
    removed = run(*command[1:])  # the command as printed, after `thinkgraph`
    assert removed.returncode == 0, removed.stderr
    assert [d["id"] for d in json.loads(run("-i", str(index), "documents", "--json").stdout)] == \
        ["harbor-observatory.md", "skarn-lighthouse.txt"]
    assert "hint:" not in run("-i", str(index), "index", str(corpus)).stderr


def test_a_json_lines_record_is_gone_only_with_its_file(tmp_path: Path) -> None:
    from thinkgraph.cli.vanished import vanished_documents
    from thinkgraph.models import DocumentRecord

    kept, lost = tmp_path / "kept.jsonl", tmp_path / "sub" / "lost.jsonl"
    kept.write_text("{}\n", encoding="utf-8")
    docs = [DocumentRecord(id=i, source=s, title="", content_hash="") for i, s in
            (("a", f"{kept}:1"), ("b", f"{lost}:3"), ("c", str(tmp_path / "gone.md")), ("d", "/elsewhere/x.md"))]
    assert [d.id for d in vanished_documents(docs, [tmp_path])] == ["b", "c"]
    assert vanished_documents(docs, [kept]) == []  # a file given, not a folder: nothing to say


def test_index_says_it_asks_the_llm_for_summaries_and_how_many_calls(tmp_path: Path) -> None:
    import json
    import re

    with FakeOpenAIServer() as server:
        server.responder = lambda payload: "A short summary."
        env = {"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "tiny-model"}
        first = run("-i", str(tmp_path / "s.db"), "index", str(SAMPLE_CORPUS), env=env)
        assert first.returncode == 0, first.stderr
        assert first.stderr.startswith("the LLM (tiny-model) is asked for a summary of each new or changed document "
                                       "and a summary of each new or changed community: one call each, cached")
        counted = re.search(r"^LLM calls: (\d+) \(document summary 4, community summary (\d+)\)$", first.stdout,
                            re.MULTILINE)
        assert counted is not None, first.stdout
        assert int(counted.group(1)) == 4 + int(counted.group(2)) == len(server.chat_requests)
        again = run("-i", str(tmp_path / "s.db"), "index", str(SAMPLE_CORPUS), "--json", env=env)
        assert json.loads(again.stdout)["llm_calls"] == {} and again.stderr == ""  # nothing new: no call
    plain = run("-i", str(tmp_path / "p.db"), "index", str(SAMPLE_CORPUS))  # no LLM: nothing to say
    assert "LLM" not in plain.stdout + plain.stderr


def test_the_store_modules_keep_to_the_400_line_limit() -> None:
    """store/sqlite.py had grown to 489 lines; split by job (edges, vectors, bookkeeping, schema)."""
    import thinkgraph.store

    folder = Path(thinkgraph.store.__file__).parent
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in folder.glob("*.py")}
    assert max(sizes.values()) <= 400, sizes
    from thinkgraph.store.sqlite import SQLiteStore  # the public class, its parts mixed in

    assert {"edges_among", "put_vectors", "search_vectors", "mark_done"} <= set(dir(SQLiteStore))

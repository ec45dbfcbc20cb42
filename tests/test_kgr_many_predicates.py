"""kgr on a corpus-built index with hundreds of OpenIE predicates (each an edge type, and its inverse
another), in a process allowed few open files: the typed graph is a fixed number of files, the
graph definition in the prompts stays within ``graph_chars`` and names the most frequent edge types,
and the agent lists a node's other edge types with EdgeTypes[node id]."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.testing import ScriptedBackend

PEOPLE = 150  # two predicates each: 300 predicates, 600 edge types with their inverses
OPEN_FILES = 256  # the process's limit: below two memory-mapped files per edge type
HERE = Path(__file__).resolve().parent

# Runs in a child process under a low open-file limit; prints one JSON line per interaction.
CHILD = r"""
import json, re, resource, sys
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[2]), hard))
from support import HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.testing import ScriptedBackend
from thinkgraph.testing import ScriptedBackend

def task(request):
    return "\n".join(m["content"] for m in request.messages).split("Question: ")[-1]

def walker(request):
    seen = re.findall(r"Observation \d+: (.*)", task(request))
    if not seen:
        return "Thought: find him.\nAction: RetrieveNode[Person 7]"
    node = re.search(r"node is (\S+) \(", seen[0]).group(1)
    if len(seen) == 1:
        return f"Thought: which relations?\nAction: EdgeTypes[{node}]"
    if len(seen) == 2:
        travelled = re.search(r"(travelled \d+ times to) \(1\)", seen[1]).group(1)
        return f"Thought: follow it.\nAction: NeighborCheck[{node}, {travelled}]"
    return "Thought: done.\nAction: Finish[" + re.search(r"\((Place \d)\)\]", seen[2]).group(1) + "]"

def thought(request):
    tail = re.search(r"-> travelled \d+ times to -> (.+)", task(request))
    return f"Finish[{tail.group(1)}]" if tail else "Person 7 is named in the question."

def pick(pattern):
    return lambda request: "[" + re.search(pattern, task(request)).group(1) + "]"

def read(request):  # the one reader (the default): reads the passages behind the chain's nodes
    prompt = request.messages[-1]["content"]
    found = re.search(r"^\[(\d+)\] [^\n]*Person 7 travelled 7 times to (Place \d)", prompt, re.MULTILINE)
    return f"Answer: {found.group(2)} [{found.group(1)}]" if found else "Answer: Unknown"

rules = [("Answer the question using only the numbered passages below", read),
         ("alternating Thought, Action and Observation", walker), ("Think step by step", thought),
         ("List the entities in the text", "[Person 7]"), ("attributes of this entity", "[]"),
         ("relations of this entity", pick(r"Relations: .*?(travelled \d+ times to)[,\n]")),
         ("reached from the entity through the relation", pick(r"Neighbours: ([^,\n]+)")),
         ("Are the thoughts and the knowledge-graph facts", "[Yes]")]
for interaction in ("agent", "explore"):
    backend = ScriptedBackend(rules=rules)
    with ThinkGraph.open(sys.argv[1], settings=Settings(), embedder=HashEmbedder(), backend=backend) as tg:
        answer = tg.ask("Where did Person 7 travel?", "kgr", interaction=interaction)
    prompts = [r.messages[-1]["content"] for r in backend.requests]
    prompt = next(p for p in prompts if "Graph definition:" in p)
    definition = prompt.split("Graph definition:\n")[1].split("\n\nQuestion:")[0]
    steps = [s.outputs.get("observation") for s in answer.trace if s.action == "step"]
    print(json.dumps({"interaction": interaction, "status": str(answer.status), "text": answer.text,
                      "definition": definition, "offered": "(6) EdgeTypes[node id]" in prompt, "steps": steps,
                      "cited": [c.doc_id for c in answer.citations]}))
"""


def corpus(tmp_path: Path) -> tuple[Path, Path]:
    docs, openie = tmp_path / "corpus.jsonl", tmp_path / "openie.jsonl"
    with docs.open("w") as d, openie.open("w") as o:
        for i in range(PEOPLE):
            place, thing = f"Place {i % 7}", f"Thing {i}"
            text = f"Person {i} travelled {i} times to {place}. Person {i} built {thing}."
            d.write(json.dumps({"id": f"d{i}", "title": f"Person {i}", "text": text}) + "\n")
            triples = [[f"Person {i}", f"travelled {i} times to", place], [f"Person {i}", f"built ({i})", thing]]
            entities = [f"Person {i}", place, thing]
            o.write(json.dumps({"doc_id": f"d{i}", "entities": entities, "triples": triples}) + "\n")
    return docs, openie


def test_kgr_runs_on_a_corpus_index_with_many_predicates_under_a_low_open_file_limit(tmp_path: Path) -> None:
    docs, openie = corpus(tmp_path)
    with ThinkGraph(tmp_path / "many.db", settings=Settings(), embedder=HashEmbedder(), create=True) as tg:
        tg.index([docs], openie=openie)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "many.db"), str(OPEN_FILES)], cwd=HERE,
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    agent, explore = (json.loads(line) for line in run.stdout.splitlines()[-2:])
    graph = tmp_path / "many.db.kg"
    meta = json.loads((graph / "meta.json").read_text())
    assert len(meta["edge_types"]) > 2 * PEOPLE * 2 > OPEN_FILES  # many predicates, both directions
    assert sum(p.is_file() for p in graph.rglob("*")) <= 16  # not one or two files per edge type
    for run_of in (agent, explore):
        assert run_of["status"] == "answered", run_of
        definition = run_of["definition"]
        assert len(definition) <= 4000 + 100  # KGRConfig.graph_chars, and the note on other edge types
        assert "- edge type mentioned_in: " in definition and "; reversed: travelled 0 times to~)" in definition
        assert f"more edge types (of {len(meta['edge_types'])})" in definition  # (each inverse on its type's line)
    assert agent["offered"] and "EdgeTypes[node id] lists the edge types" in agent["definition"]
    assert not explore["offered"] and "relations of each entity are listed" in explore["definition"]
    edge_types = agent["steps"][1]
    assert edge_types.startswith("The edge types of ") and "travelled 7 times to (1)" in edge_types
    assert agent["text"] == explore["text"] == "Place 0"
    assert agent["cited"] == explore["cited"] == ["d7"]  # the one reader read Person 7's passage


async def test_a_graph_described_whole_keeps_the_papers_five_actions(kg) -> None:  # noqa: ANN001
    """A GRBench graph's definition fits ``graph_chars``: the prompt is Graph-CoT's, unchanged."""
    backend = ScriptedBackend(script=["Thought: known.\nAction: Finish[x]"])
    await kg(backend).aask("q?", "kgr", repair=False)
    prompt = backend.requests[0].messages[-1]["content"]
    assert "(5) Finish[answer]: give the final answer (use names or values, not node ids).\nWrite one step" in prompt
    assert "EdgeTypes" not in prompt and "- edge type paper: author/venue -> paper\n\nQuestion: q?" in prompt


def test_the_graph_definition_shrinks_to_a_small_context_window(tmp_path: Path) -> None:
    """A quarter of the model's window at 3 characters a token: 2,048 tokens leave 1,536 characters for the
    definition (beside the note on other edge types), where the default window shows the full 4,000."""
    docs, openie = corpus(tmp_path)
    with ThinkGraph(tmp_path / "many.db", settings=Settings(), embedder=HashEmbedder(), create=True) as tg:
        tg.index([docs], openie=openie)
    lengths = {}
    for window in (2048, 8192):
        for interaction in ("agent", "explore"):
            backend = ScriptedBackend(script=["Thought: known.\nAction: Finish[Place 0]"] * 3)
            settings = Settings.model_validate({"llm": {"context_window": window}})
            with ThinkGraph.open(tmp_path / "many.db", settings=settings, embedder=HashEmbedder(),
                                 backend=backend) as tg:
                tg.ask("Where did Person 7 travel?", "kgr", interaction=interaction, steps=1)
            prompt = next(m["content"] for r in backend.requests for m in r.messages
                          if "Graph definition:" in m["content"])
            definition = prompt.split("Graph definition:\n")[1].split("\n\nQuestion:")[0]
            lengths[window, interaction] = len(definition)
    for interaction in ("agent", "explore"):
        assert lengths[2048, interaction] <= 1536 + 200 < lengths[8192, interaction] <= 4000 + 200, lengths

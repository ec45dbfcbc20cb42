"""Seeded generator of the replies real models and broken servers send: empty, prose, preambles,
JSON followed by prose, truncated JSON, the wrong schema, huge or deeply nested values, runaway ReAct,
lone surrogates, control characters. Deterministic for a seed, so a failure can be replayed."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator

VALID_LIKE = [
    {"entities": [{"entity_name": "Ada Quinn", "entity_type": "Person", "entity_description": "A maker."}],
     "relationships": [{"source_entity": "Ada Quinn", "target_entity": "Velden", "relation": "born in",
                        "relationship_description": "Ada was born in Velden."}]},
    {"pass": True, "reason": "the evidence states it"},
    {"pass": "maybe"},
    {"sufficient": 1, "reason": "enough"},
    {"keep": [1, 2, 3]},
    {"answerable": True, "answer": "Velden", "facts": [1]},
    {"questions": ["Who?", "Where?"]},
    {"propositions": [{"text": "Ada Quinn was born in Velden.", "entities": ["Ada Quinn", "Velden"]}]},
    {"entities": ["Ada Quinn", "Velden"]},
    {"correct": False, "reason": "no"},
]


def _valid_like(rng: random.Random) -> str:
    return json.dumps(rng.choice(VALID_LIKE))


def _truncated(rng: random.Random) -> str:
    text = _valid_like(rng)
    return text[: rng.randrange(1, len(text))]


def _wrong_schema(rng: random.Random) -> str:
    keys = ["foo", "data", "result", "answer", "items", "entities_list", "ok"]
    value = rng.choice([1, "x", None, [1, 2], {"a": 1}, True, -1e308])
    return json.dumps({rng.choice(keys): value for _ in range(rng.randrange(1, 4))})


def _huge_list(rng: random.Random) -> str:
    n = rng.choice([500, 5_000, 20_000])
    return json.dumps({"entities": [{"entity_name": f"E{i}", "entity_type": "T"} for i in range(n)],
                       "relationships": [], "propositions": [{"text": f"p{i}"} for i in range(n // 10)]})


def _huge_text(rng: random.Random) -> str:
    return rng.choice(["x", "Thought: ", "{", "[", "é", " "]) * rng.choice([10_000, 200_000, 900_000])


def _deep(rng: random.Random) -> str:
    n = rng.choice([100, 1_000, 50_000])
    return "[" * n + "]" * n if rng.random() < 0.5 else '{"a":' * n + "1" + "}" * n


def _prose(rng: random.Random) -> str:
    return rng.choice([
        "I'm sorry, but I can't help with that.",
        "Sure! Here is the answer you asked for.",
        "Yes", "No.", "[Yes]", "None", "Unknown", "0.7", "1e309", "nan", "-3", "The best choices are: 9, 0, -1",
        "[a, b, c]", "[unbalanced, list", "Finish[", "Finish[" + "x" * 5000 + "]",
        "So the answer is:", "Next question: None",
        "A ^ B ^ C", "(A, rel, B)\n(C, rel2, D)\n(broken",
    ])


def _preamble_json_prose(rng: random.Random) -> str:
    return f"Here you go:\n```json\n{_valid_like(rng)}\n```\nLet me know if you need anything else! {{oops}}"


def _react_runaway(rng: random.Random) -> str:
    steps = []
    for i in range(1, rng.randrange(2, 60)):
        steps.append(f"Thought {i}: keep going.\nAction {i}: {rng.choice(['RetrieveNode[Ada]', 'Finish[Velden]', 'NodeFeature[x, name]', 'NeighborCheck[n1, author]', 'Bogus[1]'])}\n"  # noqa: E501
                     f"Observation {i}: invented.")
    return "\n".join(steps)


def _control(rng: random.Random) -> str:
    return rng.choice(["\x00\x01\x02", "a\ud800b", "\u202e\u200b", "\r\n\r\n", "\t" * 100, "\ufeff{\"pass\": true}",
                       '{"pass": true, "reason": "\ud83d"}', "\\u0000"])


def _empty(rng: random.Random) -> str:
    return rng.choice(["", " ", "\n", "<think>reasoning that never ends"])


KINDS: dict[str, Callable[[random.Random], str]] = {
    "empty": _empty, "prose": _prose, "valid_like": _valid_like, "preamble_json_prose": _preamble_json_prose,
    "truncated": _truncated, "wrong_schema": _wrong_schema, "huge_list": _huge_list, "huge_text": _huge_text,
    "deep": _deep, "react_runaway": _react_runaway, "control": _control,
}


def messy_replies(seed: int, count: int) -> Iterator[tuple[str, str]]:
    """``count`` (kind, reply) pairs; every kind appears before any repeats."""
    rng = random.Random(seed)
    names = list(KINDS)
    for i in range(count):
        if i % len(names) == 0:
            rng.shuffle(names)
        kind = names[i % len(names)]
        yield kind, KINDS[kind](rng)

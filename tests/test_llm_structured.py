"""Lenient JSON extraction from model replies."""

from __future__ import annotations

import pytest

from thinkgraph.llm.structured import JSONExtractionError, extract_json, json_values, strip_reasoning


@pytest.mark.parametrize("reply, expected", [
    ('{"a": 1}', {"a": 1}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('```\n[1, 2]\n```', [1, 2]),
    ('<think>I should say {"wrong": true}</think>\n{"a": 2}', {"a": 2}),
    ('Sure! Here it is: {"a": {"b": [1, 2,]},} Hope it helps.', {"a": {"b": [1, 2]}}),
    ('{"text": "braces } inside { strings"}', {"text": "braces } inside { strings"}),
    ('\u201ca\u201d', None),
    ('Result: {\u201ca\u201d: 3}', {"a": 3}),
])
def test_extract_json_variants(reply: str, expected: object) -> None:
    if expected is None:
        with pytest.raises(JSONExtractionError):
            extract_json(reply)
    else:
        assert extract_json(reply) == expected


@pytest.mark.parametrize("reply", ["", "   ", "no json here", "<think>only thinking", '{"a": 1'])
def test_extract_json_failures_say_why(reply: str) -> None:
    with pytest.raises(JSONExtractionError):
        extract_json(reply)


def test_strip_reasoning_handles_unclosed_block() -> None:
    assert strip_reasoning("<think>a</think> answer") == "answer"
    assert strip_reasoning("<THINK>never closed") == ""


def test_json_values_offers_every_value_in_order() -> None:
    reply = 'Facts [1] and [3] are relevant: {"keep": [1, 3]} (the others are not)'
    assert list(json_values(reply))[:3] == [[1], [3], {"keep": [1, 3]}]
    assert list(json_values('```json\n{"a": 1}\n``` and {"b": 2}')) == [{"a": 1}, {"b": 2}]

"""The event stream of a method run (service.streaming.run_events): every event the run records
reaches the consumer, in order, even when the run ends in the same loop turn as its last events."""

from __future__ import annotations

import asyncio

import pytest

from thinkgraph.models import Answer, TraceStep
from thinkgraph.service.streaming import Event, run_events
from thinkgraph.tracing import Trace


async def _collect(run, *, consumer_pause: bool, heartbeat: float = 15.0) -> list[Event]:  # noqa: ANN001
    events = []
    async for event in run_events(run, {"q": 1}, heartbeat=heartbeat):
        events.append(event)
        if consumer_pause:  # a consumer that awaits its own work (the HTTP send) between events
            await asyncio.sleep(0)
    return events


async def _steps_then_return(n_awaits: int) -> Answer:
    trace = Trace()  # the question's trace: a step is recorded (and heard) when appended
    trace.append(TraceStep(agent="retriever", action="first"))
    for _ in range(n_awaits):
        await asyncio.sleep(0)
    trace += [TraceStep(agent="responder", action=f"last{i}") for i in range(3)]  # no await before returning
    return Answer(question="q", method="m", text="t", status="answered", trace=trace)


@pytest.mark.parametrize("n_awaits", [0, 1, 2, 3])
@pytest.mark.parametrize("consumer_pause", [False, True])
def test_every_step_arrives_before_the_answer_whatever_the_interleaving(n_awaits: int, consumer_pause: bool) -> None:
    events = asyncio.run(_collect(lambda: _steps_then_return(n_awaits), consumer_pause=consumer_pause))
    assert [e.name for e in events] == ["started", "trace", "trace", "trace", "trace", "answer"]
    assert [e.data["action"] for e in events if e.name == "trace"] == ["first", "last0", "last1", "last2"]
    assert events[-1].data["status"] == "answered"


def test_a_quiet_run_sends_heartbeats_and_loses_no_event() -> None:
    async def slow() -> Answer:
        await asyncio.sleep(0.05)
        trace = Trace([TraceStep(agent="responder", action="unrecorded")])  # built with it: never recorded
        trace.append(TraceStep(agent="responder", action="late"))
        return Answer(question="q", method="m", text="t", status="answered", trace=trace)

    names = [e.name for e in asyncio.run(_collect(slow, consumer_pause=False, heartbeat=0.01))]
    assert names[0] == "started" and names[-2:] == ["trace", "answer"] and "heartbeat" in names


def test_a_failing_run_ends_with_an_error_event_after_its_steps() -> None:
    from thinkgraph.errors import InputError

    async def failing() -> Answer:
        Trace().append(TraceStep(agent="retriever", action="first"))
        raise InputError("the question is empty")

    events = asyncio.run(_collect(failing, consumer_pause=True))
    assert [e.name for e in events] == ["started", "trace", "error"]
    assert events[-1].data == {"message": "the question is empty", "type": "InputError"}


def test_building_a_step_records_nothing_and_appending_records_it_once() -> None:
    from thinkgraph.tracing import listen_steps

    heard: list[str] = []
    with listen_steps(lambda step: heard.append(step.action)):
        step = TraceStep(agent="retriever", action="built")
        trace = Trace()
        assert heard == []
        trace.append(step)
        trace.extend([TraceStep(agent="a", action="x"), TraceStep(agent="a", action="y")])
        trace.insert(0, TraceStep(agent="a", action="z"))
    trace.append(TraceStep(agent="a", action="outside"))  # no listener any more
    assert heard == ["built", "x", "y", "z"] and [s.action for s in trace] == ["z", "built", "x", "y", "outside"]


def test_a_secret_split_across_tokens_never_goes_out_in_pieces() -> None:
    from thinkgraph.service.security import SecretMask
    from thinkgraph.service.streaming import RedactedTokens

    mask = SecretMask(["sk-live-12345678"])
    assert mask.unsafe_tail("the key is sk-li") == len("sk-li") and mask.unsafe_tail("plain words.") == 0
    tokens = RedactedTokens(mask, mask.unsafe_tail)
    sent = []
    for piece in ["The key ", "is sk-", "live-1234", "5678 and", " more."]:
        sent += [text for _, text in tokens.feed("answer.from_passages", piece)]
    sent += [text for _, text in tokens.feed("other.step", "x")]  # another step flushes the first
    joined = "".join(sent[:-1])
    assert joined == "The key is [redacted] and more." and not any("sk-" in s or "1234" in s for s in sent)
    assert sent[0] == "The key "  # text that no secret starts goes out at once

"""An answer reply cut at the completion cap before its answer line: what it said before it began to
repeat itself, and the repair that asks for the answer line alone (``replies.ask_answer``).

A small model reading passages it cannot connect sometimes loops in its reasoning line ("The 2004 FIFA
U-19 Women's World Championship is mentioned in the passage about the 2004 FIFA U-19 Women's World
Championship. The 2004 FIFA ...") until the cap stops it (Qwen2.5-1.5B on 2 of kgr's 20 HotpotQA dev
answers, 2026-11-29). Such a reply states no answer, so it is asked once more, shown its own reply up
to the first repeated sentence (the loop left out, so that it is not continued) and told to give the
answer line now."""

from __future__ import annotations

import re

# A sentence: up to its end mark, or a line. (An abbreviation's full stop cuts early; a repeat is still
# a repeat of the same pieces.)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")

CUT_OFF_REPAIR = ("Your reply was cut off at the length limit before it gave the answer. Do not write the "
                  "reasoning again: reply with one line that starts with \"Answer:\" and gives the answer in a "
                  "few words, then the numbers of the passages that state it in square brackets (or \"Answer: "
                  "Unknown\" if they do not).")


def before_repetition(reply: str) -> str:
    """``reply`` up to the first sentence that repeats an earlier one (case and spacing aside); all of
    it when none does."""
    seen: set[str] = set()
    for match in _SENTENCE.finditer(reply):
        key = " ".join(match.group().casefold().split()).rstrip(".!?")
        if not key:
            continue
        if key in seen:
            return reply[:match.start()].rstrip()
        seen.add(key)
    return reply.strip()

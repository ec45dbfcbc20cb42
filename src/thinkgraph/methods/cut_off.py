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

# A sentence: up to an end mark followed by a space (so "1.5" and "U.S." inside one are not ends), or a
# line. A repeat counts from MIN_REPEAT_WORDS words on, so that a short piece ("The U.S.", "e.g.") met twice
# is not taken for a loop; a leading label ("Reasoning:") is not part of what repeats.
_SENTENCE = re.compile(r".+?(?:[.!?]+(?=\s)|$)", re.MULTILINE)
_LABEL = re.compile(r"^\s*[A-Za-z][A-Za-z ]{0,20}:\s*")
MIN_REPEAT_WORDS = 4

CUT_OFF_REPAIR = ("Your reply was cut off at the length limit before it gave the answer. Do not write the "
                  "reasoning again: reply with one line that starts with \"Answer:\" and gives the answer in a "
                  "few words, with its citations in square brackets where the format above asks for them (or "
                  "\"Answer: Unknown\" if nothing above states it).")


def before_repetition(reply: str) -> str:
    """``reply`` up to the first sentence of at least MIN_REPEAT_WORDS words that repeats an earlier one
    (case, spacing and a leading label aside); all of it when none does."""
    seen: set[str] = set()
    for match in _SENTENCE.finditer(reply):
        words = _LABEL.sub("", match.group()).casefold().split()
        key = " ".join(words).rstrip(".!?")
        if len(words) < MIN_REPEAT_WORDS:
            continue
        if key in seen:
            return reply[:match.start()].rstrip()
        seen.add(key)
    return reply.strip()

"""Whether a model's reply repeats its prompt's instructions: a weak model that echoes the prompt has
not answered, summarised or rewritten anything. Every step that reads free text from a model (answers,
a2rag's rewrites, community and document summaries) asks this one question."""

from __future__ import annotations

import re

_WORDS = re.compile(r"\w+")


def echoes_instructions(reply: str, prompt_template: str, window: int = 8) -> bool:
    """Whether the reply repeats ``window`` consecutive words of the prompt's own instructions (the
    template before its first placeholder): a weak model that echoes the prompt has not answered,
    and no answer needs eight words of our instructions in a row."""
    instructions = _WORDS.findall(prompt_template.split("{", 1)[0].casefold())
    said = " " + " ".join(_WORDS.findall(reply.casefold())) + " "
    return any(f" {' '.join(instructions[i:i + window])} " in said
               for i in range(max(len(instructions) - window + 1, 0)))

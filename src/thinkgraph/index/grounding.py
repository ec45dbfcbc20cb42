"""An LLM extraction keeps only what the passage names. A weak model asked for a passage's graph may
return the prompt's own example (Gemma 3 270M filled a whole index with "Marie Curie was born in
Warsaw" and reported no failure) or names from nowhere; a name is kept when the passage (or its
title) contains it, or one of its words, so that "Curie" in the text grounds "Marie Curie". A reply
that names something yet nothing the passage contains is a failed extraction, counted as one."""

from __future__ import annotations

import re
from dataclasses import replace

from thinkgraph.errors import StructuredOutputError
from thinkgraph.index.records import Extraction

_WORD = re.compile(r"\w+")
# Words too common to ground a name on their own (ours): "the", "of" and the like appear in any passage.
_COMMON = frozenset({"a", "an", "and", "at", "by", "for", "from", "in", "into", "is", "of", "on", "or", "the",
                     "to", "was", "were", "with"})


class TextGrounding:
    """The words of one passage, to check the names an extraction of it gives."""

    def __init__(self, text: str) -> None:
        self.folded = " ".join(text.casefold().split())
        self.words = frozenset(_WORD.findall(self.folded))

    def holds(self, name: str) -> bool:
        folded = " ".join(name.casefold().split())
        if not folded:
            return False
        if folded in self.folded:
            return True
        return any(w in self.words for w in _WORD.findall(folded) if w not in _COMMON)


def grounded(extraction: Extraction, text: str) -> Extraction:
    """The extraction without the entities, triples and propositions' entities that the text does not
    name (a triple goes with either end). Raises StructuredOutputError when it named something and
    nothing is left."""
    check = TextGrounding(text)
    entities = [e for e in extraction.entities if check.holds(e.name)]
    triples = [t for t in extraction.triples if check.holds(t.subject) and check.holds(t.object)]
    # a proposition whose entities are all foreign to the passage was not read from it
    propositions = [replace(p, entities=kept) for p in extraction.propositions
                    if (kept := [e for e in p.entities if check.holds(e)]) or not p.entities]
    named = bool(extraction.entities or extraction.triples)
    if named and not entities and not triples:
        shown = ", ".join(sorted({e.name for e in extraction.entities} | {t.subject for t in extraction.triples})[:3])
        raise StructuredOutputError(f"the reply names nothing the passage contains ({shown}): "
                                    "an echo of the prompt's example or an invented graph")
    return Extraction(entities=entities, triples=triples, cooccurrences=extraction.cooccurrences,
                      propositions=propositions)

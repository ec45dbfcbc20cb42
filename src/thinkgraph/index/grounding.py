"""An LLM extraction keeps only what the passage names. A weak model asked for a passage's graph may
return the prompt's own example (Gemma 3 270M filled a whole index with "Marie Curie was born in
Warsaw" and reported no failure) or names from nowhere; a name is kept when one of its words (not a
stopword) is a word of the passage or its title, so that "Curie" in the text grounds "Marie Curie"
while "Art" is not grounded by "started". A reply that names something yet nothing the passage
contains is a failed extraction, counted as one."""

from __future__ import annotations

from dataclasses import replace

from thinkgraph.citations import content_words
from thinkgraph.errors import StructuredOutputError
from thinkgraph.index.records import Extraction


def grounded(extraction: Extraction, text: str) -> Extraction:
    """The extraction without the entities, triples and propositions' entities that the text does not
    name (a triple goes with either end). Raises StructuredOutputError when it named something and
    nothing is left."""
    words = content_words(text)

    def holds(name: str) -> bool:
        return not content_words(name).isdisjoint(words)

    entities = [e for e in extraction.entities if holds(e.name)]
    triples = [t for t in extraction.triples if holds(t.subject) and holds(t.object)]
    # a proposition whose entities are all foreign to the passage was not read from it
    propositions = [replace(p, entities=kept) for p in extraction.propositions
                    if (kept := [e for e in p.entities if holds(e)]) or not p.entities]
    if (extraction.entities or extraction.triples) and not entities and not triples:
        shown = ", ".join(sorted({e.name for e in extraction.entities} | {t.subject for t in extraction.triples})[:3])
        raise StructuredOutputError(f"the reply names nothing the passage contains ({shown}): "
                                    "an echo of the prompt's example or an invented graph")
    return Extraction(entities=entities, triples=triples, cooccurrences=extraction.cooccurrences,
                      propositions=propositions)

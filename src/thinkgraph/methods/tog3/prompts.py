"""ToG-3 prompts in our words, following App. J (Figs. 13-16)."""

KEYWORDS = """Give up to {max_keywords} keywords for searching a knowledge base about the query below:
synonyms, related terms and variant spellings (capitalisation, plural, common phrasings).
Reply on one line, keywords separated by '^', like: keyword one^keyword two^keyword three

Query: {query}"""

# The Responser, Reflector and evolution steps of one round share the prompt layout of methods/layout.py
# (preamble, the subgraph's context, the step's instruction, the query last), so a local server reads the
# round's context once.
RESPOND = """Answer the query using only the context above, not prior knowledge, and add nothing the
context does not state. If the context does not determine the answer, reply exactly "Unknown".
{reasoning}Reply with the answer only."""

# The history H_k as the Responser and the Reflector see it (sub-question -> its answer).
REASONING = """Reasoning so far (sub-question -> answer):
{steps}
"""

# Reason first, verdict last ("yes"/"no", constrained; its P(yes) is held to reflector_threshold).
SUFFICIENCY = """Judge whether the context above is sufficient to answer the query, given the answer
that was drawn from it: {answer}
First write in one sentence what the context states that bears on the query and what it lacks, then
the verdict: "yes" if the context is sufficient, "no" if it is not.
Reply with JSON only: {{"reason": "one sentence", "verdict": "yes" or "no"}}"""

EVOLVE_QUERY = """The query at the end is the original question. Write the next question that can be
answered from a knowledge source like the context above and moves towards answering the original
question: it may be the original question itself or one of its parts, but never unrelated to it. If no
further information can be extracted, reply exactly None.

Examples
Question: In which city was the founder of the company that makes the Lumo desk lamp born?
Reasoning so far: None
Next question: Which company makes the Lumo desk lamp?

Question: In which city was the founder of the company that makes the Lumo desk lamp born?
Reasoning so far:
- Which company makes the Lumo desk lamp? -> Brightwell Lighting.
Next question: Who founded Brightwell Lighting?

Reasoning so far:{reasoning}
Reply with "Next question: <the question>" only."""

# Asked once when the next question asks the original one again (ToG3Config.restated_query_again): the
# same question retrieves the same subgraph, so the round would find nothing new.
EVOLVE_AGAIN = """Your next question asks the original question again, and searching with it would find the
same context as above. Write a question about one part of the original question instead: the entity or fact
it depends on that the context above does not state yet. If no such part is left, reply exactly None.
Reply with "Next question: <the question>" only."""

REFINE = """Below is a sub-graph of a knowledge graph as triples "subject -> relation -> object", and a query.
Refine it: remove triples unrelated to the query or noisy, write entity names consistently, and add
a missing link only when the given triples strongly support it. Reply with the refined triples in the
same format, one per line. If nothing needs changing, repeat them. If every triple is irrelevant, reply None.

Query: {query}
Sub-graph:
{triples}"""

FINAL = """Answer the question from the reasoning trajectory and the evidence gathered along it, using
only them and not prior knowledge. Be concise: give the answer, not a description of the context.

Question: {query}

Trajectory (question or sub-question -> answer):
{trajectory}

Evidence:
{context}

{answer_format}"""

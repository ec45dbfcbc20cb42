"""ToG-3 prompts in our words, following App. J (Figs. 13-16)."""

KEYWORDS = """Give up to {max_keywords} keywords for searching a knowledge base about the query below:
synonyms, related terms and variant spellings (capitalisation, plural, common phrasings).
Reply on one line, keywords separated by '^', like: keyword one^keyword two^keyword three

Query: {query}"""

RESPOND = """Answer the query using only the context below, not prior knowledge, and add nothing the
context does not state. If the context does not determine the answer, reply exactly "Unknown".

Context:
{context}
{reasoning}
Query: {query}
Answer:"""

# The history H_k as the Responser and the Reflector see it (sub-question -> its answer).
REASONING = """
Reasoning so far (sub-question -> answer):
{steps}
"""

SUFFICIENCY = """Judge whether the context below is sufficient to answer the query, given the answer
that was drawn from it.
Reply with JSON only: {{"sufficient": true or false, "reason": "one sentence"}}

Query: {query}
Answer drawn from the context: {answer}

Context:
{context}"""

EVOLVE_QUERY = """The original question is: {query}
Context from a knowledge source and the reasoning so far are given below. Write the next question
that can be answered from the knowledge source and moves towards answering the original question:
it may be the original question itself or one of its parts, but never unrelated to it. If no further
information can be extracted, reply exactly None.

Examples
Question: In which city was the founder of the company that makes the Lumo desk lamp born?
Context: Product pages naming the makers of desk lamps
Reasoning so far: None
Next question: Which company makes the Lumo desk lamp?

Question: In which city was the founder of the company that makes the Lumo desk lamp born?
Context: Company histories with their founders
Reasoning so far:
- Which company makes the Lumo desk lamp? -> Brightwell Lighting.
Next question: Who founded Brightwell Lighting?

Question: {query}
Context: {context}
Reasoning so far:{reasoning}
Next question:"""

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

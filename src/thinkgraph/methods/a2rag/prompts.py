"""A2RAG prompts, one constant each, in our words, following the roles of §III."""

QUERY_SEEDS = """Find what the question below talks about.
List the entities it names (people, places, organisations, works, dates, things) exactly as written,
and the relations it asks about as short verb phrases.
Reply with JSON only: {{"entities": ["..."], "relations": ["..."]}}

Question: {question}"""

SUFFICIENCY = """Decide whether the evidence below is enough to answer the question.
Reply with JSON only: {{"sufficient": true or false, "missing": "what is still missing, if anything"}}

Question: {question}

Evidence:
{evidence}"""

ANSWER = """Answer the question using only the evidence below (facts from a knowledge graph and
numbered source passages).

Question: {question}

Facts:
{triples}

Passages:
{passages}

{answer_format}"""

CHECK_RELEVANCE = """Is the evidence below about what the question asks? Judge the evidence only,
not any answer.
Reply with JSON only: {{"pass": true or false, "reason": "one sentence"}}

Question: {question}

Evidence:
{evidence}"""

CHECK_GROUNDING = """Is every claim in the answer supported by the evidence below? An answer that adds
facts the evidence does not state is not grounded.
Reply with JSON only: {{"pass": true or false, "reason": "one sentence"}}

Answer: {answer}

Evidence:
{evidence}"""

CHECK_ADEQUACY = """Does the answer fully resolve the question (the right kind of answer, every part
and constraint of the question addressed)? "Unknown" does not resolve it.
Reply with JSON only: {{"pass": true or false, "reason": "one sentence"}}

Question: {question}
Answer: {answer}"""

TRIPLE_CHECK = """Check the answer below against the question and the evidence on three points, in order:
1. relevant: is the evidence about what the question asks? Judge the evidence only, not the answer.
2. grounded: is every claim of the answer stated in the evidence? An answer that adds facts the
   evidence does not state is not grounded.
3. resolves: does the answer fully resolve the question (the right kind of answer, every part and
   constraint of the question addressed)? "Unknown" does not resolve it.
Reply with JSON only: {{"relevant": true or false, "grounded": true or false, "resolves": true or false,
"reason": "one sentence on the first point that fails, or ok"}}

Question: {question}
Answer: {answer}

Evidence:
{evidence}"""

# Eq. 6: each rewrite sees the question, the failed answer, the evidence E it was checked against and
# the verifier's reason, and is conditioned on the failure type.
REWRITE = {
    "rel": """The evidence found for this question was off-topic. Rewrite the question so that it
names its entities and relations more precisely (full names, the exact relation asked about), keeping
its meaning; use the evidence below to see what the search wrongly matched.
Reply with the rewritten question only.

Question: {question}
Answer drawn from it: {answer}
Why the evidence failed: {reason}

Evidence that was found:
{evidence}""",
    "grd": """The answer to this question made claims the evidence did not support. Rewrite the
question so that it asks for exactly the fact that must be found in the sources, naming the entity and
relation that must be stated there. Reply with the rewritten question only.

Question: {question}
Unsupported answer: {answer}
Why it failed: {reason}

Evidence the answer was checked against:
{evidence}""",
    "ans": """The answer did not fully resolve this question. Rewrite the question so that it makes
explicit every constraint and part that the answer must address (intermediate entities, dates, the
kind of answer wanted); the evidence below shows what is already known.
Reply with the rewritten question only.

Question: {question}
Incomplete answer: {answer}
Why it failed: {reason}

Evidence found so far:
{evidence}""",
}

PROPOSE_TRIPLES = """From the passages below, list up to {max_triples} facts that support the verified
answer, as subject-relation-object triples, each with the number of the passage that states it.
Reply with JSON only: {{"triples": [{{"subject": "...", "relation": "...", "object": "...", "passage": 1}}]}}

Question: {question}
Answer: {answer}

Passages:
{passages}"""

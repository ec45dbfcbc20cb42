"""A2RAG prompts, one constant each, in our words, following the roles of §III."""

QUERY_SEEDS = """Find what the question below talks about.
List the entities it names (people, places, organisations, works, dates, things) exactly as written,
and the relations it asks about as short verb phrases.
Reply with JSON only: {{"entities": ["..."], "relations": ["..."]}}

Question: {question}"""

# The judgements write their reason first and the verdict last ("yes"/"no", constrained by the server's
# structured output; where it returns log-probabilities the verdict is P(yes) against a threshold).
# Each follows methods/layout.py: preamble, the evidence, the instruction, the question last.
SUFFICIENCY = """Decide whether the evidence above is enough to answer the question.
First write in one sentence what the evidence states that bears on the question and what is still
missing, then the verdict: "yes" if the evidence is enough, "no" if it is not.
Reply with JSON only: {"missing": "one sentence", "verdict": "yes" or "no"}"""

ANSWER = """Answer the question using only the evidence below (facts from a knowledge graph and
numbered source passages).

Question: {question}

Facts:
{triples}

Passages:
{passages}

{answer_format}"""

CHECK_RELEVANCE = """Is the evidence above about what the question asks? Judge the evidence only,
not any answer. First write your reason in one sentence, then the verdict, "yes" or "no".
Reply with JSON only: {"reason": "one sentence", "verdict": "yes" or "no"}"""

CHECK_GROUNDING = """Is every claim in this answer supported by the evidence above: {answer}
An answer that adds facts the evidence does not state is not grounded. First write your reason in one
sentence, then the verdict, "yes" or "no".
Reply with JSON only: {{"reason": "one sentence", "verdict": "yes" or "no"}}"""

CHECK_ADEQUACY = """Does this answer fully resolve the question (the right kind of answer, every part and
constraint of the question addressed): {answer}
"Unknown" does not resolve it. First write your reason in one sentence, then the verdict, "yes" or "no".
Reply with JSON only: {{"reason": "one sentence", "verdict": "yes" or "no"}}"""

TRIPLE_CHECK = """Check this answer to the question against the evidence above: {answer}
Judge three points, in order:
1. relevant: is the evidence about what the question asks? Judge the evidence only, not the answer.
2. grounded: is every claim of the answer stated in the evidence? An answer that adds facts the
   evidence does not state is not grounded.
3. resolves: does the answer fully resolve the question (the right kind of answer, every part and
   constraint of the question addressed)? "Unknown" does not resolve it.
First write your reason in one sentence, then each verdict, "yes" or "no".
Reply with JSON only: {{"reason": "one sentence", "relevant": "yes" or "no", "grounded": "yes" or "no",
"resolves": "yes" or "no"}}"""

# A rewrite that is no new question (the question again, our instructions repeated or asked about) is asked
# again once, with this told to it; SAME_QUESTION words it as it was first written.
REWRITE_AGAIN = ("Your rewrite {why}, so searching with it would find {finds}. Write a different question: name "
                 "the entity and the relation that must be found, more precisely. Reply with the rewritten "
                 "question only.")
SAME_QUESTION = ("is the question itself, word for word", "the same evidence again")
ECHOED_INSTRUCTIONS = ("repeats these instructions, not a question", "nothing the question needs")
ASKS_ABOUT_INSTRUCTIONS = ("asks about these instructions, not about the question", "nothing the question needs")

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

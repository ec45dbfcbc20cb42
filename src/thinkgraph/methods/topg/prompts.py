"""ToPG prompts, one constant each, our wording following the roles in ToPG §2 and App. B."""

SELECT = """Below is a question and a numbered list of facts. Keep only the facts that help answer the
question, directly or as a step towards the answer; drop the rest.{most}
Reply with JSON only: {{"keep": [numbers of the facts to keep]}}

Question: {question}

Facts:
{facts}"""

# Select's bound (select_max): a small model asked to keep what helps kept all 20 suggestions on most calls.
SELECT_MOST = """ Keep at most {n}: the ones that help most, best first."""

# Select with its reason first (select_form="reasoned"), after the facts, the question last (layout.py).
SELECT_REASONED = """Keep only the facts above that help answer the question: a fact about an entity the
question names, or one that leads from such a fact towards what the question finally asks for.
First write in one sentence what the question needs and which facts give it, then the numbers of the
facts to keep{most}.
Reply with JSON only: {{"reason": "one sentence", "keep": [numbers]}}"""

SELECT_REASONED_MOST = """, at most {n}, best first"""

# The question is restated last and the answer's kind spelled out: with only "give the answer", Qwen2.5-
# 1.5B answered "Christopher Nolan and Sathish Kalathil" to "Are ... both film directors?" and named an
# entity on the way of a two-hop question (HotpotQA dev, 3 of 4 wrong where `ppr` was right).
EVAL = """Can the question be answered from the facts below alone? The answer may need two or more facts
combined: find the first fact, use it to find the next, and answer what the question finally asks for.
If it can be answered, give the answer in a few words, of the kind the question asks for ("yes" or "no"
for a yes/no question, a name, a date, a number), and the numbers of the facts it rests on.
Reply with JSON only: {{"answerable": true or false, "answer": "...", "facts": [numbers]}}

Facts:
{facts}

Question: {question}"""

# Eval as a stop judgement (reader="shared"): the reason first, the verdict last; the one reader answers.
EVAL_STOP = """Can the question be answered from the facts above? The answer may need two or more facts
combined: the first fact leads to the next, and the last gives what the question finally asks for.
First write in one sentence which facts give the answer, or what is still missing, then the verdict:
"yes" if the facts answer the question, "no" if they do not.
Reply with JSON only: {"reason": "one sentence", "verdict": "yes" or "no"}"""

NEXT_QUESTIONS = """The facts below are not yet enough to answer the question. Write up to {max_questions}
short, targeted sub-questions whose answers would supply what is missing (for example the next hop
of a multi-hop question, naming the entity found so far).
Reply with JSON only: {{"questions": ["..."]}}

Question: {question}

Facts so far:
{facts}"""

NAIVE_ANSWER = """Answer the question using only the numbered facts below.

Question: {question}

Facts:
{facts}

{answer_format}"""

DECOMPOSE = """Break the question below into {m} different, complementary sub-questions that together
cover the aspects and perspectives a thorough answer needs.
Reply with JSON only: {{"questions": ["..."]}}

Question: {question}"""

INTERMEDIATE = """Using only the material below (facts, entities and passages from one part of a
knowledge graph), write the points it offers towards answering the question, and rate how useful they
are from 0 (useless) to 100 (essential).
Reply with JSON only: {{"answer": "the points, as short paragraphs", "score": 0-100}}

Question: {question}

Material:
{material}"""

REPORT = """Write a well-organised, comprehensive answer to the question from the partial analyses
below, which come from different parts of a knowledge graph (the most relevant are first and last).
Use only their content.

Question: {question}

Partial analyses:
{analyses}

Answer:"""

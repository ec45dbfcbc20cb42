"""Prompts of `kgr`, in our own words, following the structure of the paper's App. F: instructions,
examples (methods/kgr/examples.py, our own), then the task."""

# The agent's step, as a conversation (ours; the paper writes the steps so far into one prompt): this
# message, then each step as the model's turn ("Thought i / Action i") and its observation as the next user
# turn, which names the step to write and the question again, last. In one prompt after its steps, told
# "write one Thought and one Action", Qwen2.5-1.5B-Instruct rewrote step 1 (the same RetrieveNode) at
# every step and never reached Finish (issue #39); given its steps as its own turns, it went on from them.
# The layout keeps the longest prefix between the calls of one question for a server's prompt cache
# (issue #48): this message is the same at every step of a chain (the instructions, the examples and the
# graph definition first, then the question); the steps are turns; what varies, the closing with its
# hint and a ToT candidate's variant, comes last, after the newest observation.
AGENT_STEP = """Answer the question by alternating Thought, Action and Observation steps over a knowledge graph.
Each step is one Thought (what the observations so far show and what is still needed) and one Action on the
graph; the graph replies with an Observation. The actions:
(1) RetrieveNode[text]: find the node that best matches the text; returns its node id.
(2) NodeFeature[node id, feature name]: the value of one feature of a node.
(3) NeighborCheck[node id, edge type]: the neighbours of a node along one edge type.
(4) NodeDegree[node id, edge type]: how many neighbours a node has along one edge type.
(5) Finish[answer]: give the final answer (use names or values, not node ids).
{extra_actions}Write one step at a time, in this format:
Thought <n>: <one sentence>
Action <n>: <one action>

{examples}Graph definition:
{graph}

Question: {question}
Now write step 1 of at most {limit} for the question "{question}".{variant}"""

AGENT_TURN = "Thought {n}: {thought}\nAction {n}: {action}"  # a step as the model's turn
AGENT_OBSERVATION = "Observation {n}: {observation}"
AGENT_CLOSING = """

Now write step {n} of at most {limit} for the question "{question}": a Thought about what the \
observations found, then one Action that none of the steps above took.{hint}{variant}"""
FINISH_HINT = (" When an observation gives what the question finally asks for (not a fact on the way to it), "
               "write Finish[answer].")
LAST_STEPS_HINT = (" Only {left} steps are left, this one included: Finish[answer] with what the question finally "
                   "asks for as soon as you can.")

# Ours (the bounded repair of a reply that is not an action): asked once, in the same conversation.
ACTION_REPAIR = """Your reply has no action. Reply again with one step, a Thought line and an Action line, where the \
action is one of RetrieveNode[text], NodeFeature[node id, feature name], NeighborCheck[node id, edge type], \
NodeDegree[node id, edge type]{extra}, or Finish[answer] when you know the answer."""

# Ours (KGRConfig.repair): a step that repeats an earlier one is asked again once, in the same conversation.
# Qwen2.5-1.5B-Instruct, shown the repeat only as an observation, wrote the same step to the step limit; asked
# again right after it, with the actions that could follow, it took one of them.
REPEAT_REPAIR = "Step {n} repeats step {step}: {action} was already done. Write step {n} again with {advice}"
SAME_RESULT_REPAIR = ("Step {n} found nothing new: {action} gives what step {step} found. Write step {n} again with "
                      "{advice}")
PLACEHOLDER_REPAIR = ("{action} copies the format, not an answer. Write step {n} again with {advice}")
# A Finish whose answer no observation of the chain contains: Qwen2.5-1.5B-Instruct answered from its own
# knowledge ("New York" for where Pocahontas Mounds is) one step after finding the node.
UNGROUNDED_REPAIR = ("No observation above says \"{answer}\". Write step {n} again with {advice}")
# What a repeating model could do next, untried actions on the nodes it reached first (they move it on
# best), then the next hop, then Finish: its usual stall is a node found and neither read nor followed.
NEXT_ADVICE = ("a new action: {untried}RetrieveNode[<name>] for what the observations name that the question "
               "needs next, or Finish[<the answer>] when an observation gives it.")
UNTRIED = "{actions} (not tried yet), "

# Ours: an action the chain already took is not run again; the observation says so.
REPEATED_ACTION = ("{action} was already done at step {step} (Observation {step} has its result). Take "
                   "{advice}")

# Ours (KGRConfig.finish_at_limit): the last step of a chain that has not finished answers from what the
# chain found: its steps, and on a corpus-built index the passages of the nodes it reached.
FINISH_AT_LIMIT = """A search of a knowledge graph for the answer to the question took these steps:
{chain}
{passages}
This is the last step: answer the question from what {found} found.
{answer_format}"""
FINISH_PASSAGES = "\nPassages that mention the nodes the steps reached:\n{passages}\n"

EXPLORE_THOUGHT = """Think step by step towards the answer to the question. You are given facts from a knowledge
graph (triples and entity attributes) found so far, and your previous thoughts. Write the next thought.
When the facts are enough to answer, write only: Finish[answer]

{examples}Graph definition:
{graph}

Question: {question}
Knowledge triples:
{triples}
Entity attributes:
{attributes}
Previous thoughts:
{thoughts}
{variant}Next thought:"""

ENTITY_EXTRACTION = """List the entities in the text that may be nodes of a knowledge graph (people, works, places,
organisations, concepts). Reply with the entities in brackets at the end, separated by commas: [entity 1, entity 2]

{examples}Text: {text}
Entities:"""

PRUNE_RELATIONS = """Which of the relations of this entity could help answer the question? Reply with the relevant
relations in brackets at the end, separated by commas, or [] if none: [relation 1, relation 2]

{examples}Question: {question}
Entity: {entity}
Relations: {relations}
Relevant relations:"""

PRUNE_ENTITIES = """Which of these neighbours, reached from the entity through the relation, could help answer the
question? Reply with them in brackets at the end, separated by commas, or [] if none: [neighbour 1, neighbour 2]

{examples}Question: {question}
Entity: {entity}
Relation: {relation}
Neighbours: {neighbors}
Relevant neighbours:"""

SEARCH_ATTRIBUTES = """Which attributes of this entity are relevant to the question? Reply with the attribute names in
brackets at the end, separated by commas, or [] if none: [attribute 1, attribute 2]

{examples}Question: {question}
Entity: {entity}
Attributes: {attributes}
Relevant attributes:"""

END_CHECK = """Are the thoughts and the knowledge-graph facts below enough to answer the question? Start your reply
with [Yes] or [No].

{examples}Question: {question}
Thoughts: {thoughts}
Knowledge triples:
{triples}
Entity attributes:
{attributes}
Answer:"""

SELECT_VOTE = """Several reasoning chains, grounded in a knowledge graph, try to answer the question. Decide which
{count} are the most likely to lead to the correct answer. Analyse each briefly, then end with a last line
"The best choices are: i, j, ..." listing {count} choice numbers, best first.

{examples}Question: {question}

{choices}"""

SCORE_VOTE = """Estimate the probability that this reasoning chain, grounded in a knowledge graph, leads to the
correct answer of the question. The chain may be unfinished; judge the steps it has. Reply with a single
number between 0 and 1.

{examples}Question: {question}
Chain:
{chain}
Score:"""

MERGE = """Two reasoning chains over a knowledge graph try to answer the question. Combine what they found,
note any inconsistency or error between them, and continue the merged chain with its next step.
{format}

{examples}Question: {question}
Chain 1:
{chain_1}
Chain 2:
{chain_2}
{variant}"""

MERGE_AGENT_FORMAT = """Write exactly one Thought and one Action (RetrieveNode[text], NodeFeature[node id, feature],
NeighborCheck[node id, edge type], NodeDegree[node id, edge type] or Finish[answer]):
Thought: ...
Action: ..."""

# Ours: offered only when the graph definition could not list every edge type (KGRConfig.graph_chars).
EDGE_TYPES_ACTION = ("(6) EdgeTypes[node id]: the edge types of a node, with how many neighbours it has along each "
                     "(the graph definition lists only the most frequent edge types).\n")
EDGE_TYPES_NOTE = "(EdgeTypes[node id] lists the edge types of one node.)"
EXPLORE_TYPES_NOTE = "(The relations of each entity are listed when it is explored.)"

MERGE_EXPLORE_FORMAT = "Write the next thought, or Finish[answer] when the facts suffice."

VARIANT = "\n(Candidate {index} of {count}: where sensible, take a different next step from the other candidates.)\n"

KG_RAG_ANSWER = """Answer the question using the knowledge-graph nodes below. Keep the answer short (names or values).
If they do not contain the answer, reply "Unknown".

Nodes:
{context}

Question: {question}
Answer:"""

"""Few-shot examples for every kgr prompt, as App. F puts examples in each one. Written for this
project over a small invented academic graph shaped like GRBench's (paper, author and venue nodes;
features title/year/keywords, name/organization, name; edge types author, venue, reference,
cited_by, paper), so that the model sees the format of each reply before it writes one:

  P31 paper "Contrastive pretraining for satellite imagery" (2021): author A12 Ngozi Eze (Lagos
  Institute of Technology), A40 Henrik Vold (Bergen Data Lab); venue V3 Workshop on Earth
  Observation; cited_by P77 "Label-efficient crop mapping" (2023) and three more papers.

On a corpus-built index (entities, passages, OpenIE relations) the agent's example is one worked
two-hop question over that graph's shape instead (AGENT_CORPUS): the passages that mention a node,
reached with its mentioned_in edge, carry the facts, and the answer is written once a passage gives it.

`few_shot=false` drops them (zero-shot prompts)."""

from __future__ import annotations

AGENT = """Example 1
Question: Which organization is the first author of "Contrastive pretraining for satellite imagery" with?
Thought 1: The question is about one paper, so I first find its node.
Action 1: RetrieveNode[Contrastive pretraining for satellite imagery]
Observation 1: The most related node is P31 (paper: Contrastive pretraining for satellite imagery).
Thought 2: The paper's author neighbours list its authors in order.
Action 2: NeighborCheck[P31, author]
Observation 2: The author neighbours of P31 are: [A12 (Ngozi Eze), A40 (Henrik Vold)].
Thought 3: The first author is A12; the organization is one of her features.
Action 3: NodeFeature[A12, organization]
Observation 3: The organization of A12 is: Lagos Institute of Technology.
Thought 4: That is the answer.
Action 4: Finish[Lagos Institute of Technology]

Example 2
Question: How many papers cite "Contrastive pretraining for satellite imagery"?
Thought 1: I need the paper's node, then the number of its cited_by neighbours.
Action 1: RetrieveNode[Contrastive pretraining for satellite imagery]
Observation 1: The most related node is P31 (paper: Contrastive pretraining for satellite imagery).
Thought 2: Counting is what NodeDegree does.
Action 2: NodeDegree[P31, cited_by]
Observation 2: Node P31 has 4 cited_by neighbours.
Thought 3: Four papers cite it.
Action 3: Finish[4]"""

AGENT_CORPUS = """Question: Which river flows through the town where Ada Kowal was born?
Thought 1: I first need Ada Kowal's node.
Action 1: RetrieveNode[Ada Kowal]
Observation 1: The most related node is ent:3f2a91c0 (entity: Ada Kowal).
Thought 2: The passages that mention her should say where she was born.
Action 2: NeighborCheck[ent:3f2a91c0, mentioned_in]
Observation 2: The mentioned_in neighbours of ent:3f2a91c0 are: [chunk:91c07d2e (Ada Kowal: Ada Kowal (born 1950 \
in Dunmore) is a Polish chemist...)].
Thought 3: She was born in Dunmore. Now I need the river of Dunmore, so I find its node.
Action 3: RetrieveNode[Dunmore]
Observation 3: The most related node is ent:77b1e4a5 (entity: Dunmore).
Thought 4: Dunmore's passages should name its river.
Action 4: NeighborCheck[ent:77b1e4a5, mentioned_in]
Observation 4: The mentioned_in neighbours of ent:77b1e4a5 are: [chunk:5d0e22f1 (Dunmore: Dunmore is a market \
town on the Vistula River...)].
Thought 5: Dunmore lies on the Vistula River, which answers the question.
Action 5: Finish[Vistula River]"""

THOUGHT = """Example 1
Question: At which venue did Ngozi Eze publish her paper on satellite imagery?
Knowledge triples: none yet
Previous thoughts: none yet
Next thought: I should find the papers of Ngozi Eze and pick the one about satellite imagery.

Example 2
Question: At which venue did Ngozi Eze publish her paper on satellite imagery?
Knowledge triples: Ngozi Eze -> paper -> Contrastive pretraining for satellite imagery;
Contrastive pretraining for satellite imagery -> venue -> Workshop on Earth Observation
Previous thoughts: I should find the papers of Ngozi Eze and pick the one about satellite imagery.
Next thought: Finish[Workshop on Earth Observation]"""

END_CHECK = """Example 1
Question: When was the paper that cites "Contrastive pretraining for satellite imagery" published?
Thoughts: Find the papers that cite the satellite imagery paper.
Knowledge triples: Contrastive pretraining for satellite imagery -> cited_by -> Label-efficient crop mapping
Entity attributes: none
Answer: [No] The citing paper is known, but not its year.

Example 2
Question: When was the paper that cites "Contrastive pretraining for satellite imagery" published?
Thoughts: The citing paper is Label-efficient crop mapping; its year answers the question.
Knowledge triples: Contrastive pretraining for satellite imagery -> cited_by -> Label-efficient crop mapping
Entity attributes: Label-efficient crop mapping: year = 2023
Answer: [Yes] The year 2023 is known."""

ENTITIES = """Example 1
Text: Who wrote "Contrastive pretraining for satellite imagery" together with Henrik Vold?
Entities: [Contrastive pretraining for satellite imagery, Henrik Vold]

Example 2
Text: The paper appeared at a workshop, so I should look up the Workshop on Earth Observation.
Entities: [Workshop on Earth Observation]"""

RELATIONS = """Example
Question: Who are the co-authors of Henrik Vold on his 2021 paper?
Entity: Contrastive pretraining for satellite imagery
Relations: author, venue, reference, cited_by
Relevant relations: [author]"""

NEIGHBOURS = """Example
Question: Which paper that cites the satellite imagery paper is about crops?
Entity: Contrastive pretraining for satellite imagery
Relation: cited_by
Neighbours: Label-efficient crop mapping, Glacier retreat from radar, Urban heat islands at night
Relevant neighbours: [Label-efficient crop mapping]"""

ATTRIBUTES = """Example
Question: In which year did Ngozi Eze publish the satellite imagery paper?
Entity: Contrastive pretraining for satellite imagery
Attributes: title, year, keywords
Relevant attributes: [year]"""

SELECT = """Example
Question: Which organization is Henrik Vold with?
Choice 1:
Thought 1: Find the venue of the satellite imagery paper.
Action 1: NeighborCheck[P31, venue]
Choice 2:
Thought 1: Find Henrik Vold's node.
Action 1: RetrieveNode[Henrik Vold]
Observation 1: The most related node is A40 (author: Henrik Vold).
Analysis: Choice 2 found the author, whose organization answers the question; choice 1 looks at a venue,
which says nothing about affiliations.
The best choices are: 2, 1"""

SCORE = """Example 1
Question: Which organization is Henrik Vold with?
Chain:
Thought 1: Find Henrik Vold's node.
Action 1: RetrieveNode[Henrik Vold]
Observation 1: The most related node is A40 (author: Henrik Vold).
Score: 0.8

Example 2
Question: Which organization is Henrik Vold with?
Chain:
Thought 1: Count the papers that cite the satellite imagery paper.
Score: 0.1"""

MERGE_AGENT = """Example
Question: Which organization is the second author of the satellite imagery paper with?
Chain 1:
Thought 1: Find the paper.
Action 1: RetrieveNode[Contrastive pretraining for satellite imagery]
Observation 1: The most related node is P31 (paper: Contrastive pretraining for satellite imagery).
Chain 2:
Thought 1: The second author might be Ngozi Eze.
Action 1: RetrieveNode[Ngozi Eze]
Observation 1: The most related node is A12 (author: Ngozi Eze).
Next step of the merged chain:
Thought: Chain 2 guessed the author without checking the order; chain 1 has the paper, so list its authors.
Action: NeighborCheck[P31, author]"""

MERGE_EXPLORE = """Example
Question: Which organization is the second author of the satellite imagery paper with?
Chain 1:
Thought 1: Find the authors of the satellite imagery paper.
Triples:
Contrastive pretraining for satellite imagery -> author -> Ngozi Eze
Contrastive pretraining for satellite imagery -> author -> Henrik Vold
Chain 2:
Thought 1: The second author might be Ngozi Eze; look up her organization.
Attributes:
Ngozi Eze: organization = Lagos Institute of Technology
Next thought of the merged chain: Chain 2 took the first author for the second; by chain 1 the second
author is Henrik Vold, so his organization is still needed."""

_EXAMPLES = {"agent": AGENT, "agent_corpus": AGENT_CORPUS, "thought": THOUGHT, "end_check": END_CHECK,
             "entities": ENTITIES, "relations": RELATIONS, "neighbours": NEIGHBOURS, "attributes": ATTRIBUTES,
             "select": SELECT, "score": SCORE, "merge_agent": MERGE_AGENT,
             "merge_explore": MERGE_EXPLORE}


# The example's node ids as the agent is shown them when nodes have short names (methods/kgr/names.py).
SHORT_NAMES = {"ent:3f2a91c0": "E1", "chunk:91c07d2e": "P1", "ent:77b1e4a5": "E2", "chunk:5d0e22f1": "P2"}


def examples(prompt: str, few_shot: bool, *, short_names: bool = False) -> str:
    """The examples block of a prompt (ending in a blank line), or "" when few-shot is off; with
    ``short_names``, the corpus example's node ids as short names, as the agent will see its own."""
    if not few_shot:
        return ""
    text = _EXAMPLES[prompt]
    if short_names:
        for ext, name in SHORT_NAMES.items():
            text = text.replace(ext, name)
    if not text.startswith("Example"):  # one worked example
        return f"Here is an example:\n{text}\n\nNow your task.\n"
    return f"Here are some examples:\n{text}\n\nNow your task.\n"

"""ToPG's extraction (App. A, Fig. 6 structure): named entities first, then propositions, each
returned with the entities it mentions. Two LLM calls per chunk."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from thinkgraph.index.grounding import grounded
from thinkgraph.index.records import EntitySpec, Extraction, PropositionSpec
from thinkgraph.llm.limits import Name, Statement, bounded_list
from thinkgraph.llm.service import LLM
from thinkgraph.models import Chunk, SourceDocument

NER_STEP = "index.topg_entities"
PROPOSITION_STEP = "index.topg_propositions"

NER_PROMPT = """List the named entities in the passage below: people, organisations, places, works,
events, dates, numbers with units and other specific things, written exactly as in the passage.
Reply with JSON only: {{"entities": ["..."]}}

Passage:
{title_line}{text}"""

PROPOSITION_PROMPT = """Rewrite the passage below as a list of propositions: short, self-contained
statements of one fact each, understandable without the passage (replace pronouns by the names they
stand for). For each proposition give the named entities it mentions, taken from the list.
Reply with JSON only: {{"propositions": [{{"text": "...", "entities": ["..."]}}]}}

Example: passage "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics." with
entities ["Marie Curie", "Warsaw", "1867", "Nobel Prize in Physics"] gives
{{"propositions": [{{"text": "Marie Curie was born in Warsaw in 1867.", "entities": ["Marie Curie", "Warsaw", "1867"]}},
 {{"text": "Marie Curie won the Nobel Prize in Physics.", "entities": ["Marie Curie", "Nobel Prize in Physics"]}}]}}

Entities: {entities}

Passage:
{title_line}{text}"""


class EntityList(BaseModel):
    model_config = ConfigDict(extra="ignore")
    entities: list[Name] = bounded_list()


class PropositionItem(BaseModel):
    model_config = ConfigDict(extra="ignore")
    text: Statement
    entities: list[Name] = bounded_list(default_factory=list)


class PropositionList(BaseModel):
    model_config = ConfigDict(extra="ignore")
    propositions: list[PropositionItem] = bounded_list()


class PropositionExtractor:
    name = "propositions"
    uses_llm = True

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction:
        title_line = f"Title: {doc.title}\n" if doc.title else ""
        ner = await self.llm.json([{"role": "user", "content": NER_PROMPT.format(
            title_line=title_line, text=chunk.text)}], EntityList, step=NER_STEP, kind="extraction")
        names = list(dict.fromkeys(e.strip() for e in ner.entities if e.strip()))
        reply = await self.llm.json([{"role": "user", "content": PROPOSITION_PROMPT.format(
            entities=names, title_line=title_line, text=chunk.text)}], PropositionList, step=PROPOSITION_STEP,
            kind="extraction")
        return grounded(Extraction(entities=[EntitySpec(n) for n in names],
                                   propositions=[PropositionSpec(p.text.strip(), [e for e in p.entities if e.strip()])
                                                 for p in reply.propositions]), f"{doc.title}\n{chunk.text}")

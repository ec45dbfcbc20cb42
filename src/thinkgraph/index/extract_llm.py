"""LLM triplet extraction with typed entities, typed relations and descriptions (ToG-3 §3.2.1: a
triple carries type_s, type_p and type_o; App. J, Fig. 11 structure)."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from thinkgraph.index.grounding import grounded
from thinkgraph.index.records import EntitySpec, Extraction, TripleSpec
from thinkgraph.llm.limits import MAX_ITEMS_PER_REPLY, Description, Name, OptionalName, bounded_list
from thinkgraph.llm.service import LLM, Message
from thinkgraph.models import Chunk, SourceDocument

EXTRACTION_STEP = "index.extract_triplets"

# Our wording; the structure follows the paper: goal, steps (entities with type and description,
# then related pairs with relation, relation type and description), JSON-only output, one example,
# the text. Fig. 11 asks for entity types only; the relation type is §3.2.1's type_p.
TRIPLET_PROMPT = """## Task
Read the text below and build a small knowledge graph from it: the entities it names, what type each
is, and how they are related. Extract at most {max_triplets} relationships, choosing the most
informative ones.

## How
{entity_step}
2. List relationships between the entities you listed. For each give: source_entity, target_entity,
   relation (a short verb phrase), relation_type (the kind of relation in one or two words: Location,
   Origin, Membership, Creation, Family, Employment, ...), relationship_description (one short
   sentence based on the text).
3. Answer with one JSON object only, shaped like the example. Use names exactly as they appear in
   the text. Do not invent facts the text does not state.

## Example
{{"entities": [{{"entity_name": "Marie Curie", "entity_type": "Person",
   "entity_description": "Physicist and chemist."}},
  {{"entity_name": "Warsaw", "entity_type": "Place", "entity_description": "City where Curie was born."}}],
 "relationships": [{{"source_entity": "Marie Curie", "target_entity": "Warsaw", "relation": "was born in",
  "relation_type": "Origin", "relationship_description": "Curie was born in Warsaw in 1867."}}]}}

## Text
{title_line}{text}

## Output (JSON)"""


ENTITY_STEP = """1. List entities. For each give: entity_name, entity_type (Person, Organization, Place, Work, Event,
   Date, Concept, ...), entity_description (one short sentence based on the text)."""
# tog3's Constructor asks for the entities of its few relationships only (extraction_reply_schema's bound)
ENTITY_STEP_BOUNDED = (
    "1. List the entities of those relationships (at most {max_entities}). For each give: entity_name,\n"
    "   entity_type (Person, Organization, Place, Work, Event, Date, Concept, ...), entity_description (one\n"
    "   short sentence based on the text).")

# "One short sentence": a grammar-constrained server stops a description here (a small model repeating a
# phrase otherwise ran every attempt to the completion cap); a longer one from a server without a grammar is
# still accepted (cut at MAX_DESCRIPTION_CHARS).
DESCRIPTION_CHARS = 300


class ExtractedEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")
    entity_name: Name
    entity_type: OptionalName = ""
    entity_description: Description = Field("", json_schema_extra={"maxLength": DESCRIPTION_CHARS})


class ExtractedRelation(BaseModel):
    model_config = ConfigDict(extra="ignore")
    source_entity: Name
    target_entity: Name
    relation: Name
    relation_type: OptionalName = ""
    relationship_description: Description = Field("", json_schema_extra={"maxLength": DESCRIPTION_CHARS})


class ExtractionReply(BaseModel):
    """``entities`` must be present (an object of another shape is not an empty extraction);
    ``relationships`` may be left out when the text relates nothing."""

    model_config = ConfigDict(extra="ignore")
    entities: list[ExtractedEntity] = bounded_list()
    relationships: list[ExtractedRelation] = bounded_list(default_factory=list)

    @field_validator("relationships", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return [] if value is None else value


@cache  # one class per bound, so that the schema sent (and the reply cache's key) stays the same
def extraction_reply_schema(max_triplets: int | None) -> type[ExtractionReply]:
    """The reply schema: ExtractionReply itself for None (indexing: every entity the text names), or for
    a bound (tog3's Constructor, per question) one whose JSON schema asks for at most ``max_triplets``
    relationships and twice as many entities (what they relate), so that a server's schema grammar ends
    the reply there. Validation keeps the general bound: a server without a grammar that sends more is
    read, and the extraction keeps the first ``max_triplets`` relationships."""
    if max_triplets is None:
        return ExtractionReply

    def bounded(most: int, **field: Any) -> Any:
        return Field(max_length=MAX_ITEMS_PER_REPLY, json_schema_extra={"maxItems": min(most, MAX_ITEMS_PER_REPLY)},
                     **field)

    return create_model(
        f"ExtractionReplyAtMost{max_triplets}", __base__=ExtractionReply,
        entities=(list[ExtractedEntity], bounded(2 * max_triplets)),
        relationships=(list[ExtractedRelation], bounded(max_triplets, default_factory=list)))


def triplet_messages(text: str, title: str, max_triplets: int, *, bounded: bool = False) -> list[Message]:
    title_line = f"Title: {title}\n" if title else ""
    entity_step = ENTITY_STEP_BOUNDED.format(max_entities=2 * max_triplets) if bounded else ENTITY_STEP
    prompt = TRIPLET_PROMPT.format(max_triplets=max_triplets, entity_step=entity_step, title_line=title_line,
                                   text=text)
    return [{"role": "user", "content": prompt}]


def reply_to_extraction(reply: ExtractionReply, max_triplets: int) -> Extraction:
    types = {e.entity_name.strip().casefold(): e.entity_type for e in reply.entities}
    out = Extraction(entities=[EntitySpec(e.entity_name, e.entity_type, e.entity_description)
                               for e in reply.entities])
    for rel in reply.relationships[:max_triplets]:
        out.triples.append(TripleSpec(
            rel.source_entity, rel.relation, rel.target_entity,
            subject_type=types.get(rel.source_entity.strip().casefold(), ""),
            object_type=types.get(rel.target_entity.strip().casefold(), ""),
            relation_type=rel.relation_type, description=rel.relationship_description))
    return out


class LLMTripletExtractor:
    name = "llm"
    uses_llm = True

    def __init__(self, llm: LLM, *, max_triplets: int, bounded: bool = False) -> None:
        """``bounded``: ask for the entities of the relationships kept only, and bound the reply's lists in
        its schema (tog3's Constructor, where a small model listing entities ran every attempt to the
        completion cap); indexing asks for every entity the text names."""
        self.llm = llm
        self.max_triplets = max_triplets
        self.bounded = bounded

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction:
        messages = triplet_messages(chunk.text, doc.title, self.max_triplets, bounded=self.bounded)
        reply = await self.llm.json(messages, extraction_reply_schema(self.max_triplets if self.bounded else None),
                                    step=EXTRACTION_STEP, kind="extraction")
        return grounded(reply_to_extraction(reply, self.max_triplets), f"{doc.title}\n{chunk.text}")

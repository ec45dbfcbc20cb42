"""Bounds on what a model reply may hold, as pydantic field types for the reply schemas.

A reply past these bounds is broken (a model looping, a hostile server), so it fails validation and
goes through the bounded repair like any other unusable reply: memory and time stay bounded whatever
the model sends. Free-text descriptions are cut rather than refused, since a long one is still usable.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints

MAX_ITEMS_PER_REPLY = 200  # entities, relations, propositions or names in one reply (one chunk)
MAX_NAME_CHARS = 200  # an entity name, a relation, a type
MAX_STATEMENT_CHARS = 1000  # a proposition or a triple's statement
MAX_DESCRIPTION_CHARS = 1000  # descriptions are cut here


def _cut(text: str) -> str:
    return text[:MAX_DESCRIPTION_CHARS]


Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME_CHARS)]
OptionalName = Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_NAME_CHARS)]
Statement = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_STATEMENT_CHARS)]
Description = Annotated[str, AfterValidator(_cut)]


def bounded_list(**kwargs: Any) -> Any:
    """A list field holding at most MAX_ITEMS_PER_REPLY items."""
    return Field(max_length=MAX_ITEMS_PER_REPLY, **kwargs)

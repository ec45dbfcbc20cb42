"""Request bodies of the service (responses are the library's own dataclasses, as JSON)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from thinkgraph.methods.registry import DEFAULT_METHOD


class DocumentIn(BaseModel):
    text: str = Field(min_length=1)
    title: str | None = None


class AskIn(BaseModel):
    question: str = Field(min_length=1)
    method: str = DEFAULT_METHOD
    options: dict[str, Any] = Field(default_factory=dict)
    stream: bool = False


class RetrieveIn(BaseModel):
    question: str = Field(min_length=1)
    method: str = DEFAULT_METHOD
    top_k: int | None = Field(default=None, ge=1, le=100)


class EntityEdit(BaseModel):
    name: str | None = None
    description: str | None = None


class EntityMerge(BaseModel):
    sources: list[str] = Field(min_length=1)
    target: str


class ChatMessage(BaseModel):
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatIn(BaseModel):
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False

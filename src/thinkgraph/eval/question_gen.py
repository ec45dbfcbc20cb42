"""Abstract (sensemaking) questions for any corpus, by the protocol ToPG App. C takes from LightRAG:
from a summary of the corpus the LLM imagines users, tasks for each user, and questions for each
(user, task) that need an understanding of the corpus as a whole. Defaults are the papers' 5 x 5 x 5."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from thinkgraph.errors import ConfigError, StructuredOutputError
from thinkgraph.llm.service import LLM
from thinkgraph.models import NodeType
from thinkgraph.store.base import GraphStore

N_USERS = 5  # ToPG App. C / LightRAG
N_TASKS = 5
N_QUESTIONS = 5
MAX_SUMMARY_SOURCE_CHARS = 12_000  # document summaries fed to the corpus summary

CORPUS_SUMMARY_PROMPT = """Below are short descriptions of the documents of a collection. Write one paragraph
(5 to 8 sentences) describing the collection as a whole: its subject, the kinds of documents, the main
themes and entities, and what a reader could learn from it.

Documents:
{documents}

Description of the collection:"""

USERS_PROMPT = """Here is a description of a document collection:
{summary}

Imagine {n_users} different people who would use this collection, each with a distinct background
and purpose. For each, name {n_tasks} tasks they would use the collection for.
Reply with JSON only: {{"users": [{{"user": "who they are", "tasks": ["task", ...]}}, ...]}}"""

QUESTIONS_PROMPT = """Here is a description of a document collection:
{summary}

User: {user}
Task: {task}

Write {n_questions} questions this user would ask for this task that need an understanding of the
collection as a whole (themes, comparisons, trends, implications), not a single fact from one place.
Reply with JSON only: {{"questions": ["...", ...]}}"""


class UserTasks(BaseModel):
    user: str
    tasks: list[str] = Field(default_factory=list)


class Users(BaseModel):
    users: list[UserTasks]


class Questions(BaseModel):
    questions: list[str]


@dataclass(frozen=True, slots=True)
class AbstractQuestion:
    id: str
    question: str
    user: str
    task: str
    type: str = "abstract"


async def corpus_summary(store: GraphStore, llm: LLM) -> str:
    parts, size = [], 0
    for node in store.iter_nodes(NodeType.DOCUMENT):
        if size + len(node.text) > MAX_SUMMARY_SOURCE_CHARS:
            break
        parts.append(f"- {node.text}")
        size += len(node.text)
    if not parts:
        raise ConfigError("the index has no documents to summarise")
    prompt = CORPUS_SUMMARY_PROMPT.format(documents="\n".join(parts))
    return (await llm.text([{"role": "user", "content": prompt}], step="eval.questions.summary",
                            kind="summary")).strip()


async def generate_questions(store: GraphStore, llm: LLM, *, n_users: int = N_USERS, n_tasks: int = N_TASKS,
                             n_questions: int = N_QUESTIONS, summary: str | None = None) -> list[AbstractQuestion]:
    """Up to n_users * n_tasks * n_questions questions; a (user, task) whose reply cannot be parsed is
    skipped (and counted by the LLM layer), the rest are kept."""
    summary = summary or await corpus_summary(store, llm)
    prompt = USERS_PROMPT.format(summary=summary, n_users=n_users, n_tasks=n_tasks)
    users = (await llm.json([{"role": "user", "content": prompt}], Users, step="eval.questions.users",
                            kind="extraction")).users
    pairs = [(u.user, task) for u in users[:n_users] for task in u.tasks[:n_tasks]]

    async def ask(user: str, task: str) -> list[str]:
        prompt = QUESTIONS_PROMPT.format(summary=summary, user=user, task=task, n_questions=n_questions)
        try:
            reply = await llm.json([{"role": "user", "content": prompt}], Questions, step="eval.questions.questions",
                                   kind="extraction")
        except StructuredOutputError:
            return []
        return [q.strip() for q in reply.questions if q.strip()][:n_questions]

    batches = await asyncio.gather(*(ask(user, task) for user, task in pairs))
    out: list[AbstractQuestion] = []
    for (user, task), questions in zip(pairs, batches, strict=True):
        out += [AbstractQuestion(f"abstract-{len(out) + i + 1}", q, user, task) for i, q in enumerate(questions)]
    return out


def write_questions(path: str | Path, questions: Sequence[AbstractQuestion]) -> Path:
    """JSONL in the questions format (no gold answer: judge these pairwise)."""
    out = Path(path)
    out.write_text("".join(json.dumps({"id": q.id, "question": q.question, "type": q.type, "user": q.user,
                                       "task": q.task}, ensure_ascii=False) + "\n" for q in questions),
                   encoding="utf-8")
    return out

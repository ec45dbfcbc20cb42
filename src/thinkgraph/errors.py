"""Exception hierarchy. Every error a user can cause has a one-line message and an exit code.

Exit codes of the command line (docs/command-line.md, "Exit codes"): 0 ok, 1 usage (command line or configuration),
2 input (a file, index, document or question that cannot be used), 3 upstream (the LLM or embedding
endpoint or the database server failed, or a call budget is spent), 4 partial (the run finished but
some documents failed), 70 internal error (a bug: please report it), 130 interrupted.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar


class ExitCode(IntEnum):
    OK = 0
    USAGE = 1
    INPUT = 2
    UPSTREAM = 3
    PARTIAL = 4
    INTERNAL = 70
    INTERRUPTED = 130
    PIPE_CLOSED = 141  # the reader of the output went away (`| head`): 128 + SIGPIPE, as other tools


class ThinkgraphError(Exception):
    """Base class for errors shown to users as a single line."""

    exit_code: ClassVar[ExitCode] = ExitCode.INPUT


class UsageError(ThinkgraphError):
    """The command line asks for something that cannot be done (a missing or contradictory argument)."""

    exit_code = ExitCode.USAGE


class ConfigError(ThinkgraphError):
    """Invalid or missing configuration."""

    exit_code = ExitCode.USAGE


class IndexFileError(ThinkgraphError):
    """The index file is corrupt, foreign, or of an incompatible schema."""


class StoreUnavailableError(ThinkgraphError):
    """The database server holding the index cannot be reached (a network or server problem)."""

    exit_code = ExitCode.UPSTREAM


class EmbeddingMismatchError(ThinkgraphError):
    """The index was built with another embedding model or dimension."""


class InputError(ThinkgraphError):
    """Bad input given by the user (path, file, document, name)."""


class NotFoundError(InputError):
    """A named item (document, node, passage, entity, proposal) that the index does not hold (HTTP 404)."""


class LLMError(ThinkgraphError):
    """The LLM endpoint could not produce a usable reply."""

    exit_code = ExitCode.UPSTREAM


class LLMUnavailableError(LLMError):
    """The endpoint cannot be reached or keeps failing after retries."""


class StructuredOutputError(LLMError):
    """The model's reply could not be parsed into the required structure after repairs."""


class BudgetExceededError(LLMError):
    """The configured call or token budget of the run is spent."""


class CallBudgetReached(BudgetExceededError):  # noqa: N818 - a reached limit, reported as an outcome
    """A method's own per-question call budget is spent. Methods catch it and report the outcome
    ("budget_reached") in their Answer; it only escapes from code that has no such budget."""


class UnknownMethodError(ThinkgraphError):
    """A method name that is not registered."""

    exit_code = ExitCode.USAGE


class IncompleteIndexError(ThinkgraphError):
    """A derived stage of the index (vectors, synonyms, communities) is missing or out of date
    (an index that cannot be used as it is: exit code 2, input)."""


def install_command(extra: str) -> str:
    """How to install an optional part (an extra of the package): from the registry, and in a source
    checkout (an editable install), where ``thinkgraph[extra]`` would fetch the published package."""
    return f"pip install 'thinkgraph[{extra}]' (from a source checkout: pip install -e '.[{extra}]')"

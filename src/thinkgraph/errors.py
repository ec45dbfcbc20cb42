"""Exception hierarchy. Every error a user can cause has a one-line message."""


class ThinkgraphError(Exception):
    """Base class for errors shown to users as a single line."""


class ConfigError(ThinkgraphError):
    """Invalid or missing configuration."""


class IndexFileError(ThinkgraphError):
    """The index file is corrupt, foreign, or of an incompatible schema."""


class EmbeddingMismatchError(ThinkgraphError):
    """The index was built with another embedding model or dimension."""


class InputError(ThinkgraphError):
    """Bad input given by the user (path, file, document, name)."""


class LLMError(ThinkgraphError):
    """The LLM endpoint could not produce a usable reply."""


class LLMUnavailableError(LLMError):
    """The endpoint cannot be reached or keeps failing after retries."""


class StructuredOutputError(LLMError):
    """The model's reply could not be parsed into the required structure after repairs."""


class BudgetExceededError(LLMError):
    """The configured call or token budget of the run is spent."""


class UnknownMethodError(ThinkgraphError):
    """A method name that is not registered."""


class IncompleteIndexError(ThinkgraphError):
    """A derived stage of the index (vectors, synonyms, communities) is missing or out of date."""

"""LLM access: an OpenAI-compatible client with cache, retries, budget and usage accounting."""

from thinkgraph.llm.accounting import UsageMeter
from thinkgraph.llm.backend import ChatBackend, ChatRequest, ChatResult, OpenAICompatibleBackend
from thinkgraph.llm.service import LLM, Message

__all__ = ["LLM", "ChatBackend", "ChatRequest", "ChatResult", "Message", "OpenAICompatibleBackend", "UsageMeter"]

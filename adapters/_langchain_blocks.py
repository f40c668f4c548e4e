"""Tool results as LangChain holds them: a string, or a list of content blocks.

A LangChain ``ToolMessage``'s content is a string or a list of content blocks: a tool that returns a
list gives one (``langchain_core.tools`` keeps a list of blocks as the message's content), and every MCP
tool loaded through ``langchain-mcp-adapters`` answers with a list of ``{"type": "text", ...}`` blocks.
Code that handles only the string form misses these (deepagents PR #674: ``FilesystemMiddleware`` evicted
a large result only when its content was a string). So the LangChain-family adapters hold every other
tool result of a history (the second, the fourth, ...) as one text block carrying its text, whatever
clause the history is drawn for, and a result the compactor leaves as it was comes back as given.
"""

from __future__ import annotations

from typing import Any


def held(content: Any, k: int) -> Any:
    """The content of the ``k``-th tool result (from 0) of a history as the agent holds it: a non-empty
    string of an odd ``k`` as one text block, anything else as given (a list of parts is already blocks)."""
    if k % 2 == 1 and isinstance(content, str) and content:
        return [{"type": "text", "text": content}]
    return content


def given_back(content: Any, original: Any) -> Any:
    """``content`` of a tool result the compactor handed back: ``original`` when it is the string `held`
    made one text block of and the block is as made, else ``content``."""
    if isinstance(original, str) and content == [{"type": "text", "text": original}]:
        return original
    return content

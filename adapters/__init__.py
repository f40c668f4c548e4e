"""Adapters: the compactors of agent frameworks behind compaction-suite's plug-in contract.

One module per framework; each imports only the standard library at import time and
imports its framework inside the factories, so ``import compaction_suite.adapters.langchain`` costs nothing
when LangChain is absent. Install a framework with its extra, from a checkout::

    pip install -e '.[langchain]'      # or semantic-kernel, agent-framework, autogen, pydantic-ai, openai-agents, strands
    pip install -e '.[frameworks]'     # all of them

(`compaction_suite.extras.install_hint` prints the same extra's requirements for a wheel install)

then check one configuration::

    compaction-suite check compaction_suite.adapters.langchain:trim_messages
    COMPACTION_ADAPTER_OPTIONS='{"max_tokens": 256}' compaction-suite check compaction_suite.adapters.langchain:trim_messages

``compaction-suite matrix`` runs every installed adapter over its ``CONFIGURATIONS``.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from importlib import metadata
from types import ModuleType


@dataclass(frozen=True)
class Framework:
    """One adapter module and what it needs."""

    name: str
    module: str
    """``adapters.<module>``: the adapter (standard library at import time)."""
    probe: str
    """A module of the framework: the framework counts as installed when it is importable."""
    extra: str

    def installed(self) -> bool:
        try:
            return importlib.util.find_spec(self.probe) is not None
        except (ImportError, ValueError):
            return False

    def adapter(self) -> ModuleType:
        return importlib.import_module(self.module)

    def versions(self) -> dict[str, str]:
        """Installed versions of the framework's distributions."""
        found = {}
        for dist in self.adapter().DISTRIBUTIONS:
            try:
                found[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
        return found


FRAMEWORKS = (
    Framework("LangChain", "compaction_suite.adapters.langchain", "langchain_core", "langchain"),
    Framework("LangChain (deepagents)", "compaction_suite.adapters.deepagents", "deepagents", "deepagents"),
    Framework("Semantic Kernel", "compaction_suite.adapters.semantic_kernel", "semantic_kernel", "semantic-kernel"),
    Framework("Microsoft Agent Framework", "compaction_suite.adapters.agent_framework", "agent_framework", "agent-framework"),
    Framework("AutoGen", "compaction_suite.adapters.autogen", "autogen_core", "autogen"),
    Framework("Pydantic AI", "compaction_suite.adapters.pydantic_ai", "pydantic_ai_harness", "pydantic-ai"),
    # Other wire formats (issue 13): Responses input items, Anthropic messages.
    Framework("OpenAI Agents SDK", "compaction_suite.adapters.openai_agents", "agents.memory", "openai-agents"),
    Framework("Strands Agents", "compaction_suite.adapters.strands", "strands", "strands"),
)

"""LangChain's chat model classes per provider, each on a TEST DOUBLE's address, for the reactive path
(SPEC FIRE-5): the provider's overflow answer reaches the agent through that provider's own LangChain
client, whose error mapping (or its absence) decides whether the framework sees a
``ContextOverflowError`` (langchain-ai/langchain#37532, #37533).

- ``openai``: ``ChatOpenAI`` (``langchain-openai``) on ``/v1/chat/completions``, OpenAI's answer.
- ``anthropic``: ``ChatAnthropic`` (``langchain-anthropic``) on ``/v1/messages``, Anthropic's answer.
- ``groq``: ``ChatGroq`` (``langchain-groq``, the ``groq`` client) on ``/openai/v1/chat/completions``,
  Groq's answer (`conformance.overflow.GROQ`).
- ``mistral``: ``ChatMistralAI`` (``langchain-mistralai``, httpx of its own) on ``/v1/chat/completions``,
  Mistral's answer (`conformance.overflow.MISTRAL`).
- ``ollama``: ``ChatOllama`` (``langchain-ollama``, the ``ollama`` client) on ``/api/chat``, Ollama's cloud
  answer (`conformance.overflow.OLLAMA_CLOUD`; ``context-shift-off`` a local server's).
"""

from __future__ import annotations

from typing import Any

from ._common import requires

EXTRA = "deepagents"
"""The extra holding every class here (``langchain-groq``, ``langchain-mistralai`` and ``langchain-ollama`` beside deepagents)."""

MODELS: dict[str, tuple[str, str, str | None]] = {
    "openai": ("langchain_openai", "chat", None),
    "anthropic": ("langchain_anthropic", "anthropic", None),
    "groq": ("langchain_groq", "chat", "groq"),
    "mistral": ("langchain_mistralai", "chat", "mistral"),
    "ollama": ("langchain_ollama", "ollama", None),
}
"""``model`` kind -> (the LangChain package holding its class, the wire API it calls, its provider's
overflow answer on that API: `conformance.overflow.ANSWERS`; None, the API's default)."""


def kind_of(value: Any) -> str:
    """The ``model`` option checked, its package imported now (a missing one is a contract error naming
    the package, never a finding)."""
    if value not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {value!r}")
    requires(MODELS[value][0], EXTRA)
    return str(value)


def answers(kind: str, answer: str | None) -> dict[str, str]:
    """The double's overflow answer for ``kind`` (``{api: name}``): ``answer`` when given (checked
    against its API's answers), else the provider's own."""
    from compaction_suite.conformance import overflow

    _, api, own = MODELS[kind]
    name = answer if answer is not None else own
    if name is None:
        return {}
    overflow.chosen(api, name)
    return {api: name}


def chat_model(kind: str, base_url: str, api_key: str, model: str, timeout: float) -> Any:
    """The ``kind``'s chat model class on a double at ``base_url`` (the ``.../v1`` address), one attempt
    per call. No profile: the model's name is one LangChain's registry does not know."""
    root = base_url.removesuffix("/v1")
    package = requires(MODELS[kind][0], EXTRA)
    if kind == "openai":
        return package.ChatOpenAI(model=model, base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
    if kind == "anthropic":
        return package.ChatAnthropic(model=model, base_url=root, api_key=api_key, timeout=timeout, max_retries=0)
    if kind == "groq":
        return package.ChatGroq(model=model, base_url=root, api_key=api_key, timeout=timeout, max_retries=0)
    if kind == "mistral":
        return package.ChatMistralAI(model=model, base_url=base_url, api_key=api_key, timeout=int(timeout), max_retries=0)
    return package.ChatOllama(model=model, base_url=root, client_kwargs={"timeout": timeout})


BEDROCK_REGION = "us-east-1"
BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
"""The model id ``ChatBedrockConverse`` is given: Claude on Bedrock, whose id names its provider (``anthropic``,
from which ``langchain-aws`` decides what the model supports); the Converse double answers any id."""


def bedrock_converse(base_url: str, timeout: float) -> Any:
    """``ChatBedrockConverse`` (``langchain-aws``) on the double's Bedrock Converse API (``POST
    /model/{modelId}/converse``, `conformance.converse`) at ``base_url``'s root: boto3's ``endpoint_url``
    (the class's ``base_url``, an alias of ``endpoint_url`` in every release), dummy credentials (the
    double reads no signature), one attempt per call. The double answers each request by Bedrock's rules,
    its ``ValidationException`` among them."""
    aws = requires("langchain_aws", "langchain")
    botocore = requires("botocore.config", "langchain")
    config = botocore.Config(retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=timeout, read_timeout=timeout)
    return aws.ChatBedrockConverse(
        model=BEDROCK_MODEL, base_url=base_url.removesuffix("/v1"), region_name=BEDROCK_REGION,
        aws_access_key_id="compaction-suite", aws_secret_access_key="compaction-suite", config=config,
    )  # fmt: skip

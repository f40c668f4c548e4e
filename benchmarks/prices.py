"""What a model call costs, per provider: price tables with prompt-cache prices (issue 23).

Prices are USD per 1,000,000 tokens, as each provider publishes them. Check them before
quoting a bill: prices change.

* **OpenAI** (``developers.openai.com/api/docs/pricing``, read for this project in November 2026
  through copies of that page): GPT-4.1 $2.00 input, $0.50 cached input, $8.00 output; GPT-4.1
  mini $0.40, $0.10, $1.60; GPT-4o mini $0.15, $0.075, $0.60; GPT-5.1 $1.25, $0.125, $10.00;
  GPT-5.4 $2.50, $0.25, $15.00; GPT-5.4 mini $0.75, $0.075, $4.50. Caching is automatic and
  "has no additional fees": a token written to the cache costs the input price.
* **Anthropic** (the prompt-caching page of ``docs.claude.com``, its pricing table, read in
  November 2026 from a copy listing models up to Opus 4.5): base input, 5-minute cache writes
  (1.25 times the input price), cache hits (0.1 times), output. Claude Sonnet 4.5 and Sonnet 4
  $3 / $3.75 / $0.30 / $15; Claude Haiku 4.5 $1 / $1.25 / $0.10 / $5; Claude Opus 4.5 $5 / $6.25
  / $0.50 / $25. The minimum cacheable prompt is 1,024 tokens for Sonnet 4.5 and 4, 4,096 for
  Haiku 4.5 and Opus 4.5 (same page).

Each provider's cache *rules* (what is read, what is written) are in
`compaction_suite.benchmarks.cache`; a `Pricing` is one provider with the agent's model and the
summarizer's, the unit every cost figure of the replay is given in.
"""

from __future__ import annotations

from dataclasses import dataclass

OPENAI = "openai"
ANTHROPIC = "anthropic"


@dataclass(frozen=True)
class Price:
    """USD per million tokens. ``cache_write`` is what a token written to the cache costs
    (None: the input price, as OpenAI bills it)."""

    input: float
    cached_input: float
    output: float
    cache_write: float | None = None

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int, written_tokens: int = 0) -> float:
        """USD for a call: ``input_tokens`` includes the ``cached_tokens`` read from the cache and
        the ``written_tokens`` written to it."""
        fresh = input_tokens - cached_tokens - written_tokens
        write = self.input if self.cache_write is None else self.cache_write
        return (fresh * self.input + cached_tokens * self.cached_input + written_tokens * write + output_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class Model:
    """A model of a provider's table: its prices and the shortest prefix its cache takes."""

    name: str
    provider: str
    price: Price
    min_cached_tokens: int = 1024


def _openai(name: str, input: float, cached: float, output: float) -> Model:
    return Model(name, OPENAI, Price(input, cached, output))


def _anthropic(name: str, input: float, output: float, min_cached_tokens: int) -> Model:
    """Anthropic prices its cache from the input price: writes 1.25x (5-minute lifetime), reads 0.1x."""
    return Model(name, ANTHROPIC, Price(input, round(input * 0.1, 6), output, round(input * 1.25, 6)), min_cached_tokens)


MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        _openai("gpt-4.1", 2.00, 0.50, 8.00),
        _openai("gpt-4.1-mini", 0.40, 0.10, 1.60),
        _openai("gpt-4o-mini", 0.15, 0.075, 0.60),
        _openai("gpt-5.1", 1.25, 0.125, 10.00),
        _openai("gpt-5.4", 2.50, 0.25, 15.00),
        _openai("gpt-5.4-mini", 0.75, 0.075, 4.50),
        _anthropic("claude-sonnet-4-5", 3.00, 15.00, 1024),
        _anthropic("claude-sonnet-4", 3.00, 15.00, 1024),
        _anthropic("claude-haiku-4-5", 1.00, 5.00, 4096),
        _anthropic("claude-opus-4-5", 5.00, 25.00, 4096),
    )
}
PRICES: dict[str, Price] = {name: m.price for name, m in MODELS.items()}

DEFAULTS: dict[str, tuple[str, str]] = {
    OPENAI: ("gpt-4.1", "gpt-4o-mini"),  # seed 000's agent model and its suggested summarizer deployment
    ANTHROPIC: ("claude-sonnet-4-5", "claude-haiku-4-5"),
}
"""Each provider's (agent model, summarizer model) when the command line names no model."""
PROVIDERS = tuple(DEFAULTS)
AGENT_MODEL, SUMMARIZER_MODEL = DEFAULTS[OPENAI]


@dataclass(frozen=True)
class Pricing:
    """One provider's bill: its cache rules priced for the agent's model, the summarizer's calls
    priced (without a cache) for the summarizer's model."""

    agent: Model
    summarizer: Model

    @property
    def provider(self) -> str:
        return self.agent.provider

    @property
    def label(self) -> str:
        return f"{self.provider} {self.agent.name}"

    @property
    def write_to_read(self) -> float:
        """What writing a token to the cache costs over what reading it back costs (the cache-aware
        trigger's ratio, SPEC RT-8)."""
        price = self.agent.price
        return (price.input if price.cache_write is None else price.cache_write) / price.cached_input

    def summary_overhead(self, instructions: int, answer: int = 300) -> float:
        """A summarizer call's cost beyond what it folds (its ``instructions`` and an ``answer`` of
        300 tokens, seed 003's summary budget), in the agent's cache-read tokens (RT-8)."""
        price = self.summarizer.price
        return (instructions * price.input + answer * price.output) / self.agent.price.cached_input

    @property
    def summarize_to_read(self) -> float:
        """The summarizer's input price over the agent's cache-read price (RT-8's other ratio)."""
        return self.summarizer.price.input / self.agent.price.cached_input


def pricing(provider: str, agent_model: str | None = None) -> Pricing:
    """The provider's pricing, with ``agent_model`` (one of its models) or its default."""
    agent, summarizer = DEFAULTS[provider]
    model = MODELS[agent_model or agent]
    if model.provider != provider:
        raise ValueError(f"{model.name} is a model of {model.provider}, not {provider}")
    return Pricing(model, MODELS[summarizer])


def pricings(providers: tuple[str, ...] = (), models: tuple[str, ...] = ()) -> tuple[Pricing, ...]:
    """The bills a replay prices: each provider named or implied by a model named (both providers
    when neither is given), each with the model named for it or its default; raises ValueError
    naming an unknown provider or model."""
    for name in models:
        if name not in MODELS:
            raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    for name in providers:
        if name not in DEFAULTS:
            raise ValueError(f"unknown provider {name!r}; known: {', '.join(PROVIDERS)}")
    chosen = {MODELS[m].provider: m for m in models}
    named = dict.fromkeys([*providers, *chosen]) or dict.fromkeys(PROVIDERS)
    return tuple(pricing(p, chosen.get(p)) for p in PROVIDERS if p in named)


DEFAULT_PRICINGS = pricings()


def cached_tokens(common_prefix_tokens: int) -> int:
    """Tokens an OpenAI prompt reads from the cache, given the tokens of the prefix it shares with
    the last one (`compaction_suite.benchmarks.cache.openai_use` is the rule; kept for callers)."""
    from .cache import openai_read

    return openai_read(common_prefix_tokens, MODELS[AGENT_MODEL].min_cached_tokens)

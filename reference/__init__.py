"""The minimal reference compactor: SPEC.md made executable.

Read in this order: ``rounds`` (what is kept together), ``triggers`` (when),
``strategies`` (what), ``summary`` and ``summarizer`` (the model call),
``compactor`` (the three put together, with events), ``presets`` (the seeds).
"""

from .compactor import Compactor
from .errors import HistoryError
from .events import CompactionEvent
from .rounds import Message, Round, call_in_flight, split_rounds
from .strategies import (
    Chain,
    DropSources,
    KeepLastMessages,
    MaskObservations,
    Strategy,
    StructuredSummarize,
    Summarize,
    TokenBudget,
)
from .summarizer import Summarizer, SummarizerError
from .tokens import CharsPerFour, ExactTokens, TokenLedger
from .triggers import (
    AnyOf,
    ContextFraction,
    IterationsOrTokens,
    MessageCount,
    ObservedTokenBudget,
    TokenThreshold,
)

__version__ = "0.1.0"

__all__ = [
    "AnyOf",
    "Chain",
    "CharsPerFour",
    "CompactionEvent",
    "Compactor",
    "ContextFraction",
    "DropSources",
    "ExactTokens",
    "HistoryError",
    "IterationsOrTokens",
    "KeepLastMessages",
    "MaskObservations",
    "Message",
    "MessageCount",
    "ObservedTokenBudget",
    "Round",
    "Strategy",
    "StructuredSummarize",
    "Summarize",
    "Summarizer",
    "SummarizerError",
    "TokenBudget",
    "TokenLedger",
    "TokenThreshold",
    "call_in_flight",
    "split_rounds",
]

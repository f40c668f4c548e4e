"""The minimal reference compactor: SPEC.md made executable.

Read in this order: ``rounds`` (what is kept together), ``triggers`` (when),
``strategies`` (what), ``extraction`` (the entity ids and task list seed 001
keeps), ``summary`` and ``summarizer`` (the model call),
``compactor`` (the three put together, with events), ``presets`` (the seeds);
then ``store`` (durable history) and ``points`` (the four compaction points).
"""

from .compactor import Compactor
from .errors import HistoryError
from .events import CompactionEvent
from .extraction import CODING_AGENT_TASK_LISTS, REPORT_PROGRESS, TODO_WRITE, UPDATE_PLAN, EntityRule, TaskListTool
from .points import DurableHistory, agent_loop
from .rounds import Message, Round, Rounds, call_in_flight, split_rounds
from .store import HistoryCompacted, MemoryStore, NotAStore, SQLiteStore, StoreConflict, StoredMessage, StoreError
from .strategies import (
    Chain,
    DropSources,
    KeepLastMessages,
    MaskAndSummarize,
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
    CacheBreakEven,
    ContextFraction,
    IterationsOrTokens,
    MessageCount,
    ObservedTokenBudget,
    TokenThreshold,
)

__version__ = "0.1.0"

__all__ = [
    "CODING_AGENT_TASK_LISTS",
    "REPORT_PROGRESS",
    "TODO_WRITE",
    "UPDATE_PLAN",
    "EntityRule",
    "MaskAndSummarize",
    "TaskListTool",
    "AnyOf",
    "CacheBreakEven",
    "Chain",
    "CharsPerFour",
    "CompactionEvent",
    "Compactor",
    "ContextFraction",
    "DropSources",
    "DurableHistory",
    "ExactTokens",
    "HistoryCompacted",
    "HistoryError",
    "IterationsOrTokens",
    "KeepLastMessages",
    "MaskObservations",
    "MemoryStore",
    "Message",
    "MessageCount",
    "NotAStore",
    "ObservedTokenBudget",
    "Round",
    "Rounds",
    "SQLiteStore",
    "StoreConflict",
    "StoreError",
    "StoredMessage",
    "Strategy",
    "StructuredSummarize",
    "Summarize",
    "Summarizer",
    "SummarizerError",
    "TokenBudget",
    "TokenLedger",
    "TokenThreshold",
    "agent_loop",
    "call_in_flight",
    "split_rounds",
]

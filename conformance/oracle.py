"""Judging helpers that hold in every wire format, and chat-completions' rules under their old names.

The rules of each format live in its own module (`conformance.formats.chat`,
`conformance.formats.responses`, `conformance.formats.anthropic`); what "kept verbatim" means
(`same`) and CORE-11's finding (`failed_summary`) are in `conformance.formats`. The
chat-completions names below are re-exported from `conformance.formats.chat`, so code written
against ``oracle.check_rounds_whole`` and its kin keeps working; new code imports them from there.
"""

from __future__ import annotations

import re

from compaction_suite.message import SYSTEM_ROLES
from compaction_suite.text import SUMMARY_PREFIX

from .formats import canonical, failed_summary, same
from .formats.chat import (
    ROLES,
    call_ids,
    chars4,
    check_calls_have_one_result,
    check_no_failed_summary,
    check_rounds_whole,
    check_summary_shape,
    check_system_kept,
    check_tool_results_have_calls,
    check_valid_messages,
    corresponds,
    expected_summary_shape,
    in_flight,
    is_summary,
    kept_indices,
    non_system_rounds,
    readable_text,
    rounds,
    said,
    text,
    where,
)
from .violation import Violation

__all__ = [
    "ROLES", "SUMMARY_PREFIX", "SYSTEM_ROLES", "Violation", "call_ids", "canonical", "chars4", "check_calls_have_one_result", "check_no_failed_summary",
    "check_rounds_whole", "check_summary_shape", "check_system_kept", "check_tool_results_have_calls", "check_valid_messages",
    "corresponds", "expected_summary_shape", "failed_summary", "in_flight", "is_summary", "kept_indices", "mentions",
    "non_system_rounds", "readable_text", "rounds", "said", "same", "text", "where",
]


def mentions(text: str, entity_id: str) -> bool:
    """Whether ``text`` names ``entity_id`` as a whole id (STRUCT-2, ENT-1): not inside a longer
    identifier, so an integer id 7 is not found in "17" nor ``ent-1`` in ``ent-12``."""
    return entity_id in text and re.search(rf"(?<![A-Za-z0-9_-]){re.escape(entity_id)}(?![A-Za-z0-9_-])", text) is not None

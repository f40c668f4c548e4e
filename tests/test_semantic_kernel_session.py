"""Semantic Kernel's stored history (``adapters/semantic_kernel.py``, ``history_session``): a reducer kept in a
file between turns, as SK's sample does (``store_chat_history_to_file`` / ``load_chat_history_from_file``),
judged by profile session (SPEC STORE-13..STORE-20).

microsoft/semantic-kernel#12513: ``ChatHistorySummarizationReducer.restore_chat_history`` validates the stored
``service`` as the abstract ``ChatCompletionClientBase``, so the reopened reducer's next ``reduce`` cannot ask
its summarizer (``NotImplementedError``, wrapped in ``ChatHistoryReducerException`` by ``fail_on_error``):
STORE-20, ``reopened-compaction-raised``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("semantic_kernel", reason="Semantic Kernel is not installed (pip install -e '.[semantic-kernel]')")

from checking import in_process

TARGET = "compaction_suite.adapters.semantic_kernel:history_session"
def _settings() -> SimpleNamespace:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0)  # never asked: nothing is reduced here
    return SimpleNamespace(model="gpt-4o", base_url="http://127.0.0.1:9/v1", api_key="k", summarizer_timeout=1.0, summary_prompt=None, async_client=client)
HISTORY = [{"role": "user", "content": f"question {n}"} if n % 2 == 0 else {"role": "assistant", "content": f"answer {n}"} for n in range(8)]


def _restored_service_class(tmp_path: Path) -> type:
    """The class of the service a reducer reopened from its file holds, through the adapter's own session."""
    from compaction_suite.adapters import semantic_kernel

    path = str(tmp_path / "history.json")
    semantic_kernel.history_session(_settings()).session(path).append(HISTORY)
    return type(semantic_kernel.history_session(_settings()).session(path)._history.service)


def test_the_reopened_reducer_fails_store_20_exactly_when_its_service_is_not_restored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """STORE-20 fails with the reducer's own error where the restore loses the service's class (every release
    up to 1.45.0), and holds where it keeps it: judged on SK's round trip, never on the adapter."""
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion

    monkeypatch.setenv("COMPACTION_ADAPTER_OPTIONS", '{"reducer": "summarization"}')
    lost = _restored_service_class(tmp_path) is not OpenAIChatCompletion
    checked = in_process(tmp_path, TARGET, profiles=("session",), clauses=("STORE-20",), fast=True)
    found = checked.clause("STORE-20")
    if lost:
        assert found["status"] == "fail" and found["reason_id"] == "reopened-compaction-raised", found
        assert "NotImplementedError" in found["reason"], found["reason"]
    else:
        assert found["status"] == "pass", found


def test_store_20_holds_where_the_restored_reducer_gets_its_service_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A double of the fix #12513 asks for (the reopened reducer holds the service it was stored with): the
    session then compacts as the one that stayed open, so STORE-20 judges the restore, not the summary."""
    from compaction_suite.adapters import semantic_kernel

    opened = semantic_kernel._Session.__init__

    def with_service(self, cls, fresh, path):
        opened(self, cls, fresh, path)
        self._history.service = fresh().service

    monkeypatch.setattr(semantic_kernel._Session, "__init__", with_service)
    monkeypatch.setenv("COMPACTION_ADAPTER_OPTIONS", '{"reducer": "summarization"}')
    checked = in_process(tmp_path, TARGET, profiles=("session",), clauses=("STORE-20", "STORE-15"), fast=True)
    assert checked.clause("STORE-20")["status"] == "pass", checked.clause("STORE-20")
    assert checked.clause("STORE-15")["status"] == "pass", checked.clause("STORE-15")


def test_the_truncation_reducer_reopens_and_compacts_as_it_did(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No summarizer to lose: the truncation reducer's stored history compacts alike after reopening."""
    monkeypatch.setenv("COMPACTION_ADAPTER_OPTIONS", '{"reducer": "truncation"}')
    checked = in_process(tmp_path, TARGET, profiles=("session",), clauses=("STORE-20", "STORE-15"), fast=True)
    assert checked.clause("STORE-20")["status"] == "pass", checked.clause("STORE-20")
    assert checked.clause("STORE-15")["status"] == "pass", checked.clause("STORE-15")

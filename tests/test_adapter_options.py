"""An adapter's options (SPEC CLI-2, Decision "an adapter option"): a key it does not know, or a
value of another type than its default's, is refused in one line when the factory starts, so a
typo in ``$COMPACTION_ADAPTER_OPTIONS`` is a contract error (exit 2), never the framework's
findings. Standard library only, but for the one command run through a framework's adapter."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from compaction_suite.adapters._common import OPTIONS_ENV, options, wrong_type
from compaction_suite.cli import main

DEFAULTS = {
    "max_tokens": 1024,
    "ratio": 0.5,
    "allow_partial": False,
    "start_on": ["human"],
    "trigger": {"tokens": 10},
    "counter": "approximate",
    "keep": None,
}


@pytest.mark.parametrize(
    ("key", "value"),
    [("max_tokens", "1024"), ("max_tokens", 10.5), ("max_tokens", True), ("ratio", "half"), ("ratio", False),
     ("allow_partial", 1), ("allow_partial", [True]), ("start_on", "human"), ("trigger", [10])],
)  # fmt: skip
def test_a_value_of_another_type_is_refused_naming_the_option(key, value, monkeypatch):
    monkeypatch.delenv(OPTIONS_ENV, raising=False)
    with pytest.raises(ValueError, match=rf"^adapter option {key}={re.escape(json.dumps(value))}: expected "):
        options(DEFAULTS, {key: value})


@pytest.mark.parametrize(
    ("key", "value"),
    [("max_tokens", 2000), ("max_tokens", None), ("ratio", 1), ("ratio", 0.25), ("allow_partial", True), ("allow_partial", "responses"),
     ("start_on", ["human", "tool"]), ("start_on", ("human",)), ("trigger", {"messages": 4}),
     ("counter", "len"), ("counter", 4000), ("keep", 3), ("keep", "all")],
)  # fmt: skip
def test_a_value_of_its_defaults_type_or_null_is_taken(key, value, monkeypatch):
    monkeypatch.delenv(OPTIONS_ENV, raising=False)
    assert options(DEFAULTS, {key: value})[key] == value


def test_the_environments_options_are_checked_as_the_given_ones(monkeypatch):
    monkeypatch.setenv(OPTIONS_ENV, json.dumps({"max_tokens": "x"}))
    with pytest.raises(ValueError, match='adapter option max_tokens="x": expected an integer like its default 1024'):
        options(DEFAULTS)


def test_a_text_default_takes_any_value_since_some_are_markers():
    assert wrong_type("factory", 4000) is None and wrong_type("factory", "factory") is None


def test_check_refuses_an_adapter_option_of_the_wrong_type_in_one_line(tmp_path, monkeypatch):
    pytest.importorskip("langchain_core")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["check", "compaction_suite.adapters.langchain:trim_messages", "--fast", "--clause", "CORE-1"],
        env={OPTIONS_ENV: json.dumps({"max_tokens": "x"})},
    )  # fmt: skip
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and 'adapter option max_tokens="x": expected an integer' in lines[0], lines
    assert list(tmp_path.iterdir()) == []

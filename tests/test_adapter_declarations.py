"""Sanity tests of what the LangChain, Pydantic AI, OpenAI Agents SDK and Strands adapters declare as data
(agreed interfaces 3 and 4) and of ``adapters/reported_bugs.json`` (cases as data, linted like
JSON-Schema-Test-Suite lints its cases). Standard library only: no framework needed."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

MODULES = ("langchain", "deepagents", "pydantic_ai", "openai_agents", "strands")
BUGS = Path(__file__).resolve().parents[1] / "adapters" / "reported_bugs.json"
DOCUMENTED_KEYS = {"factory", "clause", "options", "quote", "source"}
FRAMEWORK_NAMES = ("LangChain", "Pydantic AI", "OpenAI Agents SDK", "Strands Agents", "Semantic Kernel", "Microsoft Agent Framework", "AutoGen")


@pytest.mark.parametrize("name", MODULES)
def test_supported_is_a_specifier_per_distribution(name):
    from packaging.specifiers import SpecifierSet

    module = importlib.import_module(f"compaction_suite.adapters.{name}")
    assert module.SUPPORTED and set(module.SUPPORTED) <= set(module.DISTRIBUTIONS) | {"langchain-openai"}
    for distribution, spec in module.SUPPORTED.items():
        SpecifierSet(spec)  # raises on a malformed specifier
        assert distribution in module.DISTRIBUTIONS, distribution


@pytest.mark.parametrize("name", MODULES)
def test_documented_entries_name_a_factory_a_clause_and_a_source(name):
    from compaction_suite.conformance.clauses import clauses

    module = importlib.import_module(f"compaction_suite.adapters.{name}")
    known = set(clauses())
    for entry in module.DOCUMENTED:
        assert DOCUMENTED_KEYS <= set(entry) <= DOCUMENTED_KEYS | {"reason"}, entry
        assert callable(getattr(module, entry["factory"], None)), entry["factory"]
        assert entry["clause"] in known and isinstance(entry["options"], dict)
        assert entry["quote"].strip() and entry["source"].strip()


@pytest.mark.parametrize("name", MODULES)
def test_every_configuration_names_a_factory_and_known_options(name):
    module = importlib.import_module(f"compaction_suite.adapters.{name}")
    for factory, options in module.CONFIGURATIONS:
        assert callable(getattr(module, factory)), factory
        assert isinstance(options, dict)


def test_reported_bugs_are_well_formed():
    data = json.loads(BUGS.read_text(encoding="utf-8"))
    ids = [bug["id"] for bug in data["bugs"]]
    assert len(ids) == len(set(ids))
    for bug in data["bugs"]:
        assert bug["url"].startswith("https://github.com/"), bug["id"]
        assert bug["harm"] in ("rejected", "loss", "crash", "policy"), bug["id"]
        assert bug["framework"].split(" (")[0] in FRAMEWORK_NAMES, bug["id"]
        assert isinstance(bug["reported"], dict) and bug["reported"], bug["id"]
        assert bug["fixed"] is None or isinstance(bug["fixed"], dict), bug["id"]
        for when in ("before", "after"):
            verdict = bug[when]
            assert verdict["caught"] in (True, False, "pending", "partial", "not run", "see verified"), (bug["id"], when)
            assert verdict["why"].strip(), (bug["id"], when)
            assert verdict["caught"] is True or verdict["why"], (bug["id"], when)

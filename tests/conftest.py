"""Shared fixtures: the summarizer test double over real HTTP, and official openai clients for it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import openai
import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

# These machines are shared and noisy: generation speed is not what the tests are about.
settings.register_profile("project", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("project")

from compaction_suite.conformance.summarizer_server import SummarizerServer  # noqa: E402 - after the profile, so every test module sees it


@pytest.fixture(scope="session")
def summarizer_server() -> Iterator[SummarizerServer]:
    """One test-double server on 127.0.0.1 for the whole session."""
    with SummarizerServer() as running:
        yield running


@pytest.fixture
def server(summarizer_server: SummarizerServer) -> Iterator[SummarizerServer]:
    """The session's server, back in deterministic mode with nothing recorded."""
    summarizer_server.reset()
    yield summarizer_server
    assert summarizer_server.errors == [], "the test double itself failed"


@pytest.fixture
def client(server: SummarizerServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=2.0) as made:
        yield made


@pytest.fixture
def async_client(server: SummarizerServer) -> Iterator[openai.AsyncOpenAI]:
    made = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=2.0)
    yield made
    asyncio.run(made.close())

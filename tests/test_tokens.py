"""Token counting offline (SPEC TOK-1..TOK-4): compaction_suite/bpe.py, compaction_suite/text.py and reference/tokens.py."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.load
from hypothesis import given
from hypothesis import strategies as st
from tiktoken_ext import openai_public

from compaction_suite import bpe
from compaction_suite.reference.rounds import Message
from compaction_suite.reference.tokens import (
    PER_MESSAGE,
    REPLY_PRIMING,
    CharsPerFour,
    Estimator,
    ExactTokens,
    TokenLedger,
    message_text,
)

from message_builders import call

OFFICIAL_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
# "hello world": cl100k_base [15339, 1917] and o200k_base [24912, 2375] are the
# ids OpenAI's tokenizers give (quoted alike by many independent test suites);
# n_vocab counts the ranks plus the special tokens tiktoken adds.
HELLO_WORLD = {"o200k_base": [24912, 2375], "cl100k_base": [15339, 1917]}
N_VOCAB = {"o200k_base": 200_019, "cl100k_base": 100_277}


def _no_network(blobpath: str) -> bytes:
    raise AssertionError(f"tiktoken tried to fetch {blobpath}")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh tiktoken cache, and any attempt to download fails the test."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.load, "read_file", _no_network)
    return tmp_path


@pytest.fixture(scope="session")
def exact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ExactTokens]]:
    """Both exact estimators, their data installed offline into a temporary cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path_factory.mktemp("tiktoken")))
        patch.setattr(tiktoken.load, "read_file", _no_network)
        yield {name: ExactTokens(name) for name in OFFICIAL_SHA256}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- bpe.py: TOK-3 -----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OFFICIAL_SHA256))
def test_install_writes_the_official_file_that_tiktoken_reads(name: str, cache: Path) -> None:
    path = bpe.install(name)
    assert path.parent == cache
    assert _sha256(path) == OFFICIAL_SHA256[name]
    # tiktoken's own constructor reads our cache file and checks its hash again.
    enc = tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
    assert enc.encode("hello world") == HELLO_WORLD[name]
    assert enc.n_vocab == N_VOCAB[name]
    text = "Compaction keeps rounds whole. 🙂 Ünïcödé, 数字 12345"
    assert enc.decode(enc.encode(text)) == text


def test_encoding_is_cached_per_process(exact: dict[str, ExactTokens]) -> None:
    enc = bpe.encoding("cl100k_base")
    assert enc is bpe.encoding("cl100k_base")
    assert enc.name == "cl100k_base"
    assert enc.encode("hello world") == HELLO_WORLD["cl100k_base"]


def test_corrupted_cache_file_is_replaced(cache: Path) -> None:
    path = cache / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    path.write_bytes(b"not a rank file\n")
    assert bpe.install("cl100k_base") == path
    assert _sha256(path) == OFFICIAL_SHA256["cl100k_base"]
    assert sorted(p.name for p in cache.iterdir()) == [path.name]  # no temporary left


def test_a_good_cache_file_is_left_alone(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = bpe.install("cl100k_base")
    stamp = path.stat().st_mtime_ns
    monkeypatch.setattr(bpe, "_vocab", lambda name, vocab: pytest.fail("source read again"))
    assert bpe.install("cl100k_base") == path
    assert path.stat().st_mtime_ns == stamp


def _source_bytes() -> bytes:
    return bpe._vocab("cl100k_base", bpe._SOURCES["cl100k_base"].vocab)


def test_tampered_source_raises_and_writes_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tampered = bytearray(_source_bytes())
    tampered[-1] ^= 1  # top byte of the last rank
    monkeypatch.setattr(bpe, "_vocab", lambda name, vocab: bytes(tampered))
    with pytest.raises(bpe.EncodingDataError, match=r"cl100k_base: .*sha256"):
        bpe.install("cl100k_base")
    assert list(cache.iterdir()) == []


def test_truncated_source_raises(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    truncated = _source_bytes()[:-3]
    monkeypatch.setattr(bpe, "_vocab", lambda name, vocab: truncated)
    with pytest.raises(bpe.EncodingDataError, match=r"cl100k_base: .*truncated"):
        bpe.install("cl100k_base")


def test_missing_data_raises(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = bpe._SOURCES["cl100k_base"]._replace(vocab="missing.vocab")
    monkeypatch.setitem(bpe._SOURCES, "cl100k_base", source)
    with pytest.raises(bpe.EncodingDataError, match=r"cl100k_base: .*missing\.vocab"):
        bpe.install("cl100k_base")


def test_unknown_encoding_raises(cache: Path) -> None:
    with pytest.raises(bpe.EncodingDataError, match="r50k_base: no offline data; known: cl100k_base, o200k_base"):
        bpe.install("r50k_base")


def test_disabled_cache_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    bpe.encoding.cache_clear()
    with pytest.raises(bpe.EncodingDataError, match="o200k_base: TIKTOKEN_CACHE_DIR is empty"):
        bpe.encoding("o200k_base")


def test_cache_dir_resolution_follows_tiktoken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert bpe.cache_dir("x") == tmp_path / "data-gym-cache"
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "gym"))
    assert bpe.cache_dir("x") == tmp_path / "gym"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tik"))
    assert bpe.cache_dir("x") == tmp_path / "tik"


def test_install_does_not_import_quicktok(tmp_path: Path) -> None:
    code = "import sys; from compaction_suite import bpe; bpe.install('cl100k_base'); assert 'quicktok' not in sys.modules"
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


# --- tokens.py: chars / 4 (TOK-1) -----------------------------------------------


def test_chars_per_four_on_text() -> None:
    history: list[Message] = [
        {"role": "system", "content": "abcdefgh"},
        {"role": "user", "content": "abc"},
        {"role": "assistant", "content": "é🙂"},  # two code points
    ]
    assert CharsPerFour().estimate(history) == (8 + 3 + 2) // 4
    assert CharsPerFour().estimate([]) == 0


def test_chars_per_four_on_content_parts() -> None:
    message: Message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "abcd"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 1000}},
            {"type": "text", "text": "efghij"},
        ],
    }
    assert list(message_text(message)) == ["abcd", "efghij"]
    assert CharsPerFour().estimate([message]) == 10 // 4


def test_chars_per_four_on_tool_calls_name_and_refusal() -> None:
    history: list[Message] = [
        {"role": "user", "name": "ann", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "read", '{"p": 1}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "result!!"},
        {"role": "assistant", "content": None, "refusal": "no"},
    ]
    assert [list(message_text(m)) for m in history] == [
        ["hi", "ann"],
        ["read", '{"p": 1}'],
        ["result!!"],
        ["no"],
    ]
    assert CharsPerFour().estimate(history) == (5 + 12 + 8 + 2) // 4


# --- tokens.py: exact tokens (TOK-2) --------------------------------------------


@pytest.mark.parametrize("name", sorted(OFFICIAL_SHA256))
def test_exact_overhead_arithmetic(name: str, exact: dict[str, ExactTokens]) -> None:
    counter = exact[name]
    assert all(counter.tokens(role) == 1 for role in ("system", "user", "assistant", "tool"))
    hello: Message = {"role": "user", "content": "hello world"}
    assert counter.units(hello) == PER_MESSAGE + 1 + 2 == 6
    assert counter.estimate([hello]) == 6 + REPLY_PRIMING == 9
    named: Message = {"role": "user", "name": "bob", "content": "hello world"}
    assert counter.units(named) == 6 + 1 + counter.tokens("bob")
    assert counter.estimate([hello, named]) == 6 + counter.units(named) + 3
    assert counter.estimate([]) == 0


def test_exact_counts_tool_calls_and_parts(exact: dict[str, ExactTokens]) -> None:
    counter = exact["o200k_base"]
    calling: Message = {"role": "assistant", "content": None, "tool_calls": [call("c1", "read", '{"path": "a.py"}')]}
    assert counter.units(calling) == PER_MESSAGE + 1 + counter.tokens("read") + counter.tokens('{"path": "a.py"}')
    parts: Message = {"role": "user", "content": [{"type": "text", "text": "hello world"}]}
    assert counter.units(parts) == 6


def test_special_token_text_is_plain_text(exact: dict[str, ExactTokens]) -> None:
    counter = exact["cl100k_base"]
    enc = bpe.encoding("cl100k_base")
    assert counter.tokens("<|endoftext|>") == len(enc.encode_ordinary("<|endoftext|>")) > 1


# --- tokens.py: the ledger (TOK-4) -------------------------------------------------


def _message(draw: st.DrawFn) -> Message:
    text = st.text(max_size=12)
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    message: dict[str, Any] = {"role": role, "content": draw(text)}
    if role == "user" and draw(st.booleans()):
        message["name"] = draw(text)
    if role == "assistant" and draw(st.booleans()):
        message["tool_calls"] = [call("c", draw(text), draw(text))]
    if role == "tool":
        message["tool_call_id"] = "c"
    return message


messages = st.lists(st.composite(_message)(), max_size=4)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), messages),  # extends the same list
        st.tuples(st.just("concat"), messages),  # a new list with the old one as prefix
        st.tuples(st.just("replace"), messages),  # a new history, new messages
        st.tuples(st.just("truncate"), st.integers(0, 12)),  # a prefix: same messages
        st.tuples(st.just("compact"), st.integers(0, 12)),  # a summary, then a shorter tail
        st.tuples(st.just("update"), st.none()),
    ),
    max_size=25,
)


def _apply(history: list[Message], op: str, arg: Any) -> list[Message]:
    if op == "append":
        history.extend(arg)
        return history
    if op == "concat":
        return history + arg
    if op == "replace":
        return list(arg)
    if op == "truncate":
        return history[:arg]
    if op == "compact" and len(history) >= 2:  # folds two or more messages into one
        keep = arg % (len(history) - 1)
        return [{"role": "user", "content": f"summary {arg}"}, *history[len(history) - keep :]]
    return history


@pytest.mark.parametrize("name", ["chars/4", "o200k_base"])
@given(ops=operations)
def test_ledger_equals_full_recount(name: str, ops: list[tuple[str, Any]], exact: dict[str, ExactTokens]) -> None:
    estimator: Estimator = CharsPerFour() if name == "chars/4" else exact[name]
    ledger = TokenLedger(estimator)
    history: list[Message] = []
    for op, arg in [*ops, ("update", None)]:
        history = _apply(history, op, arg)
        if op == "update":
            assert ledger.update(history) == estimator.estimate(history)


class Spy(Estimator):
    """Wraps an estimator and records every message it is asked to count."""

    def __init__(self, inner: Estimator) -> None:
        self.inner = inner
        self.name = inner.name
        self.counted: list[Message] = []

    def units(self, message: Message) -> int:
        self.counted.append(message)
        return self.inner.units(message)

    def total(self, units: int, messages: int) -> int:
        return self.inner.total(units, messages)


def _said(*texts: str) -> list[Message]:
    return [{"role": "user", "content": text} for text in texts]


def test_ledger_counts_only_new_messages() -> None:
    spy = Spy(CharsPerFour())
    ledger = TokenLedger(spy)
    history = _said("one", "two", "three")
    assert ledger.update(history) == 11 // 4
    assert spy.counted == history

    def new_counts(messages: list[Message]) -> list[Message]:
        spy.counted.clear()
        assert ledger.update(messages) == CharsPerFour().estimate(messages)
        return spy.counted

    added = _said("four", "five")
    history.extend(added)
    assert new_counts(history) == added
    assert new_counts(history) == []  # nothing new
    longer = history + _said("six")
    assert new_counts(longer) == longer[-1:]  # a new list, same prefix
    compacted = [*_said("summary"), *longer[-2:]]
    assert [id(m) for m in new_counts(compacted)] == [id(m) for m in compacted]  # recounted
    ledger.reset()
    assert len(new_counts(compacted)) == 3
    assert new_counts([]) == []

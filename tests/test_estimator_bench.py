"""The estimator benchmark: its corpus, its error arithmetic, and the fast estimator.

No timing is asserted here: the machine is shared. Accuracy is: it is a property of the
estimator against exact tiktoken counts on fixed documents, not of the machine's load.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction_suite.benchmarks import corpus, estimators
from compaction_suite.reference.fast_estimate import FEATURES, SCALE, WEIGHTS, ByteClassTokens, features
from compaction_suite.reference.tokens import PER_MESSAGE, REPLY_PRIMING, ExactTokens, TokenLedger

HELD_OUT_DOCS = 30
MAE_BOUND = {
    # The fast estimator's mean absolute error against o200k_base on HELD_OUT_DOCS test-split
    # documents per class, with some margin over what benchmarks/results/estimators.md
    # measures on 200. The target is 3% on every class; it is met only where these
    # say 0.03 (see estimators.md): these bounds guard against regressions.
    "prose": 0.07,
    "code": 0.06,
    "json-pretty": 0.03,
    "json-minified": 0.03,
    "logs": 0.04,
    "japanese": 0.045,
    "chinese": 0.11,
    "korean": 0.07,
    "russian": 0.08,
    "arabic": 0.07,
    "hindi": 0.07,
    "base64": 0.065,
    "hex": 0.03,
    "messages": 0.075,
}


# --- corpus ------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", corpus.CLASSES)
def test_class_has_documents_in_both_splits_and_is_deterministic(cls: str) -> None:
    for split in corpus.SPLITS:
        first = corpus.documents(cls, 4, split=split, seed=1)
        again = corpus.documents(cls, 4, split=split, seed=1)
        assert len(first) == 4
        assert [(d.source, d.text, d.messages) for d in first] == [(d.source, d.text, d.messages) for d in again]
        for doc in first:
            assert doc.cls == cls and doc.split == split
            if cls == "messages":
                assert len(doc.messages) == 1 and doc.messages[0]["role"]
            else:
                assert 0 < len(doc.text) <= corpus.MAX_CHARS


@pytest.mark.parametrize("cls", corpus.CLASSES)
def test_splits_share_no_unit(cls: str) -> None:
    found = corpus.units(cls)
    train = {u.source for u in found if u.split == "train"}
    test = {u.source for u in found if u.split == "test"}
    assert train and test and not train & test
    assert len(corpus.fingerprint(cls)) == 16


def test_documents_differ_by_seed_and_split() -> None:
    assert corpus.documents("code", 3, seed=0)[0].text != corpus.documents("code", 3, seed=1)[0].text
    assert {d.source.split("@")[0] for d in corpus.documents("code", 5, split="train")}.isdisjoint(
        d.source.split("@")[0] for d in corpus.documents("code", 5, split="test")
    )


def test_read_mo_reads_a_catalog(tmp_path: Path) -> None:
    # A two-entry catalog written by hand in the GNU .mo layout: header entry, then one message.
    entries = [(b"", b"Content-Type: text/plain; charset=UTF-8\n"), (b"file", "ファイル".encode())]
    count = len(entries)
    originals, translations = 28, 28 + 8 * count
    data_at = translations + 8 * count
    strings, tables = b"", [b"", b""]
    for column in (0, 1):
        for entry in entries:
            tables[column] += len(entry[column]).to_bytes(4, "little") + (data_at + len(strings)).to_bytes(4, "little")
            strings += entry[column] + b"\0"
    header = b"".join(n.to_bytes(4, "little") for n in (0x950412DE, 0, count, originals, translations, 0, 0))
    path = tmp_path / "x.mo"
    path.write_bytes(header + tables[0] + tables[1] + strings)
    assert corpus.read_mo(path) == [("file", "ファイル")]


# --- error arithmetic --------------------------------------------------------------------------


def test_relative_error_sign_and_size() -> None:
    assert estimators.relative_error(110, 100) == pytest.approx(0.10)
    assert estimators.relative_error(75, 100) == pytest.approx(-0.25)
    assert estimators.relative_error(100, 100) == 0
    with pytest.raises(ValueError):
        estimators.relative_error(5, 0)


def test_summarize_on_a_hand_example() -> None:
    got = estimators.summarize([0.1, -0.2, 0.05, 0.0])
    assert got["mean"] == pytest.approx(-0.0125)
    assert got["mae"] == pytest.approx(0.0875)
    assert got["worst"] == pytest.approx(-0.2)
    # sorted [-0.2, 0, 0.05, 0.1]; p5 at index 0.15, p95 at index 2.85 (linear interpolation)
    assert got["p5"] == pytest.approx(-0.2 + 0.2 * 0.15)
    assert got["p95"] == pytest.approx(0.05 + 0.05 * 0.85)
    assert got["within5"] == pytest.approx(0.5)
    assert got["n"] == 4


def test_percentile_matches_numpy() -> None:
    numpy = pytest.importorskip("numpy")
    values = [3.0, -1.0, 7.5, 0.0, 2.0, 2.0, 11.0]
    for q in (0, 5, 50, 95, 100):
        assert estimators.percentile(values, q) == pytest.approx(float(numpy.percentile(values, q)))


# --- the fast estimator ------------------------------------------------------------------------


@pytest.mark.parametrize("encoding_name", list(WEIGHTS))
def test_fast_estimator_follows_the_estimator_protocol(encoding_name: str) -> None:
    fast = ByteClassTokens(encoding_name)
    history = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "List the files.", "name": "ana"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"path": "/tmp"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nb.json\n"},
    ]
    assert isinstance(fast.name, str) and encoding_name in fast.name
    units = [fast.units(m) for m in history]
    assert all(isinstance(u, int) and u > 0 for u in units)
    assert fast.estimate(history) == fast.total(sum(units), len(history))
    assert fast.estimate([]) == 0
    # The chat overhead is counted as ExactTokens counts it (SPEC TOK-2).
    assert fast.estimate([{"role": "user", "content": ""}]) == PER_MESSAGE + 1 + REPLY_PRIMING


def test_fast_estimator_works_with_token_ledger() -> None:
    fast = ByteClassTokens()
    ledger = TokenLedger(fast)
    history: list[dict] = []
    for index, doc in enumerate(corpus.documents("messages", 12, split="test")):
        history.append(doc.messages[0])
        assert ledger.update(history) == fast.estimate(history), index
    history[3] = {"role": "user", "content": "replaced"}
    ledger.reset()
    assert ledger.update(history) == fast.estimate(history)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_fast_tokens_is_the_weighted_feature_count(text: str) -> None:
    fast = ByteClassTokens()
    expected = sum(round(fast.weights[f] * SCALE) / SCALE * n if len(f) == 1 else fast.weights[f] * n
                   for f, n in zip(FEATURES, features(text)))
    assert fast.tokens(text) == pytest.approx(max(expected, 0.0), abs=1e-9)


def test_adler_chunks_stay_exact_on_long_heavy_text() -> None:
    fast = ByteClassTokens()
    text = "！" * 60_000 + "0" * 70_000  # heaviest byte classes, far past one adler32 chunk
    counts = dict(zip(FEATURES, features(text)))
    table_part = sum(round(fast.weights[c] * SCALE) * counts[c] for c in FEATURES if len(c) == 1) / SCALE
    rest = sum(fast.weights[f] * counts[f] for f in FEATURES if len(f) > 1)
    assert fast.tokens(text) == pytest.approx(table_part + rest, abs=1e-6)


def test_fast_estimator_rejects_missing_or_out_of_range_weights() -> None:
    with pytest.raises(ValueError):
        ByteClassTokens("p50k_base")
    with pytest.raises(ValueError):
        ByteClassTokens("o200k_base", weights={"l": 5.0})


@pytest.mark.parametrize("cls", corpus.CLASSES)
def test_fast_estimator_accuracy_on_held_out_documents(cls: str) -> None:
    """MAE against exact o200k_base counts on test-split documents: an accuracy property."""
    exact, fast, chars = (estimators.counters("o200k_base")[name] for name in ("tiktoken", "byte-classes:o200k_base", "chars/4"))
    docs = [d for d in corpus.documents(cls, HELD_OUT_DOCS, split="test") if exact(d) > 0]
    mae = estimators.summarize([estimators.relative_error(fast(d), exact(d)) for d in docs])["mae"]
    chars_mae = estimators.summarize([estimators.relative_error(chars(d), exact(d)) for d in docs])["mae"]
    assert mae <= MAE_BOUND[cls], f"{cls}: MAE {mae:.1%} > {MAE_BOUND[cls]:.1%}"
    assert mae < chars_mae


def test_messages_compare_with_exact_tokens_overhead_included() -> None:
    count = estimators.counters("o200k_base")
    doc = corpus.documents("messages", 1, split="test")[0]
    assert count["tiktoken"](doc) == ExactTokens("o200k_base").estimate(list(doc.messages))


# --- the whole benchmark, tiny -----------------------------------------------------------------


def test_run_writes_json_markdown_and_png(tmp_path: Path) -> None:
    results = estimators.run(tmp_path, docs_per_class=2, progress=False)
    saved = json.loads((tmp_path / "estimators.json").read_text(encoding="utf-8"))
    assert set(saved["encodings"]) == set(estimators.ENCODINGS)
    for name in estimators.ENCODINGS:
        assert set(saved["encodings"][name]["classes"]) == set(corpus.CLASSES)
        row = saved["encodings"][name]["classes"]["prose"]["estimators"]["chars/4"]
        assert {"mean", "p5", "p95", "worst", "mae", "mb_s", "speedup"} <= set(row)
    assert "verdict" in saved and saved["verdict"]["claim"] == estimators.CLAIM
    markdown = (tmp_path / "estimators.md").read_text(encoding="utf-8")
    assert "## o200k_base" in markdown and "## cl100k_base" in markdown
    assert (tmp_path / "estimator-error.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert results["docs_per_class"] == 2

"""The estimator benchmark: its corpus, its error arithmetic, and its counters.

No timing is asserted here: the machine is shared.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction_suite.benchmarks import corpus, estimators
from compaction_suite.reference.tokens import ExactTokens

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


# --- the counters --------------------------------------------------------------------------------


def test_messages_compare_with_exact_tokens_overhead_included() -> None:
    count = estimators.counters("o200k_base")
    doc = corpus.documents("messages", 1, split="test")[0]
    assert count["exact"](doc) == count["tiktoken"](doc) == ExactTokens("o200k_base").estimate(list(doc.messages))


# --- the whole benchmark, tiny -----------------------------------------------------------------


def test_run_writes_json_markdown_and_png(tmp_path: Path) -> None:
    results = estimators.run(tmp_path, docs_per_class=2, progress=False)
    saved = json.loads((tmp_path / "estimators.json").read_text(encoding="utf-8"))
    assert set(saved["encodings"]) == set(estimators.ENCODINGS)
    for name in estimators.ENCODINGS:
        assert set(saved["encodings"][name]["classes"]) == set(corpus.CLASSES)
        row = saved["encodings"][name]["classes"]["prose"]["estimators"]["chars/4"]
        assert {"mean", "p5", "p95", "worst", "mae", "mb_s", "speedup", "vs_exact"} <= set(row)
        assert saved["encodings"][name]["classes"]["prose"]["tiktoken_disagrees"] == 0
    assert "verdict" in saved and saved["verdict"]["claim"] == estimators.CLAIM
    markdown = (tmp_path / "estimators.md").read_text(encoding="utf-8")
    assert "## o200k_base" in markdown and "## cl100k_base" in markdown
    assert "| prose | quicktok (exact) |" in markdown and "earns its place" in markdown
    assert (tmp_path / "estimator-error.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert results["docs_per_class"] == 2

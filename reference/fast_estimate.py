"""A fast token estimate that knows scripts, digits and base64 apart (an `Estimator`).

chars/4 (TOK-1) charges every character a quarter token. Real BPE counts depend on
what the characters are: an English word is about one token, a CJK character more than
half a token, a digit a third, a Cyrillic word two or three, base64 about one token per
two characters. `ByteClassTokens` estimates

    tokens(text) = sum of a weight per UTF-8 byte class            (see BYTE_CLASSES)
                 + a weight per lower-to-upper case change          ("lu": base64, camelCase)
                 + a weight per run of digits                       ("digit runs": numbers, hex)
                 + a weight per run of ASCII punctuation            ("punct runs": JSON, code)
                 + a weight per "AAAA" and per four spaces          (zero bytes in base64, indentation)

with weights fitted per encoding on the ``train`` split of ``compaction_suite.benchmarks.corpus`` by
``compaction_suite.benchmarks.estimators.calibrate`` and judged there on the held-out ``test`` split. It
costs a few C-speed passes over the text's bytes and no Python loop per character:

* the byte classes' weights, scaled to integers, are put in a `bytes.translate` table, so
  one ``translate`` gives every byte its weight, and ``zlib.adler32`` adds the weights up
  (its low half is 1 + the sum of the bytes modulo 65521, exact for chunks short enough
  that the sum stays below 65521);
* another ``translate`` gives every byte a one-letter class, and ``bytes.count(b"lu")``
  counts the case changes; for runs, a ``translate`` keeps digits (or punctuation) and
  turns every other byte into ``.``, and ``bytes.count(b"d.")`` counts where runs end;
  ``str.count`` counts the two patterns.

A history's estimate adds the chat overhead of SPEC TOK-2 as `ExactTokens` does: 3 tokens
per message, 1 for the role, 1 for a name, and 3 priming the reply. Units are
thousandths of a token, so a `TokenLedger` sum does not pile up rounding.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any, cast

from .rounds import Message
from .tokens import PER_MESSAGE, PER_NAME, REPLY_PRIMING, Estimator, message_text

ROLE_TOKENS = 1
"""``system``, ``developer``, ``user``, ``assistant`` and ``tool`` are one token each in both encodings."""
MILLI = 1000
"""Units per token."""
SCALE = 128
"""Byte weights are stored as integers in 1/SCALE token (at most 255: under two tokens per byte)."""


def _byte_class(byte: int) -> str:
    """The one-letter class of a UTF-8 byte."""
    char = chr(byte)
    if byte < 0x80:
        if "a" <= char <= "z":
            return "l"  # lower-case ASCII letter
        if "A" <= char <= "Z":
            return "u"  # upper-case ASCII letter
        if "0" <= char <= "9":
            return "d"  # digit
        if char == " ":
            return "s"
        if char == "\n":
            return "n"
        return "t" if byte < 0x20 or byte == 0x7F else "p"  # other control / punctuation
    if byte < 0xC0:
        return "c"  # continuation byte of a multi-byte character
    for last, cls in ((0xCF, "2"), (0xD4, "y"), (0xDF, "a"), (0xE0, "i"), (0xE2, "g"), (0xE3, "k"), (0xE9, "h"), (0xED, "o"), (0xEF, "f")):
        if byte <= last:
            return cls
    return "4"


BYTE_CLASSES = {
    "l": "a-z",
    "u": "A-Z",
    "d": "0-9",
    "s": "space",
    "n": "newline",
    "t": "other ASCII control characters (tab, CR, ...)",
    "p": "ASCII punctuation and symbols",
    "c": "UTF-8 continuation bytes",
    "2": "lead byte of U+0080-03FF: Latin-1, Latin Extended, IPA, Greek",
    "y": "lead byte of U+0400-053F: Cyrillic",
    "a": "lead byte of U+0540-07FF: Armenian, Hebrew, Arabic, Syriac, Thaana, N'Ko",
    "i": "lead byte of U+0800-0FFF: Devanagari and the other Indic scripts, Thai, Lao, Tibetan",
    "g": "lead byte of U+1000-2FFF: Georgian, Hangul Jamo, Latin Extended Additional, general punctuation, symbols",
    "k": "lead byte of U+3000-3FFF: CJK symbols and punctuation, Hiragana, Katakana",
    "h": "lead byte of U+4000-9FFF: CJK unified ideographs (Han)",
    "o": "lead byte of U+A000-DFFF: Hangul syllables, Yi, ...",
    "f": "lead byte of U+E000-FFFF: private use, CJK compatibility, full-width forms",
    "4": "lead byte of a 4-byte character: emoji, rare CJK",
}
PAIRS = ("lu",)
"""Class pairs counted."""
RUNS = {"digit runs": "d", "punct runs": "p", "word runs": "w"}
"""Runs of a class counted: the number of places where one starts."""
PATTERNS = ("AAAA", "    ")
"""Substrings counted (non-overlapping) in the text."""
FEATURES = (*BYTE_CLASSES, *PAIRS, *RUNS, *PATTERNS)
"""The order of `features`' counts and of a weight vector."""

CLASS_TABLE = bytes(ord(_byte_class(byte)) for byte in range(256))
RUN_TABLES = {name: bytes(ord(cls) if _byte_class(byte) == cls or (cls == "w" and _byte_class(byte) in "lu") else ord(".") for byte in range(256)) for name, cls in RUNS.items()}


def _runs(data: bytes, name: str) -> int:
    """How many runs of the class of ``RUNS[name]`` ``data`` holds: where one ends.

    Counting ends (``b"d."``) rather than starts (``b".d"``) is twice as fast: `bytes.count`
    skips ahead on the pattern's first byte, rare here, while ``.`` is everywhere.
    """
    kept = data.translate(RUN_TABLES[name])
    end = RUNS[name].encode()
    return kept.count(end + b".") + kept.endswith(end)


# Fitted by ``python -m compaction_suite.benchmarks.estimators --calibrate`` on the train split of
# compaction_suite.benchmarks.corpus (200 documents per class, seed 0) on CPython 3.11.7 / Debian 12.
# No class of the corpus has 4-byte characters (emoji): "4" is 0 for want of data, and
# such a character is charged only its three continuation bytes.
WEIGHTS: dict[str, dict[str, float]] = {
    'o200k_base': {
        'l': 0.05469,
        'u': 0.32031,
        'd': 0.33594,
        's': 0.28906,
        'n': 1.01562,
        't': 0.29688,
        'p': 0.03125,
        'c': 0.14844,
        '2': 0.375,
        'y': 0.08594,
        'a': 0.1875,
        'i': 0.03125,
        'g': 0.0,
        'k': 0.34375,
        'h': 0.48438,
        'o': 0.33594,
        'f': 1.19531,
        '4': 0.0,
        'lu': 1.68218,
        'digit runs': 0.84666,
        'punct runs': 0.87371,
        'word runs': 0.44786,
        'AAAA': -0.72612,
        '    ': -1.0852,
    },
    'cl100k_base': {
        'l': 0.05469,
        'u': 0.29688,
        'd': 0.33594,
        's': 0.36719,
        'n': 0.70312,
        't': 0.17188,
        'p': 0.03125,
        'c': 0.01562,
        '2': 0.4375,
        'y': 0.39062,
        'a': 0.77344,
        'i': 1.10938,
        'g': 0.0,
        'k': 0.9375,
        'h': 1.07031,
        'o': 1.01562,
        'f': 1.99219,
        '4': 0.0,
        'lu': 1.94442,
        'digit runs': 0.8919,
        'punct runs': 0.85311,
        'word runs': 0.42156,
        'AAAA': -0.6327,
        '    ': -1.33262,
    },
}


def features(text: str) -> tuple[int, ...]:
    """The counts the estimate weighs, in `FEATURES` order (slow and plain: for calibration and tests)."""
    data = text.encode("utf-8", "surrogatepass")
    classes = data.translate(CLASS_TABLE)
    return (
        *(classes.count(cls.encode()) for cls in BYTE_CLASSES),
        *(classes.count(pair.encode()) for pair in PAIRS),
        *(_runs(data, name) for name in RUNS),
        *(text.count(pattern) for pattern in PATTERNS),
    )


class ByteClassTokens(Estimator):
    """Estimated tokens of an ``encoding`` from byte classes, case changes and runs (see the module)."""

    def __init__(self, encoding_name: str = "o200k_base", weights: Mapping[str, float] | None = None) -> None:
        given = WEIGHTS.get(encoding_name) if weights is None else weights
        if not given:
            raise ValueError(f"no weights for {encoding_name!r}; known: {', '.join(k for k, v in WEIGHTS.items() if v)}")
        self.name = f"byte-classes:{encoding_name}"
        self.encoding_name = encoding_name
        self.weights = {feature: float(given.get(feature, 0.0)) for feature in FEATURES}
        scaled = {cls: round(self.weights[cls] * SCALE) for cls in BYTE_CLASSES}
        if not all(0 <= weight <= 255 for weight in scaled.values()):
            raise ValueError(f"byte-class weights must lie in [0, {255 / SCALE:.3f}]: {self.weights}")
        self._weight_table = bytes(scaled[chr(cls)] for cls in CLASS_TABLE)
        self._chunk = 65519 // max(1, max(scaled.values()))  # adler32's sum stays exact below 65521
        self._pairs = [(pair.encode(), self.weights[pair]) for pair in PAIRS if self.weights[pair]]
        self._runs = [(name, self.weights[name]) for name in RUNS if self.weights[name]]
        self._patterns = [(pattern, self.weights[pattern]) for pattern in PATTERNS if self.weights[pattern]]

    def tokens(self, text: str) -> float:
        """Estimated tokens of ``text`` read as plain text (no chat overhead)."""
        data = text.encode("utf-8", "surrogatepass")
        weights = memoryview(data.translate(self._weight_table))
        total = 0
        for at in range(0, len(weights), self._chunk):
            total += (zlib.adler32(weights[at : at + self._chunk]) & 0xFFFF) - 1
        estimate = total / SCALE
        if self._pairs:
            classes = data.translate(CLASS_TABLE)
            for pair, weight in self._pairs:
                estimate += weight * classes.count(pair)
        for name, weight in self._runs:
            estimate += weight * _runs(data, name)
        for pattern, weight in self._patterns:
            estimate += weight * text.count(pattern)
        return max(estimate, 0.0)

    def units(self, message: Message) -> int:
        fields = cast(Mapping[str, Any], message)
        overhead = PER_MESSAGE + ROLE_TOKENS + (PER_NAME if isinstance(fields.get("name"), str) else 0)
        return round(MILLI * (overhead + sum(self.tokens(text) for text in message_text(message) if text)))

    def total(self, units: int, messages: int) -> int:
        return round(units / MILLI) + REPLY_PRIMING if messages else 0

    def estimate(self, messages: Sequence[Message]) -> int:
        return self.total(sum(self.units(message) for message in messages), len(messages))

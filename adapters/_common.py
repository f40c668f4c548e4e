"""What every framework adapter shares. Standard library only: importing an adapter
module costs nothing when its framework is absent (the framework is imported inside
the factory and the converters).

The adapters speak OpenAI chat-completions dicts to the suite (SPEC Part A) and the
framework's own message types to the framework. A conversion must be *faithful*:
``from_framework(to_framework(messages))`` is ``messages`` exactly, so that a kept
message compares equal (SPEC: "kept" is JSON equality) and a wrong conversion can never
pass as a framework bug (``tests/test_adapters.py`` pins it).

Where a framework type cannot hold a detail of the OpenAI dict (``content: None`` next
to tool calls, the exact text of a call's JSON ``arguments``, an image part's
``detail``, a ``developer`` role in a framework without one, whether content was a
string or a one-part list), the converter writes it in a *note*, a side channel kept
outside what the framework reads. A note is applied on the way back only where the
framework's message still agrees with it (same text, same parsed arguments, same
image), so a note can restore a representation but never undo a change the framework
made.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any, TypedDict, TypeVar

from compaction_suite.message import Message

OPTIONS_ENV = "COMPACTION_ADAPTER_OPTIONS"
"""JSON object of options for an adapter factory (the matrix sets it per configuration)."""


BETWEEN_ROUNDS = "between_rounds"
"""The ``called`` capability of every adapter here: each framework's loop calls its compactor
before a model call, so with every tool call answered (SPEC Part A, declared capabilities;
each framework's declaration is proven by its loop test, ``tests/test_adapter_loops.py``)."""


# --- releases and documented behaviour (SPEC Part A, "The framework matrix") ------------------


class UnsupportedRelease(Exception):
    """An installed framework release the adapter does not drive: outside its ``SUPPORTED``
    specifier, or lacking what the adapter needs (a keyword, a hook). A contract error, raised when
    the factory starts (the suite reports it in one line, exit 2), never a framework finding."""


class _Documented(TypedDict):
    factory: str
    clause: str
    options: dict[str, Any]
    """The options it applies to (a configuration matches when it holds each of them); ``{}``: all."""
    quote: str
    source: str
    """A URL or ``file@version`` where the quote stands."""


class Documented(_Documented, total=False):
    """A finding the framework documents as its contract (agreed interface 4): the matrix shows it as
    *documented*, with the framework's own words, and counts it apart."""

    reason: str
    """A regular expression the text of each reason the quote covers matches (absent: every reason the
    clause fails with): a finding of the clause is documented only when each of its reasons matches."""


def installed(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def supported(module: ModuleType, factory_name: str | None = None) -> dict[str, str]:
    """The releases the adapter ``module`` drives for one path: ``SUPPORTED_BY_PATH[factory_name]`` where the
    module declares one for that factory (a path that needs fewer distributions, or reaches further back,
    than the module's other paths), else the module's ``SUPPORTED``."""
    by_path = getattr(module, "SUPPORTED_BY_PATH", {})
    return dict(by_path[factory_name]) if factory_name in by_path else dict(getattr(module, "SUPPORTED", {}))


def release_problem(module: ModuleType, factory_name: str | None = None) -> str | None:
    """Why the adapter ``module`` cannot drive what is installed (for the path ``factory_name``, when
    given: `supported`), or None: a distribution it needs is absent, or installed at a release outside
    its specifier (PEP 440; a pre-release is outside unless the specifier names one)."""
    for dist, spec in supported(module, factory_name).items():
        found = installed(dist)
        if found is None:
            return f"the {_adapter_name(module, factory_name)} adapter needs {dist} ({spec}), which is not installed"
        if problem := outside(module, factory_name, dist, found):
            return problem
    return None


def outside(module: ModuleType, factory_name: str | None, dist: str, version: str) -> str | None:
    """Why the adapter ``module`` (for the path ``factory_name``) cannot drive ``dist`` at ``version``, or
    None when that release is inside what it declares or it declares nothing for ``dist``: the one rule
    both a factory (`release_problem`) and a version sweep (before installing) apply (PEP 440; a
    pre-release is outside unless the specifier names one)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    spec = {d.lower(): s for d, s in supported(module, factory_name).items()}.get(dist.lower())
    if spec is None:
        return None
    try:
        inside = SpecifierSet(spec).contains(Version(version))
    except InvalidVersion:
        inside = False
    return None if inside else f"the {_adapter_name(module, factory_name)} adapter does not support {dist} {version} (supported: {spec})"


def _adapter_name(module: ModuleType, factory_name: str | None) -> str:
    """The adapter as its one-line refusals name it: its module, and the path where it declares one."""
    adapter = module.__name__.rsplit(".", 1)[-1]
    return f"{adapter}:{factory_name}" if factory_name in getattr(module, "SUPPORTED_BY_PATH", {}) else adapter


@functools.cache
def _checked(module_name: str, factory_name: str) -> None:
    problem = release_problem(sys.modules[module_name], factory_name)
    if problem:
        raise UnsupportedRelease(problem)


F = TypeVar("F", bound=Callable[..., Any])


def factory(function: F) -> F:
    """Mark an adapter factory: the releases its module supports for it (`supported`) are checked when
    it starts (once per process), so an unsupported release is `UnsupportedRelease`, a contract error."""

    @functools.wraps(function)
    def started(*args: Any, **kwargs: Any) -> Any:
        _checked(function.__module__, function.__name__)
        return function(*args, **kwargs)

    return started  # type: ignore[return-value]


class CannotDrive(UnsupportedRelease):
    """A path of an adapter that the installed release cannot drive (a hook or class it lacks): a
    contract error naming the path (``adapter:factory``), the distribution and its version."""

    def __init__(self, path: str, distribution: str, why: str) -> None:
        super().__init__(f"adapter {path} cannot drive {distribution} {installed(distribution) or '(not installed)'}: {why}")


def release(distribution: str) -> tuple[int, ...]:
    """The installed release as a tuple of its leading numbers (``1.3.0a2`` -> ``(1, 3, 0)``); ``()`` when absent."""
    found = installed(distribution)
    if found is None:
        return ()
    return tuple(int(n) for n in re.findall(r"\d+", re.split(r"a|b|rc", found)[0])[:3])


def cannot_drive(module_name: str, distribution: str, what: str) -> UnsupportedRelease:
    """The contract error for a release that lacks what the adapter needs (``what``: the keyword or
    hook), naming adapter, distribution and version."""
    adapter = module_name.rsplit(".", 1)[-1]
    return UnsupportedRelease(f"the {adapter} adapter cannot drive {distribution} {installed(distribution)}: {what}")


def accepts(callable_: Any, keyword: str) -> bool:
    """Whether ``callable_`` (a function or a class) takes ``keyword``."""
    try:
        parameters = inspect.signature(callable_).parameters
    except (TypeError, ValueError):
        return True
    return keyword in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def documented(module: ModuleType, factory_name: str, options_given: Mapping[str, Any]) -> list[Documented]:
    """The ``DOCUMENTED`` entries of an adapter module that apply to one configuration: the factory's
    options are its ``DEFAULTS[factory_name]`` (when the module keeps them by factory) updated with
    ``options_given``, and an entry applies when they hold each of its ``options``."""
    full = {**(getattr(module, "DEFAULTS", {}).get(factory_name) or {}), **options_given}
    return [
        d for d in getattr(module, "DOCUMENTED", [])
        if d["factory"] == factory_name and all(k in full and full[k] == v for k, v in d["options"].items())
    ]  # fmt: skip


def capabilities(system_prompt: str, trigger: dict[str, Any] | None = None) -> dict[str, Any]:
    """The declared capabilities of an adapter: called between rounds; the system prompt
    ``"outside"`` the compacted list (the framework keeps it apart and sends it first),
    ``"leading"`` (in the list, only before its first other message: where the framework stores
    it) or ``"in_list"`` (the framework's users may put system messages anywhere in the list);
    ``trigger``, when the framework documents one for the configuration, its size
    (``{"messages": N}`` or ``{"tokens": N}``, SPEC Part A "Declarations", FIRE-1, FIRE-2)."""
    if system_prompt not in ("outside", "leading", "in_list"):
        raise ValueError(f"system_prompt must be 'outside', 'leading' or 'in_list', got {system_prompt!r}")
    declared: dict[str, Any] = {"called": BETWEEN_ROUNDS, "system_prompt": system_prompt}
    return declared if trigger is None else {**declared, "trigger": trigger}


# --- options --------------------------------------------------------------------------


def options(defaults: dict[str, Any], given: dict[str, Any] | None = None) -> dict[str, Any]:
    """``defaults`` updated with ``$COMPACTION_ADAPTER_OPTIONS`` and then ``given``; an unknown key, or
    a value of another type than its default's (`wrong_type`), is an error (SPEC CLI-2, "an adapter
    option")."""
    found = dict(defaults)
    raw = os.environ.get(OPTIONS_ENV, "").strip()
    from_env = json.loads(raw) if raw else {}
    if not isinstance(from_env, dict):
        raise ValueError(f"${OPTIONS_ENV} must be a JSON object, got {raw!r}")
    for source in (from_env, given or {}):
        unknown = sorted(set(source) - set(defaults))
        if unknown:
            raise ValueError(f"unknown adapter option(s) {unknown}; known: {sorted(defaults)}")
        for key, value in source.items():
            if problem := wrong_type(defaults[key], value):
                raise ValueError(f"adapter option {key}={json.dumps(value)}: {problem}")
        found.update(source)
    return found


def wrong_type(default: Any, value: Any) -> str | None:
    """Why ``value`` cannot stand where ``default`` does, or None. A boolean, number, list or object
    default fixes the type (an integer where a float is, and null anywhere, accepted; a boolean's
    option also takes a text naming a mode, as pydantic_ai's ``in_agent="responses"``); a text or
    null default takes any value, since some are markers (deepagents' ``"factory"``: the
    framework's own default) whose meaning only the adapter reads."""
    if value is None or default is None or isinstance(default, str):
        return None
    if isinstance(default, bool):
        expected: tuple[type, ...] = (str, bool)
    elif isinstance(default, int):
        expected = (int,)
    elif isinstance(default, float):
        expected = (int, float)
    elif isinstance(default, list | tuple):
        expected = (list, tuple)
    elif isinstance(default, dict):
        expected = (dict,)
    else:
        return None
    if isinstance(value, expected) and (bool in expected or not isinstance(value, bool)):
        return None
    return f"expected {_TYPE_NAMES[expected[-1]]} like its default {json.dumps(default)}"


_TYPE_NAMES: dict[type, str] = {
    bool: "true, false or a mode's name",
    int: "an integer",
    float: "a number",
    tuple: "a list",
    dict: "an object",
}


# --- OpenAI dict helpers ------------------------------------------------------------------


def tool_runs(messages: Sequence[Message]) -> list[list[int]]:
    """Indices grouped so that consecutive ``tool`` messages form one run (others stand alone)."""
    runs: list[list[int]] = []
    for i, message in enumerate(messages):
        if message.get("role") == "tool" and runs and messages[runs[-1][0]].get("role") == "tool":
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def call_names(messages: Sequence[Message]) -> dict[str, str]:
    """Tool-call id -> function name, over every assistant message."""
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                names[str(call.get("id"))] = str(call["function"].get("name", ""))
    return names


def parse_arguments(text: Any) -> Any:
    """The JSON value of a call's ``arguments`` string, or the string itself when it is not JSON."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def arguments_text(framework_value: Any, original: str | None) -> str:
    """A call's ``arguments`` string on the way back.

    The framework's own value when it holds a string; else the original string when it
    still parses to the framework's parsed value (JSON spacing and escaping are not
    something a parsed dict can carry); else the framework's value as JSON.
    """
    if isinstance(framework_value, str):
        return framework_value
    if original is not None and parse_arguments(original) == framework_value:
        return original
    return json.dumps(framework_value, ensure_ascii=False)


def text_of_parts(content: Any) -> str:
    """String content, or the text parts of a list joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def deep(value: Any) -> Any:
    return copy.deepcopy(value)


# --- parts --------------------------------------------------------------------------------


@dataclass
class PartView:
    """A content part as the framework holds it: ``kind`` text/image/other and its value."""

    kind: str
    value: Any
    same_object: Any = None
    """The framework object itself, for an identity check against the one we created."""


def restore_parts(views: Sequence[PartView], original: list[Any] | None, created: Sequence[Any] | None) -> list[Any]:
    """OpenAI content parts from the framework's parts.

    The original parts are returned when the framework's parts still match them one to
    one (same kinds, same texts, and for an image either the same url or the very object
    the converter created); otherwise parts are rebuilt from the framework's values.
    """
    if original is not None and len(original) == len(views):
        same = True
        for i, (view, part) in enumerate(zip(views, original, strict=True)):
            kind = part.get("type") if isinstance(part, dict) else None
            if view.kind == "text":
                same = kind == "text" and part.get("text") == view.value
            elif view.kind == "image":
                url = (part.get("image_url") or {}).get("url") if kind == "image_url" else None
                made = created[i] if created is not None and i < len(created) else None
                same = kind == "image_url" and (url == view.value or (made is not None and made is view.same_object))
            else:
                same = part == view.value
            if not same:
                break
        if same:
            return deep(original)
    rebuilt: list[Any] = []
    for view in views:
        if view.kind == "text":
            rebuilt.append({"type": "text", "text": view.value})
        elif view.kind == "image":
            rebuilt.append({"type": "image_url", "image_url": {"url": view.value}})
        else:
            rebuilt.append(view.value)
    return rebuilt


# --- notes --------------------------------------------------------------------------------


@dataclass
class Note:
    """What a framework message cannot carry about the OpenAI dict it came from."""

    original: Message
    created_parts: list[Any] | None = None
    """The framework part objects the converter made for the original's content parts."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Framework-specific facts (e.g. the framework object for an identity check)."""


class Notes:
    """Notes by key (a message id, or the framework object's identity)."""

    def __init__(self) -> None:
        self._by_key: dict[Any, Note] = {}
        self._keep: list[Any] = []  # keeps objects alive while their id() is a key

    def put(self, key: Any, note: Note, keep: Any = None) -> None:
        self._by_key[key] = note
        if keep is not None:
            self._keep.append(keep)

    def get(self, key: Any) -> Note | None:
        return self._by_key.get(key)


def finish(d: Message, note: Note | None, *, role_free: bool = False) -> Message:
    """Apply a note's role-independent facts to a dict rebuilt from a framework message.

    Keys of the original the adapters do not model (``refusal``, ``audio``, a custom key)
    are restored as they were; ``content: None`` is restored where the framework holds
    an empty string for it.
    """
    if note is None:
        return d
    original = note.original
    if original.get("role") != d.get("role") and not role_free:
        return d
    if "content" in original and original["content"] is None and d.get("content") in ("", None, []):
        d["content"] = None
    if "content" not in original and d.get("content") in ("", None, []):
        d.pop("content", None)
    for key, value in original.items():
        if key not in MODELLED_KEYS:
            d.setdefault(key, deep(value))
    return order_like(d, original)


MODELLED_KEYS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id"})


def order_like(d: Message, original: Message) -> Message:
    """``d`` with its keys in the original's order first (cosmetic: equality ignores order)."""
    ordered = {k: d[k] for k in original if k in d}
    ordered.update({k: v for k, v in d.items() if k not in ordered})
    return ordered


# --- the compactor the suite sees -----------------------------------------------------------


def make(
    name: str,
    profiles: Iterable[str],
    run: Callable[[Any], Any],
    *,
    declared: dict[str, Any],
    estimate: Callable[[Any], int] | None = None,
    is_async: bool = False,
) -> Any:
    """A compactor object with ``compact`` (sync or async), ``profiles``, ``capabilities``
    (``declared``, see `capabilities`) and, when given, ``estimate_tokens``.

    ``run`` gets a deep copy of the history in the adapter's wire format (chat-completions
    messages, Responses items, or an Anthropic request) and returns the compacted one."""
    claimed = frozenset(profiles)
    declared = dict(declared)

    if is_async:

        class _Async:
            profiles = claimed
            capabilities = declared

            async def compact(self, messages: Any, *, iteration: int) -> Any:
                return await run(deep(messages))

            def __repr__(self) -> str:
                return f"<{name} adapter>"

        obj: Any = _Async()
    else:

        class _Sync:
            profiles = claimed
            capabilities = declared

            def compact(self, messages: Any, *, iteration: int) -> Any:
                return run(deep(messages))

            def __repr__(self) -> str:
                return f"<{name} adapter>"

        obj = _Sync()
    if estimate is not None:
        obj.estimate_tokens = lambda messages: int(estimate(deep(messages)))
    return obj


def requires(module: str, extra: str) -> Any:
    """Import ``module`` or fail with the install line for the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        from compaction_suite.extras import install_hint

        raise ImportError(f"{module} is not installed: {install_hint(extra)} ({error})") from error


def content_back(views: Sequence[PartView], note: Note | None) -> Any:
    """An OpenAI ``content`` from a framework message's parts.

    With a note: the original string when the framework holds exactly that text; ``None``
    when the original was ``None`` and the framework holds nothing; the original parts
    when they still match (`restore_parts`). Without one (a message the framework made):
    a lone text part is a string, no part is ``""``, anything else a list of parts.
    """
    original = note.original.get("content") if note is not None else None
    if note is not None:
        if isinstance(original, str) and len(views) == 1 and views[0].kind == "text" and views[0].value == original:
            return original
        if isinstance(original, str) and original == "" and not views:
            return ""
        if original is None and not views:
            return None
        if isinstance(original, list):
            return restore_parts(views, original, note.created_parts)
    if not views:
        return ""
    if len(views) == 1 and views[0].kind == "text":
        return views[0].value
    return restore_parts(views, None, None)


def refusal_of(message: Message) -> str | None:
    """An assistant message's refusal text (OpenAI's ``refusal`` field), or ``None``: a framework whose
    chat client parses a refusal as text holds it so (`without_refusal` takes it back out)."""
    refusal = message.get("refusal") if message.get("role") == "assistant" else None
    return refusal if isinstance(refusal, str) and refusal else None


def without_refusal(views: list[PartView], note: Note | None) -> list[PartView]:
    """``views`` less the text the converter added for the original's refusal (`refusal_of`: the last
    text part, holding exactly that text); `finish` restores the ``refusal`` key from the note."""
    refusal = refusal_of(note.original) if note is not None else None
    if refusal is not None and views and views[-1].kind == "text" and views[-1].value == refusal:
        return views[:-1]
    return views


def tool_text(content: Any) -> Any:
    """A tool result's content as the frameworks hold a tool's output: text parts joined into a
    string (a tool returns text; the list of parts is OpenAI's wire form), anything else as is."""
    return text_of_parts(content) if isinstance(content, list) else deep(content)


def tool_result_back(call_id: Any, content: Any, originals: dict[Any, Message]) -> Message:
    """A ``tool`` dict; the original one (every key) when it answers the same call with the same
    content, or with the text of its parts (`tool_text`: the representation, not a change)."""
    original = originals.get(call_id)
    if original is not None and (original.get("content") == content or tool_text(original.get("content")) == content):
        return deep(original)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def originals_by_call(messages: Sequence[Message]) -> dict[Any, Message]:
    """Each tool result of ``messages`` by the call it answers."""
    return {m.get("tool_call_id"): deep(m) for m in messages if m.get("role") == "tool"}


def call_back(call_id: Any, name: Any, arguments: str, originals: dict[Any, dict[str, Any]]) -> dict[str, Any]:
    """A ``tool_calls`` entry; the original one (every key) when it has the same name and arguments."""
    original = originals.get(call_id)
    function = (original or {}).get("function") or {}
    if original is not None and function.get("name") == name and function.get("arguments") == arguments:
        return deep(original)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def calls_by_id(messages: Sequence[Message]) -> dict[Any, dict[str, Any]]:
    return {c.get("id"): deep(c) for m in messages for c in (m.get("tool_calls") or []) if isinstance(c, dict)}

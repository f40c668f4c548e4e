"""The framework adapters' conversions (adapters/) and the matrix builder (compaction_suite/matrix/).

A conversion OpenAI dict -> framework message -> OpenAI dict must give back exactly what
went in, for every message shape, or a kept message would look changed and a wrong
conversion would pass as a framework bug. The framework side is pinned too (ids, names,
arguments, tool_call_id as the framework's own objects hold them), so the side-channel
notes cannot hide a conversion that hands the framework the wrong thing.

Each framework is optional (an extra): its tests skip with the install line when it is absent.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance.capabilities import CHOICES
from compaction_suite.conformance.histories import draw_images_by_url, histories

import message_builders as build

PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


SHAPES: dict[str, list[dict]] = {
    "system": [{"role": "system", "content": "You are a coding agent."}],
    "developer": [{"role": "developer", "content": "Answer in French."}],
    "two-system-prompts": [{"role": "system", "content": "A"}, {"role": "developer", "content": "B"}],
    "system-parts": [{"role": "system", "content": [{"type": "text", "text": "You are terse."}]}],
    "user-text": [{"role": "user", "content": "Fix the parser. Café 日本語 🚀"}],
    "user-named": [{"role": "user", "content": "hi", "name": "alice"}],
    "user-empty": [{"role": "user", "content": ""}],
    "user-one-text-part": [{"role": "user", "content": [{"type": "text", "text": "only text"}]}],
    "user-multimodal": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": PNG, "detail": "low"}},
                {"type": "text", "text": "and this"},
                {"type": "image_url", "image_url": {"url": PNG}},
            ],
        }
    ],
    "user-lone-image": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": PNG, "detail": "high"}}]}],
    "assistant-text": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "An answer."}],
    "assistant-empty-text": [{"role": "user", "content": "q"}, {"role": "assistant", "content": ""}],
    "parallel-calls": [
        {"role": "user", "content": "Read three files."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                build.call("call_1", "readFile", '{"path": "src/app.py"}'),
                build.call("call_2", "search", '{"query": "数据库连接", "limit": 3}'),
                build.call("call_3", "runCommand", '{"cmd":"pytest -q"}'),
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "2 hits"},
        {"role": "tool", "tool_call_id": "call_1", "content": "import json\n"},
        {"role": "tool", "tool_call_id": "call_3", "content": "3 passed"},
    ],
    "calls-with-preamble": [
        {"role": "user", "content": "Create it."},
        {"role": "assistant", "content": "Creating the ticket now.", "tool_calls": [build.call("call_9", "createEntity", '{"type": "ticket", "title": "Fix \\u00e9"}')]},
        {"role": "tool", "tool_call_id": "call_9", "content": '{"id": "ent-4f2a", "type": "ticket"}'},
        {"role": "assistant", "content": "Done."},
    ],
    "calls-with-empty-preamble": [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": "", "tool_calls": [build.call("call_5", "reportProgress", '{"tasks": []}')]},
        {"role": "tool", "tool_call_id": "call_5", "content": "OK"},
    ],
    "call-arguments-not-an-object": [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": None, "tool_calls": [build.call("call_7", "search", "[1, 2]")]},
        {"role": "tool", "tool_call_id": "call_7", "content": ""},
    ],
    "tool-text-parts": [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": None, "tool_calls": [build.call("call_8", "readFile", '{"path": "a.py"}')]},
        {"role": "tool", "tool_call_id": "call_8", "content": [{"type": "text", "text": "1\timport json"}, {"type": "text", "text": "2"}]},
    ],
    "earlier-summary": [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "[Context Summary]\n- read the config\n- chose pytest"},
        {"role": "user", "content": "Continue."},
    ],
}

AGENT_HISTORY = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the tests."},
    {"role": "assistant", "content": None, "tool_calls": [build.call("call_1", "readFile", '{"path": "a.py"}'), build.call("call_2", "runCommand", '{"cmd": "pytest"}')]},
    {"role": "tool", "tool_call_id": "call_2", "content": "1 failed"},
    {"role": "tool", "tool_call_id": "call_1", "content": "def f(): pass"},
    {"role": "assistant", "content": "The test fails because f returns None."},
]
"""A history every framework can hold without any note (canonical JSON arguments, string contents)."""


class Framework:
    def __init__(self, name: str, probe: str, module: str, to: str, back: str, modes: tuple[str | None, ...], *, images_by_url: bool = True) -> None:
        self.name, self.probe, self.module, self.to_name, self.back_name, self.modes = name, probe, module, to, back, modes
        self.images_by_url = images_by_url  # False: the adapter declares images "inline" (its framework holds image bytes only)

    def load(self):
        pytest.importorskip(self.probe, reason=f"{self.name} is not installed (pip install 'compaction-suite[{self.extra}]')")
        return importlib.import_module(self.module)

    @property
    def extra(self) -> str:
        return {"langchain_core": "langchain", "semantic_kernel": "semantic-kernel", "agent_framework": "agent-framework", "autogen_core": "autogen", "pydantic_ai": "pydantic-ai"}[self.probe]

    def convert(self, messages, mode):
        mod = self.load()
        kwargs = {"tool_results": mode} if mode else {}
        return getattr(mod, self.to_name)(messages, **kwargs)

    def back(self, objs, notes):
        return getattr(self.load(), self.back_name)(objs, notes)


FRAMEWORKS = [
    Framework("LangChain", "langchain_core", "compaction_suite.adapters.langchain", "to_langchain", "from_langchain", (None,)),
    Framework("Semantic Kernel", "semantic_kernel", "compaction_suite.adapters.semantic_kernel", "to_semantic_kernel", "from_semantic_kernel", ("separate", "grouped")),
    Framework("Agent Framework", "agent_framework", "compaction_suite.adapters.agent_framework", "to_agent_framework", "from_agent_framework", ("grouped", "separate")),
    Framework("AutoGen", "autogen_core", "compaction_suite.adapters.autogen", "to_autogen", "from_autogen", ("grouped", "separate"), images_by_url=False),
    Framework("Pydantic AI", "pydantic_ai", "compaction_suite.adapters.pydantic_ai", "to_pydantic_ai", "from_pydantic_ai", ("grouped", "separate")),
]
CASES = [pytest.param(fw, mode, id=f"{fw.name}-{mode or 'only'}") for fw in FRAMEWORKS for mode in fw.modes]


def same(a, b) -> bool:
    return a == b and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize(("fw", "mode"), CASES)
def test_round_trip_every_shape(fw, mode, shape):
    history = SHAPES[shape]
    objs, notes = fw.convert(history, mode)
    back = fw.back(objs, notes)
    assert same(back, history), f"{fw.name} ({mode}) {shape}:\n in {history}\nout {back}"


@pytest.mark.parametrize(("fw", "mode"), CASES)
def test_round_trip_generated_histories(fw, mode):
    fw.load()

    @hypothesis_settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    @given(history=histories(system=None))
    def check(history):
        objs, notes = fw.convert(history, mode)
        assert same(fw.back(objs, notes), history)

    draw_images_by_url(fw.images_by_url)  # as the suite draws for the adapter's declaration (SPEC Declarations: images)
    try:
        check()
    finally:
        draw_images_by_url(True)


def _parsed_arguments(messages: list[dict]) -> list[dict]:
    """``messages`` with each call's JSON ``arguments`` parsed (JSON spacing is not content)."""
    out = json.loads(json.dumps(messages))
    for m in out:
        for call in m.get("tool_calls") or []:
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return out


@pytest.mark.parametrize(("fw", "mode"), CASES)
def test_canonical_history_needs_no_note(fw, mode):
    """What the framework's objects hold is the whole story for an ordinary agent history.

    For pydantic-ai, without notes every message is rendered by pydantic-ai's own OpenAI chat
    model (``_map_messages``), which re-serializes the call arguments compactly: compared parsed.
    """
    objs, _ = fw.convert(AGENT_HISTORY, mode)
    back = fw.back(objs, None)
    if fw.probe == "pydantic_ai":
        assert same(_parsed_arguments(back), _parsed_arguments(AGENT_HISTORY))
    elif fw.probe == "langchain_core":
        assert same(back, _held_as_blocks(AGENT_HISTORY))
    else:
        assert same(back, AGENT_HISTORY)


def _held_as_blocks(messages: list[dict]) -> list[dict]:
    """``messages`` with every other tool result (the second, the fourth, ...) as the one text block the
    LangChain adapters hold it as (``adapters/_langchain_blocks.py``): what the agent's objects say
    without the note that gives back the string it came from."""
    from compaction_suite.adapters._langchain_blocks import held

    out = json.loads(json.dumps(messages))
    results = [m for m in out if m.get("role") == "tool"]
    for k, message in enumerate(results):
        message["content"] = held(message["content"], k)
    return out


def test_pydantic_ai_renders_images_with_detail():
    """pydantic-ai's own OpenAI mapping of the converted user message gives back the parts, ``detail`` included."""
    pytest.importorskip("pydantic_ai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import from_pydantic_ai, to_pydantic_ai

    for shape in ("user-multimodal", "user-lone-image", "earlier-summary", "calls-with-preamble"):
        objs, _ = to_pydantic_ai(SHAPES[shape])
        assert same(_parsed_arguments(from_pydantic_ai(objs, None)), _parsed_arguments(SHAPES[shape])), shape


@pytest.mark.parametrize(("fw", "mode"), CASES)
def test_input_is_not_mutated(fw, mode):
    history = json.loads(json.dumps(SHAPES["user-multimodal"] + SHAPES["parallel-calls"]))
    before = json.dumps(history, sort_keys=True)
    objs, notes = fw.convert(history, mode)
    fw.back(objs, notes)
    assert json.dumps(history, sort_keys=True) == before


# --- the framework's side of the conversion ------------------------------------------------------


def test_langchain_objects():
    lc = pytest.importorskip("langchain_core.messages", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from compaction_suite.adapters.langchain import to_langchain

    objs, _ = to_langchain(SHAPES["developer"] + SHAPES["user-multimodal"] + SHAPES["parallel-calls"] + SHAPES["call-arguments-not-an-object"][1:])
    dev, user, _, ai, *tools = objs[:7]
    assert isinstance(dev, lc.SystemMessage) and dev.additional_kwargs == {"__openai_role__": "developer"}
    assert isinstance(user, lc.HumanMessage) and user.content == SHAPES["user-multimodal"][0]["content"]
    assert isinstance(ai, lc.AIMessage) and ai.content == ""
    assert [(c["id"], c["name"], c["args"]) for c in ai.tool_calls] == [
        ("call_1", "readFile", {"path": "src/app.py"}),
        ("call_2", "search", {"query": "数据库连接", "limit": 3}),
        ("call_3", "runCommand", {"cmd": "pytest -q"}),
    ]
    assert [(type(t).__name__, t.tool_call_id, t.content) for t in tools] == [
        ("ToolMessage", "call_2", "2 hits"),
        ("ToolMessage", "call_1", [{"type": "text", "text": "import json\n"}]),  # every other result as a text block
        ("ToolMessage", "call_3", "3 passed"),
    ]
    invalid = objs[7]
    assert invalid.tool_calls == [] and [(c["id"], c["args"]) for c in invalid.invalid_tool_calls] == [("call_7", "[1, 2]")]


def test_semantic_kernel_objects():
    sk = pytest.importorskip("semantic_kernel.contents", reason="Semantic Kernel is not installed (pip install -e '.[semantic-kernel]')")
    from compaction_suite.adapters.semantic_kernel import to_semantic_kernel

    history = SHAPES["developer"] + SHAPES["user-multimodal"] + SHAPES["calls-with-preamble"] + SHAPES["parallel-calls"][1:]
    objs, _ = to_semantic_kernel(history)
    assert [m.role.value for m in objs] == ["developer", "user", "user", "assistant", "tool", "assistant", "assistant", "tool", "tool", "tool"]
    images = [i for i in objs[1].items if isinstance(i, sk.ImageContent)]
    assert len(images) == 2 and images[0].data_uri == PNG
    text, call = objs[3].items
    assert isinstance(text, sk.TextContent) and text.text == "Creating the ticket now."
    assert (call.id, call.name, call.arguments) == ("call_9", "createEntity", '{"type": "ticket", "title": "Fix \\u00e9"}')
    (result,) = objs[4].items
    assert isinstance(result, sk.FunctionResultContent) and (result.id, result.name, result.result) == ("call_9", "createEntity", '{"id": "ent-4f2a", "type": "ticket"}')
    assert [i.id for i in objs[6].items] == ["call_1", "call_2", "call_3"]
    grouped, _ = to_semantic_kernel(SHAPES["parallel-calls"], tool_results="grouped")
    assert len(grouped) == 3 and [(i.id, i.result) for i in grouped[2].items] == [("call_2", "2 hits"), ("call_1", "import json\n"), ("call_3", "3 passed")]


def test_agent_framework_objects():
    pytest.importorskip("agent_framework", reason="Agent Framework is not installed (pip install -e '.[agent-framework]')")
    from compaction_suite.adapters.agent_framework import to_agent_framework

    history = SHAPES["developer"] + SHAPES["calls-with-preamble"] + SHAPES["parallel-calls"][1:]
    objs, _ = to_agent_framework(history)
    # AF's users send their system prompt as "system" (or instructions=): a developer message is handed over as one
    assert [m.role for m in objs] == ["system", "user", "assistant", "tool", "assistant", "assistant", "tool"]
    text, call = objs[2].contents
    assert (text.type, text.text) == ("text", "Creating the ticket now.")
    assert (call.type, call.call_id, call.name, call.arguments) == ("function_call", "call_9", "createEntity", '{"type": "ticket", "title": "Fix \\u00e9"}')
    assert [(c.type, c.call_id, c.result) for c in objs[6].contents] == [
        ("function_result", "call_2", "2 hits"),
        ("function_result", "call_1", "import json\n"),
        ("function_result", "call_3", "3 passed"),
    ]
    separate, _ = to_agent_framework(SHAPES["parallel-calls"], tool_results="separate")
    assert [m.role for m in separate] == ["user", "assistant", "tool", "tool", "tool"]
    image = to_agent_framework(SHAPES["user-lone-image"])[0][0].contents[0]
    assert image.uri == PNG and image.media_type == "image/png"


REFUSED = [{"role": "user", "content": "Open the vault."}, {"role": "assistant", "content": None, "refusal": "I can't help with that."}]


@pytest.mark.parametrize("framework", ["agent_framework", "semantic_kernel"])
def test_a_refusal_is_text_as_the_frameworks_openai_client_parses_one(framework):
    """An assistant refusal reaches the framework as its OpenAI client parses one (AF's
    ``_parse_refusal_from_openai``, SK's ``_create_chat_message_content``: a text content holding it),
    not as a message with no content (which AF's function loop drops), and comes back as it was."""
    pytest.importorskip(framework, reason=f"{framework} is not installed")
    if framework == "agent_framework":
        from compaction_suite.adapters.agent_framework import from_agent_framework as back
        from compaction_suite.adapters.agent_framework import to_agent_framework as to
    else:
        from compaction_suite.adapters.semantic_kernel import from_semantic_kernel as back
        from compaction_suite.adapters.semantic_kernel import to_semantic_kernel as to
    objs, notes = to(REFUSED)
    parts = objs[-1].contents if framework == "agent_framework" else objs[-1].items
    assert [p.text for p in parts] == ["I can't help with that."]
    assert back(objs, notes) == REFUSED


def test_autogen_objects():
    models = pytest.importorskip("autogen_core.models", reason="AutoGen is not installed (pip install -e '.[autogen]')")
    import autogen_core

    from compaction_suite.adapters.autogen import to_autogen

    history = SHAPES["developer"] + SHAPES["user-multimodal"] + SHAPES["calls-with-preamble"] + SHAPES["parallel-calls"][1:]
    objs, _ = to_autogen(history)
    assert [type(m).__name__ for m in objs] == [
        "SystemMessage", "UserMessage", "UserMessage", "AssistantMessage", "FunctionExecutionResultMessage",
        "AssistantMessage", "AssistantMessage", "FunctionExecutionResultMessage",
    ]  # fmt: skip
    parts = objs[1].content
    assert parts[0] == "What is in these?" and isinstance(parts[1], autogen_core.Image) and parts[2] == "and this"
    calls = objs[3]
    assert isinstance(calls, models.AssistantMessage) and calls.thought == "Creating the ticket now."
    assert [(c.id, c.name, c.arguments) for c in calls.content] == [("call_9", "createEntity", '{"type": "ticket", "title": "Fix \\u00e9"}')]
    assert [(r.call_id, r.name, r.content, r.is_error) for r in objs[7].content] == [
        ("call_2", "search", "2 hits", False),
        ("call_1", "readFile", "import json\n", False),
        ("call_3", "runCommand", "3 passed", False),
    ]
    separate, _ = to_autogen(SHAPES["parallel-calls"], tool_results="separate")
    assert [len(m.content) for m in separate[2:]] == [1, 1, 1]


def test_pydantic_ai_objects():
    pm = pytest.importorskip("pydantic_ai.messages", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import to_pydantic_ai

    history = SHAPES["two-system-prompts"] + SHAPES["calls-with-preamble"] + SHAPES["parallel-calls"][1:]
    objs, _ = to_pydantic_ai(history)
    assert [type(m).__name__ for m in objs] == ["ModelRequest", "ModelResponse", "ModelRequest", "ModelResponse", "ModelResponse", "ModelRequest"]
    assert [type(p).__name__ for p in objs[0].parts] == ["SystemPromptPart", "SystemPromptPart", "UserPromptPart"]
    text, call = objs[1].parts
    assert isinstance(text, pm.TextPart) and text.content == "Creating the ticket now."
    assert (call.tool_name, call.tool_call_id, call.args) == ("createEntity", "call_9", '{"type": "ticket", "title": "Fix \\u00e9"}')
    assert [(p.tool_name, p.tool_call_id, p.content) for p in objs[5].parts] == [
        ("search", "call_2", "2 hits"),
        ("readFile", "call_1", "import json\n"),
        ("runCommand", "call_3", "3 passed"),
    ]
    separate, _ = to_pydantic_ai(SHAPES["parallel-calls"], tool_results="separate")
    assert [len(m.parts) for m in separate] == [1, 3, 1, 1, 1]


# --- adapter modules ---------------------------------------------------------------------------------


def test_adapter_modules_import_no_framework():
    """An adapter module imports only the standard library: no cost when its framework is absent."""
    code = (
        "import sys, adapters, compaction_suite.adapters.langchain, compaction_suite.adapters.semantic_kernel, compaction_suite.adapters.agent_framework, compaction_suite.adapters.autogen, compaction_suite.adapters.pydantic_ai\n"
        "heavy = ('langchain', 'langchain_core', 'semantic_kernel', 'agent_framework', 'autogen_core', 'autogen_ext', 'pydantic_ai', 'openai', 'pydantic')\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "print(loaded); sys.exit(1 if loaded else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_adapter_declares_its_claims():
    from compaction_suite.adapters import FRAMEWORKS

    for fw in FRAMEWORKS:
        module = fw.adapter()
        assert module.DISTRIBUTIONS and fw.extra == module.EXTRA
        if getattr(module, "UNAVAILABLE", None):
            continue
        for factory, _ in module.CONFIGURATIONS:
            assert callable(getattr(module, factory)), f"{fw.module}:{factory}"
            assert factory in module.WHY, f"{fw.module}: no WHY for {factory}"


@pytest.fixture(scope="module")
def suite_settings():
    from compaction_suite.conformance.settings import Settings, connected
    from compaction_suite.conformance.summarizer_server import SummarizerServer

    server = SummarizerServer()
    server.start()
    yield connected(Settings(), server.base_url)
    server.stop()


def _factories():
    from compaction_suite.adapters import FRAMEWORKS

    for fw in FRAMEWORKS:
        module = fw.adapter()
        for factory in sorted({f for f, _ in getattr(module, "CONFIGURATIONS", [])}):
            yield pytest.param(fw, factory, id=f"{fw.module}:{factory}")


@pytest.mark.parametrize(("fw", "factory"), list(_factories()))
def test_factory_compacts_offline(fw, factory, suite_settings):
    """Every factory builds with the suite's settings and compacts a history through its framework."""
    import asyncio
    import inspect

    pytest.importorskip(fw.probe, reason=f"{fw.name} is not installed (pip install 'compaction-suite[{fw.extra}]')")
    compactor = getattr(fw.adapter(), factory)(suite_settings)
    from compaction_suite.conformance import formats

    long = AGENT_HISTORY[:1] + [m for _ in range(12) for m in _rename(AGENT_HISTORY[1:], _)]
    wire_format = formats.declared(compactor)
    if wire_format != formats.CHAT:  # an adapter of another wire format gets the history in its format
        from compaction_suite.conformance.formats import anthropic, responses

        long = (responses if wire_format == formats.RESPONSES else anthropic).from_chat(long)
    before = json.dumps(long, sort_keys=True)
    out = compactor.compact(long, iteration=20)
    if inspect.isawaitable(out):
        out = asyncio.run(out)
    assert json.dumps(long, sort_keys=True) == before
    if wire_format != formats.CHAT:
        assert formats.get(wire_format).invalid(out) is None, formats.get(wire_format).invalid(out)
        return
    assert isinstance(out, list) and all(isinstance(m, dict) and m.get("role") for m in out)
    assert set(compactor.profiles) <= {"core", "trigger", "summary", "structured", "failure", "events", "session"}
    assert compactor.capabilities["called"] == "between_rounds"  # proven per framework in test_adapter_loops.py
    assert compactor.capabilities["system_prompt"] in CHOICES["system_prompt"]


def _rename(messages: list[dict], n: int) -> list[dict]:
    """``messages`` with their tool-call ids made unique for copy ``n``."""
    text = json.dumps(messages).replace('"call_1"', f'"call_{n}_1"').replace('"call_2"', f'"call_{n}_2"')
    return json.loads(text)


# --- the matrix builder ---------------------------------------------------------------------------------


def _fake_report(passed: bool) -> dict:
    clause = {"status": "pass", "level": "MUST", "profile": "core", "title": "t"}
    failing = {
        "status": "fail", "level": "MUST", "profile": "core", "title": "Tool results follow their call",
        "reason": "message 1: tool result 'call_1' has no matching call in its round", "test": "x::y",
        "history": [{"role": "user", "content": "q"}], "output": [{"role": "tool", "tool_call_id": "call_1", "content": "r"}],
    }  # fmt: skip
    return {"profiles_claimed": ["core"], "passed": passed, "clauses": {"CORE-1": clause if passed else failing, "CORE-2": clause}}


def test_matrix_build_writes_reproducers_and_markdown(tmp_path):
    import compaction_suite.matrix as matrix

    results = []
    for passed, opts in [(True, {"n": 1}), (False, {"n": 2})]:
        report = _fake_report(passed)
        results.append({
            "framework": "Fake", "versions": {"fake": "1.0"}, "compactor": "view", "target": "fake:view", "options": opts,
            "configuration": f"n={opts['n']}", "command": "compaction-suite check fake:view", "why": "core only", "exit_code": 0 if passed else 1,
            "seconds": 1.0, "status": "conforms" if passed else "fails", **report,
        })  # fmt: skip
    data = matrix.build(results, [{"framework": "Fake", "installed": True, "versions": {"fake": "1.0"}, "claims": {"view": "core only"}}], True, None, tmp_path, 2.0)
    (repro,) = sorted((tmp_path / "reproducers").glob("*.json"))
    assert repro.name == "fake--view--n=2--CORE-1.json"
    content = json.loads(repro.read_text())
    assert content["history"] == [{"role": "user", "content": "q"}] and content["clause"] == "CORE-1"
    assert content["env"] == {"COMPACTION_ADAPTER_OPTIONS": '{"n": 2}'}  # what the target is built with, for the replay
    assert data["runs"][1]["failures"][0]["reproducer"] == "reproducers/" + repro.name
    assert data["runs"][0]["clauses"] == {"CORE-1": "pass", "CORE-2": "pass"}
    json.loads(json.dumps(data))
    md = matrix.markdown(data)
    assert "| Fake | view | n=2 | core | [✗](reproducers/fake--view--n=2--CORE-1.json) | ✓ |" in md
    assert "## Failures" in md and repro.name in md


def test_matrix_command_on_the_reference(tmp_path):
    """End to end: one configuration (the reference target, --fast) gives valid JSON and Markdown."""
    from click.testing import CliRunner

    from compaction_suite.cli.matrix import matrix
    from compaction_suite.matrix import verdicts

    out = tmp_path / "m"
    result = CliRunner().invoke(matrix, ["--no-adapters", "--target", "reference", "--fast", "--out", str(out)])
    data = json.loads((out / "matrix.json").read_text())
    assert result.exit_code == (1 if verdicts.findings(data["runs"][0]) else 0), result.output  # a reachable MUST finding exits 1 (SPEC CLI-4)
    assert data["format"] == "compaction-suite-matrix" and data["fast"] is True and data["examples_per_clause"] == 10
    (run,) = data["runs"]
    assert run["target"] == "reference" and run["status"] in ("conforms", "fails") and "core" in run["profiles_claimed"]
    assert run["clauses"]["CORE-1"] in ("pass", "fail")  # the matrix reports; the reference's own tests judge it
    written = sorted(p.name for p in (out / "reproducers").glob("*.json"))
    assert written == sorted(f["reproducer"].split("/")[-1] for f in run["failures"] if f.get("reproducer"))
    md = (out / "matrix.md").read_text()
    assert md.startswith("# Conformance matrix") and "| reference | reference | defaults |" in md


def test_a_matrix_run_stopped_midway_leaves_what_it_found(tmp_path, monkeypatch):
    """matrix.json and matrix.md are written after every configuration, ``complete`` false until the
    last: a run stopped during the second configuration keeps the first's verdicts (SPEC "The
    framework matrix and releases", written as it goes)."""
    from click.testing import CliRunner

    import compaction_suite.matrix as matrix_library
    from compaction_suite.cli.matrix import matrix

    real, calls = matrix_library.run_job, []

    def stopped_after_one(*args, **kwargs):
        calls.append(args)
        if len(calls) > 1:
            raise KeyboardInterrupt  # the user's Ctrl-C during the second configuration
        return real(*args, **kwargs)

    monkeypatch.setattr(matrix_library, "run_job", stopped_after_one)
    out = tmp_path / "m"
    args = ["--no-adapters", "--target", "reference", "--target", "reference-structured", "--clause", "CORE-3", "--max-examples", "3", "--out", str(out)]
    stopped = CliRunner().invoke(matrix, args)
    assert stopped.exit_code != 0 and len(calls) == 2
    data = json.loads((out / "matrix.json").read_text())
    assert data["complete"] is False and [r["target"] for r in data["runs"]] == ["reference"]
    assert data["runs"][0]["clauses"]["CORE-3"] == "pass"
    assert "**Partial:**" in (out / "matrix.md").read_text()
    monkeypatch.setattr(matrix_library, "run_job", real)
    finished = CliRunner().invoke(matrix, args[:-1] + [str(tmp_path / "whole")])
    assert json.loads((tmp_path / "whole" / "matrix.json").read_text())["complete"] is True, finished.output
    assert "**Partial:**" not in (tmp_path / "whole" / "matrix.md").read_text()


# --- what the matrix counts ------------------------------------------------------------------------------

_CALL = build.calls("call_1")
_RESULT = build.result("call_1", "r")


def test_reverify_fails_a_structural_clause_a_reproducer_breaks():
    """A CORE-4 reproducer whose output drops a call's result cannot stand beside a CORE-2 ✓."""
    from compaction_suite.matrix.verdicts import reverify

    history = [{"role": "user", "content": "q"}, _CALL, _RESULT, {"role": "assistant", "content": "a"}]
    output = [{"role": "user", "content": "q"}, _CALL, {"role": "assistant", "content": "a"}]
    clauses = {
        "CORE-2": {"status": "pass", "level": "MUST", "title": "t", "harm": "rejected"},
        "CORE-3": {"status": "pass", "level": "MUST", "title": "t"},
        "CORE-4": {"status": "fail", "level": "MUST", "title": "t", "harm": "loss", "history": history, "output": output},
    }
    found = reverify(clauses)
    assert found["CORE-2"]["status"] == "fail" and found["CORE-2"]["reverified_from"] == "CORE-4"
    assert found["CORE-2"]["output"] == output and "CORE-4 reproducer" in found["CORE-2"]["reason"]
    assert found["CORE-3"]["status"] == "pass" and clauses["CORE-2"]["status"] == "pass"  # the input is not changed


def test_reverify_judges_a_responses_reproducer_by_its_own_format():
    """Issue 24 point 2: a Responses reproducer is re-verified with the Responses rules (RESP-1), not chat's."""
    from compaction_suite.matrix.verdicts import reverify

    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    user, output_item = {"type": "message", "role": "user", "content": "q"}, {"type": "function_call_output", "call_id": "c1", "output": "r"}
    history = [user, call, output_item, {"type": "message", "role": "assistant", "content": "a"}]
    clauses = {
        "RESP-1": {"status": "pass", "level": "MUST", "title": "t", "wire_format": "responses"},
        "RESP-3": {"status": "fail", "level": "MUST", "title": "t", "wire_format": "responses", "history": history, "output": [user, output_item, history[3]]},
    }
    found = reverify(clauses)["RESP-1"]
    assert found["status"] == "fail" and found["reverified_from"] == "RESP-3" and "no function_call with call_id 'c1'" in found["reason"]


def test_reverify_ignores_what_the_input_already_has():
    """An in-flight history's unanswered call (CORE-9) is the input's, not the compactor's CORE-2 failure."""
    from compaction_suite.matrix.verdicts import reverify

    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "go"}, _CALL]
    clauses = {
        "CORE-2": {"status": "pass", "level": "MUST", "title": "t"},
        "CORE-9": {"status": "fail", "level": "MUST", "title": "t", "harm": "policy", "history": history, "output": history[2:]},
    }
    assert reverify(clauses)["CORE-2"]["status"] == "pass"


def test_matrix_update_replaces_the_rechecked_rows_and_keeps_the_rest(tmp_path):
    """``matrix --update``: the runs of the re-checked configurations replace theirs (reproducers
    too), every other row and its reproducer stays as it was, in its place."""
    import compaction_suite.matrix as matrix

    def result(name: str, reason: str) -> dict:
        failing = {"status": "fail", "level": "MUST", "title": "t", "reason": reason, "harm": "loss", "history": [{"role": "user", "content": "q"}], "output": []}
        return {
            "framework": "Fake", "versions": {}, "compactor": name, "target": f"fake:{name}", "options": {}, "configuration": "defaults",
            "command": "c", "native": True, "exit_code": 1, "seconds": 1.0, "status": "fails", "profiles_claimed": ["core"], "passed": False,
            "clauses": {"CORE-3": failing},
        }  # fmt: skip

    fw = [{"framework": "Fake", "installed": True, "versions": {}}]
    first = matrix.build([result("a", "old a"), result("b", "old b")], fw, True, None, tmp_path, 1.0)
    again = matrix.build([result("a", "new a"), result("c", "new c")], fw, True, None, tmp_path, 1.0, kept=first["runs"])
    assert [r["compactor"] for r in again["runs"]] == ["a", "b", "c"]
    assert again["runs"][1] == first["runs"][1]
    assert [r["failures"][0]["reason"] for r in again["runs"]] == ["new a", "old b", "new c"]
    written = {p.name: json.loads(p.read_text())["reason"] for p in (tmp_path / "reproducers").glob("*.json")}
    assert written == {"fake--a--defaults--CORE-3.json": "new a", "fake--b--defaults--CORE-3.json": "old b", "fake--c--defaults--CORE-3.json": "new c"}


def test_matrix_update_needs_a_matrix_checked_alike(tmp_path):
    """``--update`` on an OUT without a matrix, or one checked with another number of examples
    per clause, is a bad input (exit 2), before anything runs (SPEC Part C)."""
    from click.testing import CliRunner

    from compaction_suite.cli.matrix import matrix

    args = ["--no-adapters", "--target", "reference", "--update", "--out"]
    missing = CliRunner().invoke(matrix, [*args, str(tmp_path / "none")])
    assert missing.exit_code == 2 and "no matrix to update" in missing.output
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "matrix.json").write_text(json.dumps({"format": "compaction-suite-matrix", "version": 2, "examples_per_clause": 50}))
    other = CliRunner().invoke(matrix, [*args, str(tmp_path / "m"), "--fast"])
    assert other.exit_code == 2 and "50 examples per clause, this run would use 10" in other.output
    both = CliRunner().invoke(matrix, [*args, str(tmp_path / "m"), "--bugs", "x.json"])
    assert both.exit_code == 2 and "not with --versions or --bugs" in both.output


def test_matrix_first_table_counts_only_reachable_findings_by_harm(tmp_path):
    import compaction_suite.matrix as matrix

    def result(name: str, native: bool, harm: str | None) -> dict:
        failing = {"status": "fail", "level": "MUST", "title": "t", "reason": "why", "harm": harm, "history": [{"role": "user", "content": "q"}], "output": []}
        clauses = {"CORE-1": {"status": "pass", "level": "MUST", "title": "t"}, "CORE-3": failing if harm else {"status": "not-applicable", "level": "MUST", "title": "t"}}
        return {
            "framework": "Fake", "versions": {}, "compactor": name, "target": f"fake:{name}", "options": {}, "configuration": "defaults",
            "command": "c", "why": "never produced" if not native else "", "native": native, "exit_code": 1, "seconds": 1.0,
            "status": "fails" if harm else "conforms", "profiles_claimed": ["core"], "passed": not harm, "clauses": clauses,
        }  # fmt: skip

    results = [result("lossy", True, "loss"), result("clean", True, None), result("odd-shape", False, "loss")]
    data = matrix.build(results, [{"framework": "Fake", "installed": True, "versions": {}}], True, None, tmp_path, 1.0)
    md = matrix.markdown(data)
    first = md[md.index("## What users hit") : md.index("## Frameworks")]
    assert "1 of 2 configurations has" in first and "| Fake | lossy | defaults |  | 1 |" in first
    assert "odd-shape" not in first and "clean" not in first
    other = md[md.index("## Other shapes") : md.index("## Failures")]
    assert "odd-shape" in other and "never produced" in other
    assert "| Fake | clean | defaults | core | ✓ | n/a | 1 |" in md  # not applicable under a declaration: n/a, not ✓


def test_matrix_says_what_a_finding_needs():
    """A crash lists every exception type with the faults that raised it (not only the first), and a
    lost system message says which system messages its history held: a reader sees who hits it."""
    from compaction_suite.matrix.verdicts import shown_with

    faults = "conformance/tests/test_faults.py::test_no_failed_summary_replaces_history"
    crash = {
        "reason": "compact raised OpenAIAPIError: 500 (seen in ...)",
        "failures": [
            {"test": f"{faults}[500]", "reason": "compact raised OpenAIAPIError: Error code: 500"},
            {"test": f"{faults}[503]", "reason": "compact raised OpenAIAPIError: Error code: 503"},
            {"test": f"{faults}[no_choices]", "reason": "compact raised IndexError: list index out of range"},
        ],
    }
    assert shown_with("CORE-10", crash) == "OpenAIAPIError under 500, 503; IndexError under no_choices"
    system, user = {"role": "system", "content": "s"}, {"role": "user", "content": "q"}
    assert shown_with("CORE-3", {"history": [system, system, user]}) == "2 leading system messages"
    assert shown_with("CORE-3", {"history": [system, user, system]}) == "a system message after the first other message"
    assert shown_with("CORE-3", {"history": [system, user]}) is None
    assert shown_with("CORE-1", {"history": [system, system, user]}) is None


def test_matrix_clause_tables_per_wire_format(tmp_path):
    """Each wire format gets its own clause table, without columns for the other formats' clauses."""
    import compaction_suite.matrix as matrix

    def result(name: str, wire_format: str, own: str) -> dict:
        clauses = {"CORE-1": {"status": "pass", "level": "MUST", "title": "t"}, own: {"status": "pass", "level": "MUST", "title": "t"}}
        clauses |= {other: {"status": "not-applicable", "level": "MUST", "title": "t"} for other in ("RESP-1", "ANTH-1") if other != own}
        return {
            "framework": "Fake", "versions": {}, "compactor": name, "target": f"fake:{name}", "options": {}, "configuration": "defaults",
            "command": "c", "why": "", "native": True, "exit_code": 0, "seconds": 1.0, "status": "conforms", "profiles_claimed": ["core"],
            "passed": True, "clauses": clauses, "capabilities": {"wire_format": wire_format},
        }  # fmt: skip

    runs = [result("items", "responses", "RESP-1"), result("blocks", "anthropic-messages", "ANTH-1")]
    md = matrix.markdown(matrix.build(runs, [{"framework": "Fake", "installed": True, "versions": {}}], True, None, tmp_path, 1.0))
    by_clause = md[md.index("## Clause by clause") : md.index("## Failures")]
    responses = by_clause[by_clause.index("### responses") : by_clause.index("### anthropic-messages")]
    anthropic = by_clause[by_clause.index("### anthropic-messages") :]
    assert "RESP-1" in responses and "ANTH-1" not in responses
    assert "ANTH-1" in anthropic and "RESP-1" not in anthropic


@pytest.mark.parametrize(
    ("module", "factory", "options"),
    [
        ("agent_framework", "summarization", {"target_count": 4, "threshold": 2}),
        ("semantic_kernel", "summarization_reducer", {"target_count": 4}),
    ],
)
def test_a_summarizer_window_is_declared_only_when_given(module, factory, options, suite_settings):
    """Agent Framework's and Semantic Kernel's summarizers do not know their deployment's window: a
    given ``summarizer_window`` is declared (SPEC WIN-1 applies), none is declared by default."""
    adapter = importlib.import_module(f"compaction_suite.adapters.{module}")
    make = getattr(adapter, factory)
    assert "summarizer_window" not in make(suite_settings, **options).capabilities
    assert make(suite_settings, **options, summarizer_window=8000).capabilities["summarizer_window"] == 8000

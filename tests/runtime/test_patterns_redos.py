"""A device's ``pattern`` cannot stall the backend (issue 40, item 1).

A hostile device reports ``^(\\w+\\s?)*$``; an LLM, led by the tool's description, sends a
46-character sentence that almost matches. Python's backtracking ``re`` blocked the event
loop for about 13 s on that; every pattern now runs on RE2 (linear time), so the call is
refused at once and a ticker task on the same loop never misses a beat. A pattern RE2
cannot run is refused at session setup: the tool carries the reason (``ToolInfo.refused``),
setup logs it, a validated call raises :class:`UnsupportedPattern` and sends nothing, and
the device's other tools keep working. Both builds run these (compiled and pure Python).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
from looplag import ALL_A, EVIL_PATTERN, MAX_LAG, SENTENCE, Ticker
from runtime_fakes import FakeCore

from mcpgen.runtime import Device
from mcpgen.runtime.core import validate
from mcpgen.runtime.errors import UnsupportedPattern, ValidationError

EVIL = EVIL_PATTERN


def hostile_tools() -> list[dict[str, Any]]:
    return [
        {
            "name": "self.hostile.say",
            "description": "Says a sentence (write it as words, each followed by one space).",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string", "pattern": EVIL}},
                "required": ["text"],
            },
        },
        {
            "name": "self.hostile.echo",
            "description": "A backreference: RE2 has none.",
            "inputSchema": {
                "type": "object",
                "properties": {"word": {"type": "string", "pattern": r"^(a+)\1$"}},
            },
        },
    ]


class Loopback:
    """Hands frames straight to a FakeCore and its replies straight back."""

    def __init__(self, core: FakeCore) -> None:
        self.core = core
        self.device: Any = None
        self.sent: list[dict[str, Any]] = []

    async def send(self, data: bytes) -> None:
        msg = json.loads(data)
        self.sent.append(msg)
        asyncio.get_running_loop().create_task(self._answer(msg))

    async def _answer(self, msg: dict[str, Any]) -> None:
        reply = await self.core.handle(msg)
        if reply is not None:
            self.device.feed(json.dumps(reply).encode())

    async def close(self) -> None:
        pass


async def hostile_device() -> tuple[Device, Loopback]:
    core = FakeCore(extra_tools=False)
    core.tools += hostile_tools()
    link = Loopback(core)
    device = Device(link, device_id="hostile", call_timeout=5)
    link.device = device
    await device.setup()  # no fingerprint expected: dynamic mode, the reported schemas rule
    assert device.dynamic
    return device, link


async def test_device_pattern_redos_answers_at_once_and_the_loop_keeps_ticking() -> None:
    device, link = await hostile_device()
    calls = 20
    async with Ticker() as ticker:
        started = time.perf_counter()
        done = 0
        while done < calls:
            with pytest.raises(ValidationError) as info:
                await device.call("self.hostile.say", {"text": SENTENCE})
            done += 1
            if time.perf_counter() - started > MAX_LAG:
                break  # stalled (the old `re` took ~13 s a call): the ticker shows it, no need for 20
        ms = (time.perf_counter() - started) * 1000 / done
    print(f"\nruntime Device.call, {EVIL} vs a 46-character sentence: {ms:.3f} ms per validation")
    assert info.value.argument == "text" and info.value.rule == "pattern"
    assert ticker.max_gap < MAX_LAG, f"the loop stalled {ticker.max_gap * 1000:.0f} ms"
    assert not [m for m in link.sent if m.get("method") == "tools/call"]  # nothing was sent
    assert len(SENTENCE) == len(ALL_A) == 46
    with pytest.raises(ValidationError):  # the sentence `re` would never finish
        await device.call("self.hostile.say", {"text": ALL_A})
    # a sentence that matches goes through
    assert await device.call("self.hostile.say", {"text": "hello world "}) is not None
    await device.close()


async def test_unsupported_pattern_is_refused_at_setup_and_the_rest_works(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcpgen.runtime.session.device"):
        device, link = await hostile_device()
    echo = device.tool("self.hostile.echo")
    assert echo.refused is not None and "RE2 cannot compile it" in echo.refused
    assert device.tool("self.hostile.say").refused is None
    logged = [r.getMessage() for r in caplog.records if "self.hostile.echo" in r.getMessage()]
    assert logged and "refused" in logged[0] and "UnsupportedPattern" in logged[0], logged
    with pytest.raises(UnsupportedPattern) as info:
        await device.call("self.hostile.echo", {"word": "aa"})
    err = info.value
    assert isinstance(err, ValidationError) and err.rule == "pattern" and err.argument == "word"
    assert err.pattern == r"^(a+)\1$" and "RE2 cannot compile it" in err.reason
    assert not [m for m in link.sent if m.get("method") == "tools/call"]
    # the other tools of the device work; an explicit opt-out of validation still sends
    assert await device.call("self.counter.add", {"amount": 2}) == 2
    assert await device.call("self.hostile.echo", {"word": "aa"}, validate=False) is not None
    await device.close()


def test_work_per_check_is_bounded_by_value_length_times_program_size() -> None:
    pat = validate.compile_pattern("^[a-z]+$")
    assert pat.max_subject == validate.MAX_PATTERN_WORK // pat.program_size
    v = validate.SchemaValidator({"properties": {"s": {"type": "string", "pattern": "^[a-z]+$"}}})
    assert v.validate({"s": "a" * pat.max_subject}) == {"s": "a" * pat.max_subject}
    with pytest.raises(ValidationError) as info:
        v.validate({"s": "a" * (pat.max_subject + 1)})
    assert info.value.rule == "pattern" and "too long to be checked" in info.value.message
    # a device cannot pass off an enormous program either: RE2's memory budget refuses it
    with pytest.raises(UnsupportedPattern) as big:
        validate.compile_pattern("(((a{100}){100}){100})")
    assert "RE2 cannot compile it" in big.value.reason
    with pytest.raises(UnsupportedPattern) as long_text:
        validate.compile_pattern("a" * 10_000)
    assert "characters long" in long_text.value.reason


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        (r"^\u0041+$", "AAA", "aaa"),  # JSON Schema's \uXXXX escape, written \x{0041} for RE2
        (r"^\\u0041$", "\\u0041", "A"),  # an escaped backslash stays a backslash
        (r"^\w+$", "abc_1", "café"),  # \w is ASCII, as in JSON Schema (ECMA-262)
        (r"^\d{3}$", "123", "١٢٣"),  # so is \d
        (r"^a$", "a", "a\n"),  # $ is the end of the text, not before a final newline
        (r"^\p{Greek}+$", "αβγ", "abc"),  # Unicode classes
    ],
)
def test_pattern_semantics_are_json_schemas(pattern: str, good: str, bad: str) -> None:
    v = validate.SchemaValidator({"properties": {"s": {"type": "string", "pattern": pattern}}})
    assert v.validate({"s": good}) == {"s": good}
    with pytest.raises(ValidationError):
        v.validate({"s": bad})
    assert validate.check_str("s", good, None, None, pattern) == good


@pytest.mark.parametrize(
    "pattern",
    [
        *(r"(a)\1", r"(?=a)", r"(?!a)b", r"(?<=a)b", r"(?<!a)b", r"a++", r"(?>a)", r"a\Z", r"[", "\ud800"),
        "[a-z]{1,1000}" * 3,  # counted repeats past 2,000: slow to compile, refused unread
        r"\p{L}" * 65,  # Unicode classes past 64: the same
    ],
)
def test_what_re2_cannot_run_is_a_typed_refusal(pattern: str) -> None:
    schema = {"properties": {"p": {"type": "string", "pattern": pattern}}}
    assert validate.unsupported_pattern(schema) is not None
    with pytest.raises(UnsupportedPattern):
        validate.SchemaValidator(schema)
    with pytest.raises(UnsupportedPattern):
        validate.check_str("p", "x", None, None, pattern)


def test_surrogates_and_non_ascii_values_are_checked_not_crashed() -> None:
    v = validate.SchemaValidator({"properties": {"s": {"type": "string", "pattern": "^[^x]*$"}}})
    assert v.validate({"s": "é\ud800ü"}) == {"s": "é\ud800ü"}
    with pytest.raises(ValidationError):
        v.validate({"s": "éx"})


def test_bindings_generated_before_re2_still_check_on_re2() -> None:
    """Older generated bindings pass their own compiled ``re`` patterns to ``check_str``:
    the text is run on RE2 (the same verdict, in linear time)."""
    import re

    old_style = re.compile(EVIL)
    with pytest.raises(ValidationError) as info:
        validate.check_str("text", ALL_A, None, None, old_style)
    assert info.value.rule == "pattern"
    assert validate.check_str("text", "hello world ", None, None, old_style) == "hello world "
    assert validate.compile_pattern(old_style) is validate.compile_pattern(EVIL)  # one cache

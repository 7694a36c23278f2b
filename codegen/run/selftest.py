"""``codegen selftest``: checks a device the way an independent MCP client would.

The device is reached the way the bridge and the console reach one, through the runtime's
own transports: a serial port (``--port PATH`` or ``--port auto``, pyserial URLs included),
a program speaking JSON-RPC on stdio (``--device-cmd``, e.g. the host simulator with
``--stdio``), or a device that connects to a gateway this command starts (``--listen``).

Each check prints one line (``PASS``, ``FAIL`` or ``SKIP`` with the reason), then a summary
line; the exit code is 0 when no check failed. ``--format json`` prints one JSON object
instead (docs/firmware.md, "Self-test"). The checks, in order:

* ``initialize``: the result carries ``protocolVersion``, ``serverInfo`` and ``capabilities``;
* ``version negotiation``: a version the device supports is echoed, an unknown one is
  answered with one the device supports (never an error);
* ``parse error`` (-32700), ``invalid request`` (-32600), ``method not found`` (-32601),
  ``invalid params`` (-32602): the JSON-RPC error codes for broken messages;
* ``fingerprint``: the ``mcpgen/fingerprint`` of ``initialize`` against ``--spec``;
* ``tools/list``: the listed tools against the spec (names, schemas, every entry);
* ``tools/list paging``: each page within the page byte limit, cursors lead through
  every tool once, a forged cursor is refused with -32602;
* ``call TOOL``: the tool answers values inside its schema (each bound, each enum value)
  without an error; ``refuse TOOL``: values outside it (past a bound, not in the enum,
  too long, the wrong type) are refused: a tool result with ``isError: true`` or a -32602
  error, as the spec's ``device.errors`` says (the device core does one or the other);
* ``resources``: listed and readable, against the spec; an unknown URI is refused;
* ``events``: the events the device sent during the calls are declared, with valid params;
* ``latency``: p50 and p99 of N round trips (a read-only tool without arguments, else ping).

Calling tools has side effects on a real board (a lamp switches, a counter moves).
Tools the device marks destructive (``destructiveHint``, e.g. a reboot) are skipped
unless ``--call-destructive``; ``--skip-tool NAME`` skips one more, ``--no-calls`` all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import re
import shlex
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from mcpgen.codegen.run.selftest_args import DEFAULT_CALLS, add_arguments
from mcpgen.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from mcpgen.protocol import DEFAULT_PROTOCOL_VERSION, EVENT_METHOD_PREFIX, PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from mcpgen.codegen.spec.model import Spec
    from mcpgen.runtime import Device

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"

#: A version no device supports: the device must answer it with one of its own.
UNKNOWN_VERSION = "1999-01-01"
DEFAULT_PAGE_LIMIT = 8000  # the xiaozhi default (the spec's device.page_size otherwise)
_STRING_CANDIDATES = ("demo", "demo-device", "a", "0", "A", "hello from mcpgen")


@dataclass
class Check:
    name: str
    status: str
    detail: str = ""

    def line(self) -> str:
        return f"{self.status} {self.name}" + (f": {self.detail}" if self.detail else "")


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    device: dict[str, Any] = field(default_factory=dict)
    latency: dict[str, Any] = field(default_factory=dict)
    out: Optional[Callable[[str], None]] = None  # each check's line as it is made

    def add(self, name: str, status: str, detail: str = "") -> Check:
        c = Check(name, status, detail)
        self.checks.append(c)
        if self.out is not None:
            self.out(c.line())
        return c

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks if c.status == status)

    @property
    def ok(self) -> bool:
        return self.count(FAIL) == 0 and self.count(PASS) > 0

    def summary(self) -> str:
        about = self.device.get("name") or "device"
        return (
            f"selftest {'passed' if self.ok else 'FAILED'}: {self.count(PASS)} passed, "
            f"{self.count(FAIL)} failed, {self.count(SKIP)} skipped ({about} over "
            f"{self.device.get('link', '?')})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "device": self.device,
            "checks": [{"name": c.name, "status": c.status, "detail": c.detail} for c in self.checks],
            "summary": {"passed": self.count(PASS), "failed": self.count(FAIL), "skipped": self.count(SKIP)},
            "latency": self.latency,
        }


@dataclass
class Options:
    spec: Optional[Spec] = None
    calls: int = DEFAULT_CALLS
    no_calls: bool = False
    skip_tools: frozenset[str] = frozenset()
    call_destructive: bool = False
    timeout: float = 10.0


# ------------------------------------------------------------------ values from a schema


def _matches(pattern: Optional[str], text: str) -> bool:
    if pattern is None:
        return True
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


def _in_range(schema: dict[str, Any]) -> Optional[list[Any]]:
    """Values inside ``schema`` (each bound, each enum value); None when none can be made."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return list(enum)
    kind = schema.get("type")
    if kind == "boolean":
        return [True, False]
    if kind in ("integer", "number"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        low = lo if isinstance(lo, (int, float)) else None
        high = hi if isinstance(hi, (int, float)) else None
        values: list[Any]
        if low is not None and high is not None:
            values = [low, high]
        elif low is not None:
            values = [low, low + 1]
        elif high is not None:
            values = [high - 1, high]
        else:
            values = [0, 1]
        return [int(v) if kind == "integer" else v for v in values]
    if kind == "string":
        limit = schema.get("maxLength")
        pattern = schema.get("pattern")
        found = [
            t
            for t in _STRING_CANDIDATES
            if (not isinstance(limit, int) or len(t) <= limit) and _matches(pattern, t)
        ]
        if isinstance(limit, int) and pattern is None:
            found.append("x" * limit)
        return found[:2] or None
    return None


def _out_of_range(name: str, schema: dict[str, Any]) -> list[tuple[str, Any]]:
    """(what is wrong, value) pairs the schema forbids."""
    out: list[tuple[str, Any]] = []
    kind = schema.get("type")
    enum = schema.get("enum")
    if kind in ("integer", "number"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        step = 1 if kind == "integer" else 0.5
        if isinstance(lo, (int, float)):
            out.append((f"{name}={lo - step} (minimum {lo})", lo - step))
        if isinstance(hi, (int, float)):
            out.append((f"{name}={hi + step} (maximum {hi})", hi + step))
        out.append((f'{name}="7" (a string, not {kind})', "7"))
    elif kind == "string":
        if isinstance(enum, list) and enum:
            out.append((f'{name}="no-such-value" (not in {enum})', "no-such-value"))
        limit = schema.get("maxLength")
        if isinstance(limit, int):
            out.append((f"{name} of {limit + 1} characters (maxLength {limit})", "a" * (limit + 1)))
        pattern = schema.get("pattern")
        if pattern is not None and not _matches(pattern, "!!"):
            out.append((f'{name}="!!" (pattern {pattern})', "!!"))
        out.append((f"{name}=7 (a number, not a string)", 7))
    elif kind == "boolean":
        out.append((f'{name}="yes" (a string, not boolean)', "yes"))
    return out


def argument_sets(schema: dict[str, Any]) -> Optional[list[dict[str, Any]]]:
    """In-range argument objects for a tool's ``inputSchema``: all low values, all high
    values (each enum value at least once); None when a property has no valid value."""
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return [{}]
    values: dict[str, list[Any]] = {}
    for name, sub in props.items():
        got = _in_range(sub if isinstance(sub, dict) else {})
        if got is None:
            return None
        values[name] = got
    width = max(len(v) for v in values.values())
    return [{n: v[min(i, len(v) - 1)] for n, v in values.items()} for i in range(width)]


def bad_arguments(schema: dict[str, Any], base: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Argument objects with one value out of range each, the others as in ``base``."""
    props = schema.get("properties")
    out: list[tuple[str, dict[str, Any]]] = []
    if isinstance(props, dict):
        for name, sub in props.items():
            for what, value in _out_of_range(name, sub if isinstance(sub, dict) else {}):
                out.append((what, {**base, name: value}))
    return out


def _valid(value: Any, schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if kind == "integer" and not float(value).is_integer():
            return False
        lo, hi = schema.get("minimum"), schema.get("maximum")
        return (lo is None or value >= lo) and (hi is None or value <= hi)
    if kind == "string":
        if not isinstance(value, str):
            return False
        enum, limit = schema.get("enum"), schema.get("maxLength")
        return (
            (not enum or value in enum)
            and (not isinstance(limit, int) or len(value) <= limit)
            and _matches(schema.get("pattern"), value)
        )
    return True


# ------------------------------------------------------------------------- the checks


def _short(value: Any, limit: int = 120) -> str:
    text = (
        json.dumps(value, ensure_ascii=False, separators=(",", ":")) if not isinstance(value, str) else value
    )
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _compact_size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON (UTF-8, non-ASCII unescaped: what the device writes)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    k = max(0, min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[k]


class _Probe:
    """Raw exchanges with a connected :class:`Device`: its replies to requests the runtime
    did not send (error replies with an id of ours or id null) are caught here."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.errors: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.notifications: list[tuple[str, dict[str, Any]]] = []
        self._seq = 0
        original = device.handle_frame
        from mcpgen.runtime.core import wire

        def handle_frame(frame: Any, data: Any) -> None:
            if frame.kind == wire.FRAME_ERROR:
                self.errors.put_nowait({"id": frame.id, "error": frame.error})
                return
            original(frame, data)

        device.handle_frame = handle_frame  # type: ignore[method-assign]
        device.on_notification(lambda method, params: self.notifications.append((method, params)))

    def _wrap(self, payload: dict[str, Any]) -> bytes:
        from mcpgen.runtime.core import wire

        return wire.encode_envelope(self.device.session_id, payload)

    async def send_raw(self, data: bytes) -> None:
        await self.device._send(data)

    def next_id(self) -> str:
        self._seq += 1
        return f"selftest-{self._seq}"

    async def error_reply(self, data: bytes, timeout: float) -> Optional[dict[str, Any]]:
        """Sends ``data`` and returns the error reply that follows (None: none came)."""
        while not self.errors.empty():
            self.errors.get_nowait()
        await self.send_raw(data)
        try:
            return await asyncio.wait_for(self.errors.get(), timeout)
        except TimeoutError:
            return None


def _code_of(reply: Optional[dict[str, Any]]) -> Any:
    err = reply.get("error") if reply else None
    return err.get("code") if isinstance(err, dict) else None


async def _expect_code(
    report: Report, name: str, want: int, attempts: Sequence[tuple[str, Callable[[], Awaitable[Any]]]]
) -> None:
    """Each attempt must end in a JSON-RPC error ``want``."""
    from mcpgen.runtime import RpcError

    for what, attempt in attempts:
        try:
            got = await attempt()
        except RpcError as exc:
            if exc.code != want:
                report.add(name, FAIL, f"{what}: error {exc.code} ({exc.args[1]}), expected {want}")
                return
            continue
        except TimeoutError:
            report.add(name, FAIL, f"{what}: no reply")
            return
        if isinstance(got, dict) and "error" in got:  # a raw error reply
            code = _code_of(got)
            if code != want:
                report.add(name, FAIL, f"{what}: error {code}, expected {want}")
                return
            continue
        report.add(
            name,
            FAIL,
            f"{what}: {'no reply' if got is None else 'answered ' + _short(got)}, expected error {want}",
        )
        return
    report.add(name, PASS, f"{want} for {', '.join(w for w, _ in attempts)}")


async def _raw_error(
    probe: _Probe, payload: Optional[dict[str, Any]], text: Optional[bytes], timeout: float
) -> Optional[dict[str, Any]]:
    data = text if text is not None else probe._wrap(payload or {})
    return await probe.error_reply(data, timeout)


async def check_initialize(device: Device, report: Report, opts: Options) -> None:
    res = device.initialize_result
    missing = [k for k in ("protocolVersion", "capabilities", "serverInfo") if k not in res]
    got_si = res.get("serverInfo")
    si: dict[str, Any] = got_si if isinstance(got_si, dict) else {}
    if missing or not isinstance(si.get("name"), str):
        report.add(
            "initialize", FAIL, f"the result lacks {', '.join(missing) or 'serverInfo.name'}: {_short(res)}"
        )
    elif not isinstance((res.get("capabilities") or {}).get("tools"), dict):
        report.add("initialize", FAIL, f"capabilities has no tools object: {_short(res.get('capabilities'))}")
    else:
        report.add(
            "initialize", PASS, f"{si.get('name')} {si.get('version', '')} protocol {res['protocolVersion']}"
        )
    # Version negotiation: what the device speaks comes back; an unknown version gets one
    # the device supports.
    params = {"capabilities": {}, "clientInfo": {"name": "mcpgen-selftest", "version": "1"}}
    own = opts.spec.device.protocol_version if opts.spec is not None else device.protocol_version
    try:
        asked = own or DEFAULT_PROTOCOL_VERSION
        got = await device.request("initialize", {**params, "protocolVersion": asked}, timeout=opts.timeout)
        if got.get("protocolVersion") != asked:
            report.add(
                "version negotiation",
                FAIL,
                f"asked {asked} (the device's own), got {got.get('protocolVersion')!r}",
            )
            return
        got = await device.request(
            "initialize", {**params, "protocolVersion": UNKNOWN_VERSION}, timeout=opts.timeout
        )
    except Exception as exc:
        report.add("version negotiation", FAIL, f"initialize failed: {exc}")
        return
    answer = got.get("protocolVersion") if isinstance(got, dict) else None
    if answer not in PROTOCOL_VERSIONS:
        report.add(
            "version negotiation",
            FAIL,
            f"asked {UNKNOWN_VERSION}, got {answer!r} (expected one of {', '.join(PROTOCOL_VERSIONS)})",
        )
    elif opts.spec is not None and answer != opts.spec.device.protocol_version:
        report.add(
            "version negotiation",
            FAIL,
            f"asked {UNKNOWN_VERSION}, got {answer} (the spec's is {opts.spec.device.protocol_version})",
        )
    else:
        report.add("version negotiation", PASS, f"{asked} echoed; {UNKNOWN_VERSION} answered with {answer}")
    await device.notify("notifications/initialized")


async def check_errors(device: Device, probe: _Probe, report: Report, opts: Options) -> None:
    t = opts.timeout

    def raw(
        payload: Optional[dict[str, Any]] = None, text: Optional[bytes] = None
    ) -> Callable[[], Awaitable[Any]]:
        return lambda: _raw_error(probe, payload, text, t)

    await _expect_code(
        report,
        "parse error",
        PARSE_ERROR,
        [
            ("a line that is not JSON", raw(text=b'{"jsonrpc":"2.0","id":1,"method":')),
        ],
    )
    await _expect_code(
        report,
        "invalid request",
        INVALID_REQUEST,
        [
            ("a numeric method", raw({"jsonrpc": "2.0", "id": probe.next_id(), "method": 42})),
            ('"jsonrpc": "1.0"', raw({"jsonrpc": "1.0", "id": probe.next_id(), "method": "ping"})),
        ],
    )
    await _expect_code(
        report,
        "method not found",
        METHOD_NOT_FOUND,
        [
            ("selftest/no_such_method", lambda: device.request("selftest/no_such_method", {}, timeout=t)),
        ],
    )
    await _expect_code(
        report,
        "invalid params",
        INVALID_PARAMS,
        [
            (
                "tools/call with a numeric name",
                lambda: device.request("tools/call", {"name": 5, "arguments": {}}, timeout=t),
            ),
            (
                "tools/list with a numeric cursor",
                lambda: device.request("tools/list", {"cursor": 5}, timeout=t),
            ),
        ],
    )


def check_fingerprint(device: Device, report: Report, opts: Options) -> None:
    got = device.fingerprint
    if opts.spec is None:
        report.add("fingerprint", SKIP, f"no --spec to compare with (the device reports {got})")
    elif got != opts.spec.fingerprint:
        report.add(
            "fingerprint",
            FAIL,
            f"the device reports {got}, the spec's is {opts.spec.fingerprint} "
            "(flash the firmware built from this spec, or pass the spec it was built from)",
        )
    else:
        report.add("fingerprint", PASS, got or "")


async def _pages(device: Device, opts: Options, with_user: bool) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = []
    cursor: Optional[str] = ""
    seen: set[str] = set()
    while cursor is not None and len(pages) < 1000:
        page = await device.request(
            "tools/list", {"cursor": cursor, "withUserTools": with_user}, timeout=opts.timeout
        )
        pages.append(page)
        nxt = page.get("nextCursor") if isinstance(page, dict) else None
        if not isinstance(nxt, str) or not nxt:
            break
        if nxt in seen:
            raise ValueError(f"cursor {nxt!r} repeats")
        seen.add(nxt)
        cursor = nxt
    return pages


async def check_tools_list(device: Device, report: Report, opts: Options) -> list[dict[str, Any]]:
    """``tools/list`` against the spec and its paging; returns the tools as listed."""
    limit = opts.spec.device.page_size if opts.spec is not None else DEFAULT_PAGE_LIMIT
    try:
        pages = await _pages(device, opts, True)
    except Exception as exc:
        report.add("tools/list", FAIL, f"{type(exc).__name__}: {exc}")
        return []
    listed: list[dict[str, Any]] = []
    for page in pages:
        tools = page.get("tools") if isinstance(page, dict) else None
        listed.extend(t for t in (tools or []) if isinstance(t, dict))
    names = [t.get("name") for t in listed]
    if opts.spec is None:
        bad = [
            t
            for t in listed
            if not isinstance(t.get("name"), str) or not isinstance(t.get("inputSchema"), dict)
        ]
        if bad:
            report.add("tools/list", FAIL, f"an entry without a name or inputSchema: {_short(bad[0])}")
        else:
            report.add("tools/list", PASS, f"{len(listed)} tools (no --spec: names and schemas not compared)")
    else:
        from mcpgen.codegen.spec.mcp_json import tools_list

        expected = {e["name"]: e for e in tools_list(opts.spec, with_user_tools=True)}
        got = {t.get("name"): t for t in listed}
        missing = [n for n in expected if n not in got]
        extra = [str(n) for n in got if n not in expected]
        dups = sorted({str(n) for n in names if names.count(n) > 1})
        differ = [n for n in expected if n in got and got[n] != expected[n]]
        if missing or extra or dups or differ:
            parts = []
            if missing:
                parts.append(f"missing {', '.join(missing)}")
            if extra:
                parts.append(f"not in the spec {', '.join(extra)}")
            if dups:
                parts.append(f"listed twice {', '.join(dups)}")
            for n in differ[:3]:
                keys = sorted(
                    k for k in set(expected[n]) | set(got[n]) if expected[n].get(k) != got[n].get(k)
                )
                shown = _short({k: got[n].get(k) for k in keys}, 80)
                parts.append(f"{n} differs in {', '.join(keys)} (device {shown})")
            report.add("tools/list", FAIL, "; ".join(parts))
        else:
            report.add("tools/list", PASS, f"{len(listed)} tools, every entry as in the spec")
    # Paging: every page within the limit, and a forged cursor refused.
    sizes = [_compact_size(p) for p in pages]
    over = [(i, s) for i, s in enumerate(sizes) if s > limit]
    if over:
        i, s = over[0]
        report.add(
            "tools/list paging", FAIL, f"page {i + 1} of {len(pages)} is {s} bytes, over the limit of {limit}"
        )
        return listed
    try:
        hidden = [t.get("name") for p in await _pages(device, opts, False) for t in p.get("tools") or []]
        await device.request("tools/list", {"cursor": "ffffffffffff"}, timeout=opts.timeout)
    except Exception as exc:
        from mcpgen.runtime import RpcError

        if not isinstance(exc, RpcError) or exc.code != INVALID_PARAMS:
            report.add("tools/list paging", FAIL, f"a forged cursor: {exc} (expected error {INVALID_PARAMS})")
            return listed
    else:
        report.add(
            "tools/list paging", FAIL, f"a forged cursor was accepted (expected error {INVALID_PARAMS})"
        )
        return listed
    user_only = [t.get("name") for t in listed if _audience_user_only(t)]
    shown_user = [n for n in hidden if n in user_only]
    if shown_user:
        who = ", ".join(map(str, shown_user))
        report.add("tools/list paging", FAIL, f"user-only {who} listed without withUserTools")
        return listed
    report.add(
        "tools/list paging",
        PASS,
        f"{len(pages)} page(s) of at most {max(sizes, default=0)} bytes "
        f"(limit {limit}); forged cursor refused",
    )
    return listed


def _audience_user_only(tool: dict[str, Any]) -> bool:
    ann = tool.get("annotations")
    aud = ann.get("audience") if isinstance(ann, dict) else None
    return isinstance(aud, list) and "user" in aud and "assistant" not in aud


def _destructive(tool: dict[str, Any]) -> bool:
    ann = tool.get("annotations")
    return isinstance(ann, dict) and ann.get("destructiveHint") is True


async def check_calls(
    device: Device, report: Report, opts: Options, listed: Iterable[dict[str, Any]]
) -> None:
    errors_style = opts.spec.device.errors if opts.spec is not None else None
    for tool in listed:
        name = tool.get("name")
        schema = tool.get("inputSchema")
        if not isinstance(name, str) or not isinstance(schema, dict):
            continue
        why = (
            "--no-calls"
            if opts.no_calls
            else "--skip-tool"
            if name in opts.skip_tools
            else "destructive (--call-destructive calls it)"
            if _destructive(tool) and not opts.call_destructive
            else None
        )
        if why is not None:
            report.add(f"call {name}", SKIP, why)
            report.add(f"refuse {name}", SKIP, why)
            continue
        sets = argument_sets(schema)
        if sets is None:
            report.add(f"call {name}", SKIP, "no value can be made for one of its parameters")
            report.add(f"refuse {name}", SKIP, "no value can be made for one of its parameters")
            continue
        await _call_in_range(device, report, opts, name, sets)
        await _call_out_of_range(device, report, opts, name, bad_arguments(schema, sets[0]), errors_style)


async def _call_in_range(
    device: Device, report: Report, opts: Options, name: str, sets: list[dict[str, Any]]
) -> None:
    for args in sets:
        try:
            res = await device.request("tools/call", {"name": name, "arguments": args}, timeout=opts.timeout)
        except Exception as exc:
            report.add(f"call {name}", FAIL, f"{_short(args)}: {type(exc).__name__}: {exc}")
            return
        if not isinstance(res, dict) or not isinstance(res.get("content"), list):
            report.add(f"call {name}", FAIL, f"{_short(args)}: a result without content: {_short(res)}")
            return
        if res.get("isError") is True:
            report.add(f"call {name}", FAIL, f"{_short(args)}: refused in range: {_short(res['content'])}")
            return
    report.add(f"call {name}", PASS, f"{len(sets)} call(s) in range answered: {_short(sets, 80)}")


async def _call_out_of_range(
    device: Device,
    report: Report,
    opts: Options,
    name: str,
    bad: list[tuple[str, dict[str, Any]]],
    errors_style: Optional[str],
) -> None:
    from mcpgen.runtime import RpcError

    if not bad:
        report.add(f"refuse {name}", SKIP, "no parameter with a bound, an enum or a type to break")
        return
    how = set()
    for what, args in bad:
        try:
            res = await device.request("tools/call", {"name": name, "arguments": args}, timeout=opts.timeout)
        except RpcError as exc:
            if exc.code != INVALID_PARAMS:
                report.add(
                    f"refuse {name}", FAIL, f"{what}: error {exc.code}, expected {INVALID_PARAMS} or isError"
                )
                return
            if errors_style == "mcp":
                report.add(
                    f"refuse {name}",
                    FAIL,
                    f"{what}: error {exc.code}, but the spec's device.errors "
                    "is mcp (a result with isError: true)",
                )
                return
            how.add(f"error {INVALID_PARAMS}")
            continue
        except Exception as exc:
            report.add(f"refuse {name}", FAIL, f"{what}: {type(exc).__name__}: {exc}")
            return
        if not isinstance(res, dict) or res.get("isError") is not True:
            report.add(f"refuse {name}", FAIL, f"{what} was accepted: {_short(res)}")
            return
        if errors_style == "jsonrpc":
            report.add(
                f"refuse {name}", FAIL, f"{what}: isError, but the spec's device.errors is jsonrpc (-32602)"
            )
            return
        how.add("isError")
    report.add(f"refuse {name}", PASS, f"{len(bad)} value(s) out of range refused ({', '.join(sorted(how))})")


async def check_resources(device: Device, report: Report, opts: Options) -> None:
    declared = opts.spec.resources if opts.spec is not None else ()
    if "resources" not in device.capabilities:
        if declared:
            report.add(
                "resources",
                FAIL,
                f"the spec declares {len(declared)} resource(s), the device has no resources capability",
            )
        else:
            report.add("resources", SKIP, "the device declares no resources")
        return
    try:
        listed = await device.list_resources(timeout=opts.timeout)
        templates = await device.list_resource_templates(timeout=opts.timeout)
    except Exception as exc:
        report.add("resources", FAIL, f"listing: {type(exc).__name__}: {exc}")
        return
    uris = [r.get("uri") for r in listed]
    tmpl = [t.get("uriTemplate") for t in templates]
    if opts.spec is not None:
        want_uris = sorted(r.uri for r in declared if r.uri is not None)
        want_tmpl = sorted(r.uri_template for r in declared if r.uri_template is not None)
        if sorted(map(str, uris)) != want_uris or sorted(map(str, tmpl)) != want_tmpl:
            report.add(
                "resources",
                FAIL,
                f"listed {uris} and templates {tmpl}, the spec has {want_uris} and {want_tmpl}",
            )
            return
    for uri in uris:
        try:
            await device.read_resource(str(uri), timeout=opts.timeout)
        except Exception as exc:
            report.add("resources", FAIL, f"reading {uri}: {type(exc).__name__}: {exc}")
            return
    try:
        await device.request("resources/read", {"uri": "selftest://no/such/resource"}, timeout=opts.timeout)
    except Exception as exc:
        from mcpgen.runtime import RpcError

        if not isinstance(exc, RpcError):
            report.add("resources", FAIL, f"reading an unknown URI: {type(exc).__name__}: {exc}")
            return
    else:
        report.add("resources", FAIL, "reading an unknown URI succeeded (expected a JSON-RPC error)")
        return
    report.add(
        "resources",
        PASS,
        f"{len(uris)} resource(s) read, {len(tmpl)} template(s) listed; unknown URI refused",
    )


def check_events(probe: _Probe, report: Report, opts: Options) -> None:
    seen = [
        (m[len(EVENT_METHOD_PREFIX) :], p)
        for m, p in probe.notifications
        if m.startswith(EVENT_METHOD_PREFIX)
    ]
    if opts.spec is None:
        report.add("events", SKIP, f"no --spec to compare with ({len(seen)} event(s) seen)")
        return
    declared = {e.name: e for e in opts.spec.events}
    if not declared and not seen:
        report.add("events", SKIP, "the spec declares no events")
        return
    from mcpgen.codegen.spec.mcp_json import param_schema

    for name, params in seen:
        event = declared.get(name)
        if event is None:
            report.add("events", FAIL, f"{EVENT_METHOD_PREFIX}{name} is not declared in the spec")
            return
        for p in event.params:
            if p.name not in params or not _valid(params[p.name], param_schema(p)):
                report.add(
                    "events",
                    FAIL,
                    f"{name}: {p.name}={_short(params.get(p.name))} breaks the spec "
                    f"({_short(param_schema(p))})",
                )
                return
        extra = set(params) - {p.name for p in event.params}
        if extra:
            report.add("events", FAIL, f"{name}: undeclared params {', '.join(sorted(extra))}")
            return
    if not seen:
        report.add(
            "events",
            SKIP,
            f"{len(declared)} declared, none sent during the calls (a device sends events on its own)",
        )
        return
    names = sorted({n for n, _ in seen})
    report.add("events", PASS, f"{len(seen)} event(s) as declared: {', '.join(names)}")


async def check_latency(device: Device, report: Report, opts: Options, listed: list[dict[str, Any]]) -> None:
    if opts.calls <= 0:
        report.add("latency", SKIP, "--calls 0")
        return
    probe_tool = None
    if not opts.no_calls:
        for t in listed:
            got_ann, got_schema = t.get("annotations"), t.get("inputSchema")
            ann: dict[str, Any] = got_ann if isinstance(got_ann, dict) else {}
            schema: dict[str, Any] = got_schema if isinstance(got_schema, dict) else {}
            if (
                ann.get("readOnlyHint") is True
                and not schema.get("required")
                and t.get("name") not in opts.skip_tools
            ):
                probe_tool = t.get("name")
                break

    async def once() -> Any:
        if probe_tool is None:
            return await device.request("ping", None, timeout=opts.timeout)
        return await device.request("tools/call", {"name": probe_tool, "arguments": {}}, timeout=opts.timeout)

    took: list[float] = []
    try:
        for _ in range(opts.calls):
            t0 = time.perf_counter()
            await once()
            took.append((time.perf_counter() - t0) * 1000.0)
    except Exception as exc:
        report.add("latency", FAIL, f"round trip {len(took) + 1}: {type(exc).__name__}: {exc}")
        return
    took.sort()
    what = f"tools/call {probe_tool}" if probe_tool else "ping"
    p50, p99 = _percentile(took, 0.5), _percentile(took, 0.99)
    report.latency = {
        "method": what,
        "calls": len(took),
        "p50_ms": round(p50, 3),
        "p99_ms": round(p99, 3),
        "max_ms": round(took[-1], 3),
    }
    report.add("latency", PASS, f"{what}: p50 {p50:.2f} ms, p99 {p99:.2f} ms over {len(took)} calls")


async def run_checks(device: Device, report: Report, opts: Options) -> Report:
    """Every check against a connected device (the session already set up)."""
    probe = _Probe(device)
    report.device.update(
        {
            "name": device.server_info.get("name"),
            "version": device.server_info.get("version"),
            "protocol": device.protocol_version,
            "fingerprint": device.fingerprint,
        }
    )
    await check_initialize(device, report, opts)
    await check_errors(device, probe, report, opts)
    check_fingerprint(device, report, opts)
    listed = await check_tools_list(device, report, opts)
    await check_calls(device, report, opts, listed)
    await check_resources(device, report, opts)
    await asyncio.sleep(0)  # notifications read with the last replies are delivered
    check_events(probe, report, opts)
    await check_latency(device, report, opts, listed)
    return report


# ------------------------------------------------------------------------- connecting


async def _connected(
    args: argparse.Namespace, report: Report, opts: Options
) -> Optional[tuple[Device, Callable[[], Awaitable[None]]]]:
    """The device named by the arguments, ready; None (the ``connect`` check failed) when not."""
    from mcpgen.runtime import connect_process, connect_serial

    t = args.connect_timeout
    try:
        if args.device_cmd:
            argv = shlex.split(args.device_cmd)
            report.device["link"] = f"stdio ({argv[0]})"
            dev = await connect_process(argv, stderr="log", setup_timeout=t, call_timeout=opts.timeout)
            return dev, dev.close
        if args.listen:
            from mcpgen.runtime import Gateway

            host, _, port = args.listen.rpartition(":")
            gw = Gateway(host or "127.0.0.1", int(port), call_timeout=opts.timeout)
            await gw.start()
            report.device["link"] = f"gateway ws://{host or '127.0.0.1'}:{gw.port}"
            if args.on_listen is not None:
                args.on_listen(gw.port)
            try:
                dev = await gw.wait_for_device(timeout=t)
            except BaseException:
                await gw.close()
                raise

            async def close_all() -> None:
                await dev.close()
                await gw.close()

            return dev, close_all
        report.device["link"] = f"serial {args.port}"
        dev = await connect_serial(args.port, baudrate=args.baud, setup_timeout=t, call_timeout=opts.timeout)
        return dev, dev.close
    except Exception as exc:
        report.add("connect", FAIL, f"{type(exc).__name__}: {exc}")
        return None


async def selftest(
    args: argparse.Namespace, opts: Options, out: Optional[Callable[[str], None]] = None
) -> Report:
    report = Report(out=out)
    got = await _connected(args, report, opts)
    if got is None:
        return report
    device, close = got
    report.add("connect", PASS, report.device["link"])
    try:
        await run_checks(device, report, opts)
    finally:
        await close()
    return report


def main(args: argparse.Namespace, *, spec: Optional[Spec], print_line: Callable[[str], None] = print) -> int:
    """``codegen selftest``: returns the exit code (0: every check passed or was skipped)."""
    if not hasattr(args, "on_listen"):
        args.on_listen = None
    if args.format == "text" and args.listen:
        args.on_listen = lambda port: print_line(f"waiting for a device on port {port} ...")
    if args.calls < 0:
        raise ValueError("--calls must be 0 or more")
    opts = Options(
        spec=spec,
        calls=args.calls,
        no_calls=args.no_calls,
        skip_tools=frozenset(args.skip_tool),
        call_destructive=args.call_destructive,
        timeout=args.timeout,
    )
    # The runtime's own warnings (a fingerprint that differs, an error without a request)
    # are what the checks report: keep them off the output.
    runtime_log = logging.getLogger("mcpgen.runtime")
    level = runtime_log.level
    runtime_log.setLevel(logging.ERROR)
    try:
        report = asyncio.run(selftest(args, opts, out=print_line if args.format == "text" else None))
    finally:
        runtime_log.setLevel(level)
    if args.format == "json":
        print_line(json.dumps(report.to_json(), indent=2))
    else:
        print_line(report.summary())
    return 0 if report.ok else 1


__all__ = [
    "Check",
    "Options",
    "Report",
    "add_arguments",
    "argument_sets",
    "bad_arguments",
    "main",
    "run_checks",
    "selftest",
]

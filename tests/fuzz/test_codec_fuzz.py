"""Property fuzzing of the codec and envelope decode (issue 18): only typed errors come out.

Whatever bytes a device sends, ``RpcSession.feed`` / ``decode_frame`` must return (a Frame
or None) and every pending call must end, if at all, with a
:class:`~mcpgen.runtime.errors.McpDeviceError`; ``decode_result`` and ``rpc_error`` may
raise nothing else. Both builds run in one process: the installed module (compiled when
built) and the same source loaded as plain Python.

Budget: about 10-20 s in all (``MCPGEN_FUZZ_EXAMPLES`` scales it for longer runs).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import types
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mcpgen.runtime import _purepy  # noqa: E402
from mcpgen.runtime.core import codec as installed_codec  # noqa: E402
from mcpgen.runtime.errors import McpDeviceError  # noqa: E402

EXAMPLES = int(os.environ.get("MCPGEN_FUZZ_EXAMPLES", "400"))


def _pure_codec() -> ModuleType:
    """The codec (and the compiled modules it re-exports) loaded again from source.

    The hot-path modules are imported a second time from their ``.py`` files while
    ``sys.modules`` holds none of them; afterwards the installed ones are put back, so
    the pure copy's modules refer to each other and the installed ones stay as they were.
    """
    cached = _PURE_CACHE.get("codec")
    if cached is not None:
        return cached
    for name in _purepy.COMPILED_MODULES:
        installed = Path(importlib.import_module(name).__file__ or "")
        if not installed.with_name(name.rpartition(".")[2] + ".py").is_file():
            pytest.skip(f"no source beside {installed}")  # a wheel keeps it there too
    names = [*_purepy.COMPILED_MODULES, "mcpgen.runtime.core.codec"]
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    # importing a submodule also sets it on its package (mcpgen.runtime.core, ...)
    attrs = {n: getattr(sys.modules[n.rpartition(".")[0]], n.rpartition(".")[2]) for n in saved}
    finder = _purepy._SourceFirst(names)
    sys.meta_path.insert(0, finder)
    try:
        mod = importlib.import_module("mcpgen.runtime.core.codec")
    finally:
        sys.meta_path.remove(finder)
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)
        for n, m in attrs.items():
            setattr(sys.modules[n.rpartition(".")[0]], n.rpartition(".")[2], m)
    # interpreted through and through: the session's decoder and the wire format's
    assert isinstance(mod.RpcSession.feed, types.FunctionType)
    assert isinstance(mod.decode_frame, types.FunctionType)
    _PURE_CACHE["codec"] = mod
    return mod


_PURE_CACHE: dict[str, ModuleType] = {}
BUILDS = ["installed", "pure"]


@pytest.fixture(params=BUILDS)
def codec(request: pytest.FixtureRequest) -> ModuleType:
    return installed_codec if request.param == "installed" else _pure_codec()


# -- strategies: JSON values, with the numbers and ids that broke things before -----------

HOSTILE_TEXT = st.one_of(
    st.sampled_from(
        [
            "1e400",
            "-1e400",
            "Infinity",
            "-Infinity",
            "NaN",
            "nan",
            "²",
            "١٢",
            "0x10",
            "1_000",
            " 1 ",
            "",
            "-",
            "1e3",
            "true",
        ]
    ),
    st.integers(4290, 4400).map(lambda n: "7" * n),  # past int()'s 4300-digit limit
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    HOSTILE_TEXT,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.one_of(
    st.integers(min_value=-3, max_value=5),
    st.sampled_from(["1", "2", "²", "01", "1.0", "9" * 30]),
    st.integers(4290, 5000).map(lambda n: "9" * n),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(-5, 5), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(-5, 5), max_size=2),
    st.booleans(),
    st.none(),
)
content_items = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("text"), "text": st.one_of(HOSTILE_TEXT, st.text(max_size=20), json_values)}
    ),
    st.fixed_dictionaries({"type": st.just("image"), "data": json_values, "mimeType": json_values}),
    json_values,
)
results = st.one_of(
    st.fixed_dictionaries(
        {"content": st.one_of(st.lists(content_items, max_size=3), json_values)},
        optional={"isError": json_values, "structuredContent": json_values},
    ),
    json_values,
)
errors = st.one_of(
    st.fixed_dictionaries({}, optional={"code": json_values, "message": json_values, "data": json_values}),
    json_values,
)
payloads = st.one_of(
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": ids, "result": results}),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": ids, "error": errors}),
    st.fixed_dictionaries(
        {"jsonrpc": json_values, "method": json_values}, optional={"id": ids, "params": json_values}
    ),
    st.dictionaries(st.sampled_from(["id", "result", "error", "method", "params", "jsonrpc"]), json_values),
    json_values,
)
frames = st.one_of(
    payloads.map(lambda p: orjson.dumps(p)),
    st.tuples(payloads, json_values, st.sampled_from(["mcp", "hello", None, 3])).map(
        lambda t: orjson.dumps({"session_id": t[1], "type": t[2], "payload": t[0]})
    ),
    st.binary(max_size=64),
    # a valid reply cut or bit-flipped
    st.tuples(payloads, st.integers(0, 200), st.integers(0, 255)).map(
        lambda t: _mutate(orjson.dumps({"session_id": "s", "type": "mcp", "payload": t[0]}), t[1], t[2])
    ),
)


def _mutate(data: bytes, pos: int, byte: int) -> bytes:
    if not data:
        return data
    i = pos % len(data)
    return data[:i] + bytes([byte]) + data[i + 1 :]


KINDS = list(installed_codec.KINDS.values())
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def _check_future(fut: asyncio.Future) -> None:
    if fut.done() and not fut.cancelled():
        exc = fut.exception()
        assert exc is None or isinstance(exc, McpDeviceError), f"untyped {type(exc).__name__}: {exc}"


@given(data=st.lists(frames, min_size=1, max_size=6), kind=st.sampled_from(KINDS), enveloped=st.booleans())
@SETTINGS
def test_feed_ends_calls_only_with_typed_errors(
    codec: ModuleType, data: list[bytes], kind: int, enveloped: bool
) -> None:
    loop = asyncio.new_event_loop()
    try:
        s = codec.RpcSession("s" if enveloped else None)
        futs = [loop.create_future() for _ in range(3)]
        for f in futs:
            s.call("t", {}, f, kind)
        for frame in data:
            out = s.feed(frame)
            assert out is None or isinstance(out, codec.Frame)
        for f in futs:
            _check_future(f)
        s.fail_all(McpDeviceError("end"))
        for f in futs:
            f.exception()  # retrieved: no "never retrieved" noise at garbage collection
    finally:
        loop.close()


@given(frame=frames)
@SETTINGS
def test_decode_frame_never_raises(codec: ModuleType, frame: bytes) -> None:
    f = codec.decode_frame(frame)
    assert f.kind in (0, 1, 2, 3, 4, 5)
    if f.kind in (codec.FRAME_RESULT, codec.FRAME_ERROR):
        for kind in KINDS:
            try:
                f.value(kind)
            except McpDeviceError:
                pass


@given(result=results, kind=st.sampled_from(KINDS))
@SETTINGS
def test_decode_result_raises_only_typed_errors(codec: ModuleType, result: Any, kind: int) -> None:
    try:
        codec.decode_result(result, kind)
    except McpDeviceError:
        pass


@given(err=errors)
@SETTINGS
def test_rpc_error_builds_from_anything(codec: ModuleType, err: Any) -> None:
    e = codec.rpc_error(err)
    assert isinstance(e, McpDeviceError) and isinstance(str(e), str)

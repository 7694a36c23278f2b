"""Section 1: the backend hot path, per message, against what users would pick instead.

Decode: one incoming frame -> the reply matched to its pending request and the result
decoded for the tool's return kind (``Session.feed`` resolving the request's future).
Encode: a validated ``tools/call`` for desk-lamp's ``self.light.set_rgb(r, g, b)``.
Validation alone: the same three arguments against the tool's input schema.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Optional

import orjson

from benchmarks import bindings as bnd
from benchmarks import frames as fr
from benchmarks import sdk_path, xiaozhi_ref
from benchmarks.bindings import Bindings
from benchmarks.harness import Candidate, Comparison, Target, compare, each, loop, loop0
from benchmarks.purepy import import_pure, is_compiled
from mcpgen.codegen.spec import mcp_json

Log = Callable[[str], None]

RUNTIME_MODULES = ("mcpgen.runtime.core.codec", "mcpgen.runtime.core.validate")
# What "compiled" is checked on: codec is a plain module re-exporting these three.
HOT_MODULES = (
    "mcpgen.runtime.core.wire",
    "mcpgen.runtime.core.rpcsession",
    "mcpgen.runtime.core.deadlines",
    "mcpgen.runtime.core.validate",
)
SET_RGB = "self.light.set_rgb"
RGB_ARGS = {"r": 12, "g": 200, "b": 255}

C_RUNTIME = "mcpgen runtime (compiled)"
C_PURE = "mcpgen runtime (pure Python)"
C_FLOOR_LOADS = "orjson.loads (floor)"
C_SDK = "MCP SDK (validate_json + typed result)"
C_XIAOZHI = "xiaozhi-style (json + dict probing + asyncio.Lock)"
C_FLOOR_DUMPS = "orjson.dumps prebuilt dict (floor)"
C_SDK_ENC = "MCP SDK (request model + model_dump_json)"
C_XIAOZHI_ENC = "xiaozhi-style (json.dumps, no validation)"
C_GEN_VAL = "generated validator (compiled)"
C_GEN_VAL_PURE = "generated validator (pure Python)"
C_SCHEMA_VAL = "runtime SchemaValidator (compiled, dynamic mode)"
C_FJS = "fastjsonschema (compiled)"
C_JS = "jsonschema (validator built once)"


@dataclass
class Build:
    """One build of the runtime (compiled or pure) and of the generated bindings."""

    label: str
    codec: ModuleType
    validate: ModuleType
    compiled: bool
    bindings: Bindings


def load_builds(log: Log) -> tuple[Build, Build, dict[str, Any]]:
    """The compiled build (normal import) and the pure-Python one (source-only import)."""
    import importlib

    compiled_mods = {m: importlib.import_module(m) for m in RUNTIME_MODULES + HOT_MODULES}
    gen_mod, comp_bind, _ = bnd.load_compiled(log)
    pure_names = list(dict.fromkeys(RUNTIME_MODULES + HOT_MODULES))
    pure_names += [bnd.MODULE] if gen_mod is not None else []
    pure_mods = import_pure(pure_names)
    if gen_mod is not None:
        pure_bind = bnd.from_module(pure_mods[bnd.MODULE])
    else:
        pure_bind = bnd.fallback(pure_mods["mcpgen.runtime.core.validate"])
    info = {
        "runtime_compiled": {m: is_compiled(compiled_mods[m]) for m in HOT_MODULES},
        "runtime_pure_loaded_from": {m: getattr(pure_mods[m], "__file__", None) for m in HOT_MODULES},
        "pure_is_source": {m: not is_compiled(pure_mods[m]) for m in HOT_MODULES},
        "bindings": comp_bind.describe(),
        "bindings_pure": pure_bind.describe(),
        "pure_loading": "same process: source-only import under a temporarily emptied sys.modules "
        "(benchmarks/purepy.py)",
    }
    comp = Build(
        "compiled",
        compiled_mods["mcpgen.runtime.core.codec"],
        compiled_mods["mcpgen.runtime.core.validate"],
        all(info["runtime_compiled"].values()),
        comp_bind,
    )
    pure_codec = pure_mods["mcpgen.runtime.core.codec"]
    pure_validate = pure_mods["mcpgen.runtime.core.validate"]
    pure = Build("pure Python", pure_codec, pure_validate, False, pure_bind)
    if not comp.compiled:
        log(
            "  WARNING: the runtime is not compiled (no extension modules): run `python setup.py build_ext "
            "--inplace`; the 'compiled' candidate is then pure Python too"
        )
    return comp, pure, info


# ----------------------------------------------------------------------------- decode


def _runtime_decoder(
    build: Build, msg: fr.Message, loop_: asyncio.AbstractEventLoop, retain: bool = False
) -> Callable[[int], Any]:
    """Batches of ``Session.feed`` over frames whose requests are pending.

    The futures are referenced only by the session's pending table (unless ``retain``),
    so each one -- with its decoded value -- is freed as soon as ``feed`` resolved it,
    as when the awaiting caller takes the value and moves on. Keeping thousands of
    decoded results alive would instead charge the decoder for the garbage collector
    walking them (measured: 7x on a tools/list page). Failed futures are always kept, to
    retrieve their exceptions afterwards (asyncio logs unretrieved ones when freed).
    """
    codec = build.codec
    kind = codec.KIND_RAW if msg.kind in ("raw", "error") else codec.kind_code(msg.kind)
    keep = retain or msg.kind == "error"

    def make(n: int) -> Any:
        sess = codec.RpcSession(fr.SESSION_ID)
        ids = range(1, n + 1)
        futs = [loop_.create_future() for _ in ids]
        for i, fut in zip(ids, futs, strict=False):
            sess.expect(i, fut, kind)
        if not keep:
            futs = []
        items = msg.frames(ids)
        feed = sess.feed

        def run() -> None:
            f = feed
            for x in items:
                f(x)

        run.cleanup = lambda: _retrieve(futs)  # type: ignore[attr-defined]
        run.session = sess  # type: ignore[attr-defined]
        run.futures = futs  # type: ignore[attr-defined]
        return run

    return make


def _retrieve(futs: list[asyncio.Future[Any]]) -> None:
    """Marks failed futures as seen (else asyncio logs each one when it is collected)."""
    for f in futs:
        if f.done() and not f.cancelled():
            f.exception()


def _floor_decoder(msg: fr.Message) -> Callable[[int], Any]:
    return each(orjson.loads, lambda n: msg.frames(range(1, n + 1)))


def _sdk_decoder(msg: fr.Message, loop_: asyncio.AbstractEventLoop) -> Callable[[int], Any]:
    def make(n: int) -> Any:
        futs = [loop_.create_future() for _ in range(n)]
        pending = dict(zip(range(1, n + 1), futs, strict=False))
        if msg.kind != "error":
            futs = []  # freed once resolved, as for the runtime (see _runtime_decoder)
        decode = sdk_path.make_decoder(pending, msg.kind)
        items = msg.frames(range(1, n + 1), enveloped=False)

        def run() -> None:
            f = decode
            for x in items:
                f(x)

        run.cleanup = lambda: _retrieve(futs)  # type: ignore[attr-defined]
        return run

    return make


def _xiaozhi_decoder(msg: fr.Message, loop_: asyncio.AbstractEventLoop) -> Callable[[int], Any]:
    handle = xiaozhi_ref.handle_frame
    run_sync = xiaozhi_ref.run_sync
    value = xiaozhi_ref.call_value

    def make(n: int) -> Any:
        client = xiaozhi_ref.RefClient()
        futs = {i: loop_.create_future() for i in range(1, n + 1)}
        client.call_results.update(futs)
        keep = list(futs.values()) if msg.kind == "error" else []
        items = list(zip(msg.frames(range(1, n + 1)), range(1, n + 1), strict=False))
        is_error = msg.kind == "error"
        pop = futs.pop

        def run() -> None:
            for data, rid in items:
                fut = pop(rid)  # the caller's own reference to its future
                run_sync(handle(client, data))
                # the caller's side of call_mcp_tool: await the future, take the text
                if is_error:
                    fut.exception()
                else:
                    value(fut.result())

        run.cleanup = lambda: _retrieve(keep)  # type: ignore[attr-defined]
        return run

    return make


def _check_decoders(builds: list[Build], msgs: list[fr.Message], loop_: asyncio.AbstractEventLoop) -> dict:
    """Every timed decoder gets one frame of each kind right before anything is timed."""
    out: dict[str, Any] = {}
    for msg in msgs:
        got: list[Any] = []
        for b in builds:
            run = _runtime_decoder(b, msg, loop_, retain=True)(1)
            run()
            if run.session.pending_count != 0:  # type: ignore[attr-defined]
                raise AssertionError(f"{b.label}: the reply was not matched to its pending request")
            got.append(run.futures[0])  # type: ignore[attr-defined]
        pending = {1: loop_.create_future()}
        got.append(pending[1])
        sdk_path.make_decoder(pending, msg.kind)(msg.frame(1, enveloped=False))
        for fut in got:
            if msg.kind == "error":
                if not isinstance(fut.exception(), Exception):
                    raise AssertionError(f"{msg.key}: the error reply did not fail the pending call")
            elif msg.kind != "raw" and fut.result() != msg.expected:
                raise AssertionError(f"{msg.key}: decoded {fut.result()!r}, expected {msg.expected!r}")
        first = got[0]
        out[msg.key] = f"raises {type(first.exception()).__name__}" if msg.kind == "error" else "value ok"
    return out


def decode_comparisons(
    comp: Build, pure: Build, msgs: list[fr.Message], rounds: int, batch_s: float, log: Log
) -> dict[str, Comparison]:
    loop_ = asyncio.new_event_loop()
    try:
        out = {}
        for msg in msgs:
            cands = [
                Candidate(
                    C_RUNTIME,
                    _runtime_decoder(comp, msg, loop_),
                    "Session.feed: parse, id match, per-kind decode, future resolved",
                ),
                Candidate(C_PURE, _runtime_decoder(pure, msg, loop_), "same modules loaded from .py source"),
                Candidate(
                    C_FLOOR_LOADS, _floor_decoder(msg), "parse only, no matching or decoding", floor=True
                ),
                Candidate(C_SDK, _sdk_decoder(msg, loop_), "bare JSON-RPC bytes (no envelope)"),
                Candidate(C_XIAOZHI, _xiaozhi_decoder(msg, loop_), "benchmarks/xiaozhi_ref.py"),
            ]
            key = f"decode/{msg.key}"
            out[key] = compare(f"decode {msg.title} ({len(msg.frame(1))} B)", cands, rounds, batch_s, log=log)
        return out
    finally:
        loop_.close()


def breakdown_comparisons(
    comp: Build, msgs: list[fr.Message], rounds: int, batch_s: float, log: Log
) -> dict[str, Comparison]:
    """The compiled decode taken apart: parse, per-kind decode, resolving the future."""
    codec = comp.codec
    loop_ = asyncio.new_event_loop()
    out: dict[str, Comparison] = {}
    try:
        for msg in msgs:
            kind = codec.KIND_RAW if msg.kind in ("raw", "error") else codec.kind_code(msg.kind)
            doc = orjson.loads(msg.frame(1))
            payload = doc["payload"]
            cands = [
                Candidate("Session.feed (whole decode)", _runtime_decoder(comp, msg, loop_)),
                Candidate("orjson.loads", _floor_decoder(msg), floor=True),
            ]
            if msg.kind == "error":
                err = payload["error"]
                cands.append(
                    Candidate("codec.rpc_error(error) (builds RpcError)", loop(codec.rpc_error, err))
                )

                def make_exc(n: int, err: Any = err) -> Any:
                    futs = [loop_.create_future() for _ in range(n)]
                    excs = [codec.rpc_error(err) for _ in range(n)]
                    pairs = list(zip(futs, excs, strict=False))

                    def run() -> None:
                        for f, e in pairs:
                            f.set_exception(e)

                    run.cleanup = lambda: _retrieve(futs)  # type: ignore[attr-defined]
                    return run

                cands.append(Candidate("Future.set_exception", make_exc))
            else:
                res = payload["result"]
                cands.append(
                    Candidate(
                        "codec.decode_result(result, kind)",
                        loop(lambda r, k=kind: codec.decode_result(r, k), res),
                    )
                )

                def make_res(n: int) -> Any:
                    futs = [loop_.create_future() for _ in range(n)]

                    def run() -> None:
                        for f in futs:
                            f.set_result(True)

                    return run

                cands.append(Candidate("Future.set_result", make_res))
            out[f"breakdown/{msg.key}"] = compare(f"breakdown {msg.title}", cands, rounds, batch_s, log=log)
    finally:
        loop_.close()
    return out


# ----------------------------------------------------------------------------- encode


def _runtime_encoder(build: Build) -> Callable[[int], Any]:
    codec = build.codec
    validate = build.bindings.set_rgb_validator
    args = dict(RGB_ARGS)
    r, g, b = args["r"], args["g"], args["b"]

    def make(n: int) -> Any:
        sess = codec.RpcSession(fr.SESSION_ID)
        tools_call = sess.tools_call

        def run() -> None:
            v = validate
            tc = tools_call
            for _ in itertools.repeat(None, n):
                tc(SET_RGB, v(b, g, r))

        return run

    return make


def prebuilt_request(rid: int = 1) -> dict[str, Any]:
    return {
        "session_id": fr.SESSION_ID,
        "type": "mcp",
        "payload": {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": SET_RGB, "arguments": dict(RGB_ARGS)},
        },
    }


def _xiaozhi_encode(arguments: dict[str, Any]) -> str:
    payload = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": SET_RGB, "arguments": arguments},
    }
    return json.dumps({"type": "mcp", "payload": payload})


def encode_comparison(comp: Build, pure: Build, rounds: int, batch_s: float, log: Log) -> Comparison:
    # sanity: the runtime's bytes parse to the prebuilt request
    sess = comp.codec.RpcSession(fr.SESSION_ID)
    got = orjson.loads(sess.tools_call(SET_RGB, comp.bindings.set_rgb_validator(255, 200, 12)))
    want = prebuilt_request(got["payload"]["id"])
    if got != want:
        raise AssertionError(f"runtime encoder wrote {got!r}, expected {want!r}")
    prebuilt = prebuilt_request()
    sdk_enc = sdk_path.make_encoder(SET_RGB)
    cands = [
        Candidate(C_RUNTIME, _runtime_encoder(comp), f"{comp.bindings.validator_label} + Session.tools_call"),
        Candidate(C_PURE, _runtime_encoder(pure), "same, pure Python"),
        Candidate(
            C_FLOOR_DUMPS, loop(orjson.dumps, prebuilt), "no validation, dict built beforehand", floor=True
        ),
        Candidate(C_SDK_ENC, loop(sdk_enc, dict(RGB_ARGS)), "no argument validation, bare JSON-RPC"),
        Candidate(C_XIAOZHI_ENC, loop(_xiaozhi_encode, dict(RGB_ARGS)), "what the xiaozhi backend sends"),
    ]
    return compare("encode tools/call set_rgb(r, g, b) with validation", cands, rounds, batch_s, log=log)


# ----------------------------------------------------------------------------- validation


def set_rgb_schema(specs: dict[str, Any]) -> dict[str, Any]:
    schema = mcp_json.input_schema(specs["desk-lamp"].tool(SET_RGB))
    schema["additionalProperties"] = False  # what the runtime and the device enforce
    return schema


def validation_comparison(
    comp: Build, pure: Build, specs: dict[str, Any], rounds: int, batch_s: float, log: Log
) -> Comparison:
    import fastjsonschema
    import jsonschema

    schema = set_rgb_schema(specs)
    fjs = fastjsonschema.compile(schema)
    js = jsonschema.validators.validator_for(schema)(schema)
    sv = comp.validate.SchemaValidator(schema)
    args = dict(RGB_ARGS)
    fjs(args)
    js.validate(args)
    sv.validate(args)
    r, g, b = args["r"], args["g"], args["b"]
    gen = comp.bindings.set_rgb_validator
    gen_pure = pure.bindings.set_rgb_validator
    cands = [
        Candidate(C_GEN_VAL, loop0(lambda: gen(b, g, r)), comp.bindings.validator_label),
        Candidate(C_GEN_VAL_PURE, loop0(lambda: gen_pure(b, g, r)), "same, pure Python"),
        Candidate(C_SCHEMA_VAL, loop(sv.validate, args), "schema-driven, for devices of unknown spec"),
        Candidate(C_FJS, loop(fjs, args), "fastjsonschema.compile(schema)", floor=True),
        Candidate(C_JS, loop(js.validate, args), f"{type(js).__name__}(schema).validate"),
    ]
    return compare("validate set_rgb arguments {r, g, b}", cands, rounds, batch_s, unit="ns/call", log=log)


# ----------------------------------------------------------------------------- section


def targets(msgs: list[fr.Message]) -> list[Target]:
    out: list[Target] = []
    for m in msgs:
        key = f"decode/{m.key}"
        out.append(Target(f"decode {m.key} <= 1.5x orjson.loads", key, C_RUNTIME, C_FLOOR_LOADS, 1.5, "max"))
        out.append(
            Target(f"decode {m.key} >= 10x faster than MCP SDK", key, C_RUNTIME, C_SDK, 10.0, "speedup")
        )
        out.append(
            Target(f"decode {m.key} >= 2x faster than pure Python", key, C_RUNTIME, C_PURE, 2.0, "speedup")
        )
    out.append(
        Target(
            "encode with validation <= 1.5x orjson.dumps(prebuilt)",
            "encode",
            C_RUNTIME,
            C_FLOOR_DUMPS,
            1.5,
            "max",
        )
    )
    out.append(Target("encode >= 2x faster than pure Python", "encode", C_RUNTIME, C_PURE, 2.0, "speedup"))
    out.append(
        Target("validation >= 3x faster than fastjsonschema", "validate", C_GEN_VAL, C_FJS, 3.0, "speedup")
    )
    return out


def run(rounds: int, batch_s: float, log: Log, only_messages: Optional[list[str]] = None) -> dict[str, Any]:
    specs = fr.load_examples()
    msgs = fr.messages(specs)
    if only_messages:
        msgs = [m for m in msgs if m.key in only_messages]
    comp, pure, info = load_builds(log)
    loop_ = asyncio.new_event_loop()
    try:
        info["checks"] = _check_decoders([comp, pure], msgs, loop_)
    finally:
        loop_.close()
    # Everything loaded so far (pydantic models, the SDK, both runtime builds) is moved out
    # of the collector's sight: the harness collects garbage before every batch, and
    # walking those long-lived objects each time would cost ~0.1 s per collection.
    import gc

    gc.collect()
    gc.freeze()
    comps: dict[str, Comparison] = {}
    log("decode")
    comps.update(decode_comparisons(comp, pure, msgs, rounds, batch_s, log))
    log("encode")
    comps["encode"] = encode_comparison(comp, pure, rounds, batch_s, log)
    log("validate")
    comps["validate"] = validation_comparison(comp, pure, specs, rounds, batch_s, log)
    log("breakdown of the compiled decode")
    bd = breakdown_comparisons(comp, msgs, max(3, rounds // 2), batch_s, log)
    gc.unfreeze()
    results = [t.evaluate(comps) for t in targets(msgs)]
    for r in results:
        v = "n/a" if r["value"] is None else f"{r['value']:.2f}x"
        log(f"  {r['status']:4} {r['label']}: {v}")
    return {
        "info": info,
        "frames": {m.key: {"title": m.title, "bytes": len(m.frame(1)), "kind": m.kind} for m in msgs},
        "comparisons": {k: c.as_dict() for k, c in comps.items()},
        "breakdown": {k: c.as_dict() for k, c in bd.items()},
        "targets": results,
        "_objects": {**comps, **bd},
    }

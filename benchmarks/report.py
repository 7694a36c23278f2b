"""Renders docs/benchmarks.md from the figures of a run (the data of benchmarks.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

LABLOG = Path(__file__).resolve().parent / "LABLOG.md"  # investigation notes: linked, not rendered
DEVICE_CHANGES = Path(__file__).resolve().parent / "device_changes.md"  # rendered in section 3
RELEASE_CALLS = Path(__file__).resolve().parent / "release_calls.md"
OTA_ROLLOUT = Path(__file__).resolve().parent / "ota_rollout.md"
SCALE = Path(__file__).resolve().parent / "scale.md"
CLI_START = Path(__file__).resolve().parent / "cli_start.md"
BRIDGE_SDK = Path(__file__).resolve().parent / "bridge_sdk.md"
ESP_IDF_QEMU = Path(__file__).resolve().parent / "esp_idf_qemu.md"


def _ns(x: float) -> str:
    if x >= 100_000:
        return f"{x / 1000:,.0f} µs"
    if x >= 10_000:
        return f"{x / 1000:,.1f} µs"
    return f"{x:,.0f} ns"


def _ratio(x: Optional[float]) -> str:
    if x is None:
        return "–"
    return f"{x:.2f}×" if x < 100 else f"{x:,.0f}×"


def _share(stat: dict[str, float] | None) -> str:
    """A median CPU share as a percentage; '–' where it was not measured (recorded as 0)."""
    return f"{stat['median'] * 100:,.0f} %" if stat and stat["median"] > 0 else "–"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _comparison(c: dict[str, Any]) -> list[str]:
    rows = []
    floor = c.get("floor")
    for name, d in sorted(c["candidates"].items(), key=lambda kv: kv[1]["ns_per_op"]["median"]):
        st = d["ns_per_op"]
        r = d.get("ratio_to_floor")
        rows.append(
            [
                f"**{name}**" if name.startswith("mcpgen") or name.startswith("generated") else name,
                _ns(st["median"]),
                f"{_ns(st['p25'])} – {_ns(st['p75'])}",
                f"{_ns(st['min'])} – {_ns(st['max'])}",
                (
                    _ratio(r["median"])
                    + (f" ({_ratio(r['p25'])} – {_ratio(r['p75'])})" if name != floor else "")
                )
                if r
                else "–",
                d.get("note", ""),
            ]
        )
    unit = c.get("unit", "ns/msg")
    return (
        [f"#### {c['title']}", ""]
        + _table(
            ["candidate", f"median {unit}", "p25 – p75", "min – max", "× floor (paired per round)", "note"],
            rows,
        )
        + [""]
    )


def _hotpath(h: dict[str, Any]) -> list[str]:
    out = ["## 1. Backend hot path", ""]
    if "error" in h:
        return out + [f"**Failed:** `{h['error']}`", ""]
    info = h.get("info", {})
    comp = info.get("runtime_compiled", {})
    out += [
        f"{h.get('rounds')} rounds per comparison, batches of ~{h.get('batch_ms', 0):g} ms per candidate, "
        "candidates shuffled every round (all in one process). Figures are per message; ratios are "
        "computed per round against the floor of the same round, then the median is taken.",
        "",
        "* Runtime build: "
        + ", ".join(f"`{m}` {'compiled' if v else '**NOT compiled**'}" for m, v in comp.items()),
        f"* Pure-Python build: {info.get('pure_loading', '')}; loaded from "
        + ", ".join(f"`{Path(str(v)).name}`" for v in info.get("runtime_pure_loaded_from", {}).values()),
        f"* Encode/validate uses: {info.get('bindings', {}).get('validator', '?')}",
        "* Decode = frame bytes in → reply matched to its pending request (by id) → result decoded for the "
        "tool's return kind → the caller's `asyncio.Future` resolved (value or typed error). Each batch gets "
        "fresh frames with distinct ids 1..N and their pending requests, prepared before the clock starts.",
        "* Sanity checks before timing: " + ", ".join(f"{k}: {v}" for k, v in info.get("checks", {}).items()),
        "",
        "### Targets",
        "",
    ]
    rows = []
    for t in h.get("targets", []):
        v = t.get("value")
        limit = f"≤ {t['limit']:g}×" if t["kind"] == "max" else f"≥ {t['limit']:g}× faster"
        rows.append([t["label"], "–" if v is None else _ratio(v), limit, f"**{t['status']}**"])
    out += _table(["target", "measured", "goal", "result"], rows) + [""]
    frames = h.get("frames", {})
    if frames:
        out += ["### Messages", ""]
        out += _table(
            ["message", "bytes (enveloped)", "decoded as"],
            [[v["title"], str(v["bytes"]), v["kind"]] for v in frames.values()],
        ) + [""]
    out += ["### Comparisons", ""]
    for c in h.get("comparisons", {}).values():
        out += _comparison(c)
    bd = h.get("breakdown")
    if bd:
        out += [
            "### Where the compiled decode spends its time",
            "",
            "Each step of `Session.feed` timed alone (same harness, compiled build): the parse "
            "(`orjson.loads`, the floor), the per-kind result decoding, and resolving the caller's future. "
            "What `feed` costs beyond their sum is its own dispatch (envelope probing, id lookup, "
            "`Pending` handling).",
            "",
        ]
        rows = []
        for key, c in bd.items():
            cand = c["candidates"]
            cells = {name: d["ns_per_op"]["median"] for name, d in cand.items()}
            feed = cells.get("Session.feed (whole decode)", 0.0)
            parts = [v for n, v in cells.items() if n != "Session.feed (whole decode)"]
            rest = feed - sum(parts)
            rows.append(
                [key.split("/", 1)[1]]
                + [f"{n}: {_ns(v)}" for n, v in cells.items()]
                + [f"{_ns(rest)}" if rest > 0 else "≈0"]
            )
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        out += _table(["message"] + ["step"] * (width - 2) + ["feed's own dispatch"], rows) + [""]
    return out


def _mqtt(g: dict[str, Any]) -> list[str]:
    out = ["## 4. MQTT fleet workers", ""]
    if "error" in g:
        return out + [f"**Failed:** `{g['error']}`", ""]
    out += [
        "`MqttFleet` worker processes through Mosquitto (`set_tcp_nodelay true`) beside the direct "
        "WebSocket `Gateway`, same device count, emulated devices in their own process "
        f"(`benchmarks/mqtt_emulator.py`, `benchmarks/gw_emulator.py`). Call: {g.get('tool')}, one call in "
        f"flight per device, {g.get('round_seconds')} s per round, {g.get('rounds')} rounds with the three "
        "configurations in random order (see `benchmarks/mqtt.py`). Backend CPU = the worker or gateway "
        "processes' CPU time / calls; broker share = Mosquitto's CPU time / round length.",
        "",
    ]
    rows = []
    for r in g.get("results", []):
        for cfg, m in r["configs"].items():
            rows.append(
                [
                    str(r["devices"]),
                    cfg,
                    f"{m['calls_per_s']['median']:,.0f}",
                    f"{m['p50_us']['median']:,.0f}",
                    f"{m['p99_us']['median']:,.0f}",
                    f"{m['cpu_us_per_call']['median']:,.0f}",
                    f"{m['cpu_per_call_vs_gateway']:.2f}×" if "cpu_per_call_vs_gateway" in m else "1",
                    f"{m['broker_cpu_share']['median'] * 100:,.0f} %",
                    _share(m.get("emulator_cpu_share")),
                    str(m.get("errors", 0)),
                ]
            )
    out += _table(
        ["devices", "configuration", "calls/s", "p50 µs", "p99 µs", "backend CPU µs / call",
         "CPU / call vs gateway", "broker CPU", "device emulator CPU", "errors"],
        rows,
    )  # fmt: skip
    out += [""]
    for r in g.get("results", []):
        s = r.get("serial_1_worker")
        if s:
            out.append(
                f"* {r['devices']} devices, one call in flight in total (1 worker): "
                f"p50 {s['p50_us']:,.0f} µs, p99 {s['p99_us']:,.0f} µs."
            )
    return out + [""]


def _gateway(g: dict[str, Any]) -> list[str]:
    out = ["## 2. Gateway", ""]
    if "error" in g:
        return out + [f"**Failed:** `{g['error']}`", ""]
    out += [
        f"`runtime.Gateway` (picows server, uvloop) in its own process per "
        f"runtime build, and two bare-transport "
        f"references (`benchmarks/gw_echo.py`: a picows server on uvloop and a "
        f"websockets server on asyncio that "
        f"send a precomputed request and wait for any reply: the transport alone). Each has its own emulator "
        f"process (`benchmarks/gw_emulator.py`: picows clients doing the xiaozhi handshake, hello and MCP "
        f"envelopes) over 127.0.0.1. Call: {g.get('tool')}, one call in flight "
        f"per device, all devices at once, "
        f"for {g.get('round_seconds')} s per round; {g.get('rounds')} rounds alternating the rows in random "
        f"order (plus one warm-up round each); the row *compiled + gc.freeze()* "
        f"is the compiled gateway's own "
        f"process running its round after `gc.freeze()`. RLIMIT_NOFILE {g.get('nofile_limit')}.",
        "",
    ]
    rows = []
    for r in g.get("results", []):
        for mode, m in {**r["modes"], **r.get("extra", {})}.items():
            cps = m["calls_per_s"]
            emu = m.get("emulator_cpu_share")
            rows.append(
                [
                    str(r["devices"]),
                    mode + ("" if m.get("runtime_compiled") or mode != "compiled" else " (NOT compiled!)"),
                    f"{m['cpu_us_per_call']['median']:,.1f}",
                    f"{cps['median']:,.0f}",
                    f"{m['p50_us']['median']:,.0f}",
                    f"{m['p99_us']['median']:,.0f}",
                    f"{m['cpu_share']['median'] * 100:,.0f} %",
                    f"{emu['median'] * 100:,.0f} %" if emu else "–",
                    f"{m['bytes_per_device'] / 1024:,.1f}",
                    f"{m.get('setup_seconds', 0):.2f}",
                    str(m.get("errors", 0)),
                ]
            )
    out += _table(
        [
            "devices",
            "row",
            "gateway CPU µs / call",
            "calls/s (median)",
            "p50 µs",
            "p99 µs",
            "gateway CPU busy",
            "emulator CPU busy",
            "RSS KiB / device",
            "setup s",
            "errors",
        ],
        rows,
    )
    ratio_rows = []
    for r in g.get("results", []):

        def f(key: str, r: dict[str, Any] = r) -> str:
            v = r.get(key)
            return "–" if v is None else f"{v:.2f}×"

        ratio_rows.append(
            [
                str(r["devices"]),
                f("cpu_per_call_compiled_vs_websockets_echo"),
                f("cpu_per_call_compiled_vs_picows_echo"),
                f("cpu_per_call_compiled_vs_picows_stream_echo"),
                f("cpu_per_call_stream_echo_vs_picows_echo"),
                f("cpu_per_call_stream_gateway_vs_picows_stream_echo"),
                f("cpu_per_call_stream_gateway_vs_picows_echo"),
                f("cpu_per_call_compiled_vs_stream_gateway"),
                f("cpu_per_call_ratio_pure_vs_compiled"),
                f("cpu_above_picows_echo_pure_vs_compiled"),
                f("cpu_per_call_freeze_vs_compiled"),
            ]
        )
    out += [
        "",
        "Gateway CPU per call, ratios (median of paired rounds of this run; targets from issues 32 "
        "and 43: ≤ 1.15× the echo on the gateway's own transport at 100 and 1,000 devices, pure ≥ 2× "
        "compiled above it). *compiled* and *pure Python* run with "
        '`Gateway(socket_transport="aiofastnet")`, picows\' default transport (`recv()`, its own '
        "read loop, paced to the gateway's 16 KiB per-turn read bound), as the *picows echo* does, "
        "the fastest echo; the *stream echo* is the same echo on "
        "uvloop's TCP stream (libuv's `read()`), as the *stream gateway* (`socket_transport=\"loop\"`, "
        "the gateway's default) is. *Above the picows echo*: (build − picows echo) "
        "per round, i.e. the runtime's own work per call without the transport, loop, future and "
        "driver that both builds share:",
        "",
    ]
    out += _table(
        [
            "devices",
            "compiled / websockets echo",
            "compiled / picows echo",
            "compiled / stream echo",
            "stream echo / picows echo",
            "stream gateway / stream echo",
            "stream gateway / picows echo",
            "compiled / stream gateway",
            "pure / compiled",
            "pure / compiled above the picows echo",
            "gc.freeze() / without",
        ],
        ratio_rows,
    )
    dec = g.get("decode")
    if dec:
        out += [
            "",
            "Reply decoding per `tools/call` reply (`benchmarks/gw_decode.py`, "
            "in the benchmark's own process):",
            "",
        ]
        drows = []
        for label in ("result", "error"):
            for name, v in dec[label].items():
                drows.append([label, name, f"{v['ns']:,.0f}", f"{v['x_orjson']:.2f}×"])
        out += _table(["reply", "path", "ns / reply", "× orjson.loads"], drows)
    fr_ = g.get("frame")
    if fr_:
        ns = fr_["ns_per_call"]
        out += [
            "",
            "The runtime's own code per call in process, compiled vs interpreted (`benchmarks/gw_frame.py`: "
            "`Session.call`, `Deadlines.add_call`, `DeviceLink.send_now` into picows with a no-op socket "
            "write, then the reply as a picows `WSFrame` through `DeviceLink.on_ws_frame` and `Session.feed` "
            "to the resolved future; interleaved rounds, GC off while timing): "
            f"compiled {ns['compiled']:,.0f} ns, "
            f"pure Python {ns['pure Python']:,.0f} ns per call; pure / compiled "
            f"{fr_['pure_vs_compiled']:.2f}× (median of paired rounds).",
        ]
        cns = fr_.get("call_ns_per_call")
        if cns:
            out[-1] += (
                " The whole call as the gateway runs it (`CallSite.call`, the awaitable a binding "
                "method returns, awaited by a caller's coroutine: its future, the same round trip, and "
                "the caller's resumption with the value): "
                f"compiled {cns['compiled']:,.0f} ns, pure Python {cns['pure Python']:,.0f} ns; "
                f"pure / compiled {fr_['call_pure_vs_compiled']:.2f}×."
            )
    w = g.get("workers")
    if w:
        out += [""]
        if "error" in w:
            out += [f"SO_REUSEPORT workers: **failed** `{w['error']}`"]
        else:
            one, many = w["groups"]["1"], w["groups"][str(w["workers"])]
            out += [
                f"SO_REUSEPORT (`benchmarks/gw_multi.py`, `mcpgen.runtime.links.workers`): "
                f"{w['devices']} devices, "
                f"1 worker {one['calls_per_s']:,.0f} calls/s vs {w['workers']} "
                f"workers {many['calls_per_s']:,.0f} "
                f"calls/s in alternating windows of {w['round_seconds']} s; ratio "
                f"{w['throughput_ratio']:.2f}× "
                f"(median of paired windows), devices per worker "
                f"{many['windows'][0]['devices_per_worker'] if many['windows'] else '?'}.",
            ]
    out += [
        "",
        "Calls/s and latency are end to end and depend on the emulator and on "
        "whatever else the machine runs; "
        "the gateway's own CPU time per call (getrusage of the gateway process over the round / calls) "
        "isolates the gateway's cost, and the emulator's CPU share shows it was not the limit.",
        "",
        "RSS per device = (gateway RSS with all devices ready − RSS at start) / devices.",
        "",
        "From 2,000 connected devices on, the gateway calls `gc.freeze()` by itself after setup (its "
        "`gc_freeze` option, see runtime.md), so the 10,000-device *compiled* row runs frozen; the "
        "*compiled + gc.freeze()* rows below that count show what freezing does where it is not automatic. "
        "Very large counts run only the compiled gateway and the picows echo (memory).",
        "",
        "When the machine is shared (the figures of a run on a 2-core machine with other jobs running are "
        "noisy by tens of per cent), only the ratios of rows measured in the same interleaved rounds are "
        "meaningful; absolute µs and calls/s are not comparable across runs.",
        "",
    ]
    return out


def _device(d: dict[str, Any]) -> list[str]:
    out = ["## 3. Device (C++ core)", ""]
    if "error" in d:
        return out + [f"**Failed:** `{d['error']}`", ""]
    out += ["Objects compiled with the flags of the build drivers:", ""]
    for name, flags in d.get("flags", {}).items():
        out.append(f"* {name}: `{' '.join(flags)}`")
    out += ["", "### Core code and data (bytes, `size` of each object)", ""]
    rows = []
    for t in d.get("targets", []):
        for obj, s in t["core_objects"].items():
            rows.append([t["name"], obj, str(s["text"]), str(s["data"]), str(s["bss"])])
        tot = t["core_total"]
        rows.append(
            [t["name"], "**core total**", f"**{tot['text']}**", f"**{tot['data']}**", f"**{tot['bss']}**"]
        )
        events = t["core_objects"].get("events")
        if events:  # linked only into firmware whose spec declares events
            rows.append(
                [t["name"], "core total without `events.o`"]
                + [str(tot[k] - events[k]) for k in ("text", "data", "bss")]
            )
    out += _table(["target", "object", "text", "data", "bss"], rows) + [""]
    for spec, s in d.get("specs", {}).items():
        out += [f"### {spec} ({s['tools']} tools)", ""]
        rows = []
        for tname, sz in s.get("sizes", {}).items():
            g, h = sz["generated"], sz["handlers"]
            rows.append(
                [tname, f"{g['text']} / {g['data']} / {g['bss']}", f"{h['text']} / {h['data']} / {h['bss']}"]
            )
        out += _table(
            ["target", "generated tables text / data / bss", "handlers text / data / bss"], rows
        ) + [""]
        tnames = list(s.get("sizes", {}))
        if tnames:
            tools = list(s["sizes"][tnames[0]]["per_tool"])
            rows = []
            for tool in tools:
                row = [f"`{tool}`"]
                for tn in tnames:
                    p = s["sizes"][tn]["per_tool"][tool]
                    row.append(
                        f"{p['total']} ({p['list_entry']} entry + {p['tables']} params + {p['tool_row']} row "
                        f"+ {p['thunk']} thunk + {p['handler']} handler)"
                    )
                rows.append(row)
            out += ["Per tool (bytes; strings such as parameter names are not attributed):", ""]
            out += _table(["tool", *tnames], rows) + [""]
        reqs = s.get("requests", [])
        if reqs:
            rows = []
            for r in reqs:
                ins = r.get("instructions")
                rows.append(
                    [
                        r["request"],
                        str(r["reply_bytes"]),
                        f"{r['heap_allocations_per_request']:g}",
                        f"{r['heap_bytes_per_request']:g}",
                        "–" if ins is None else f"{ins:,.0f}",
                    ]
                )
            out += [
                f"Requests through `Server::handle` ({s.get('iterations')} iterations each for the heap "
                f"count; allocation-counter probe: {s.get('alloc_probe')}):",
                "",
            ]
            out += _table(
                [
                    "request",
                    "reply bytes",
                    "heap allocations / request",
                    "heap bytes / request",
                    "instructions / request (callgrind)",
                ],
                rows,
            ) + [""]
            out += _progress_notes(reqs)
    out += _device_scaling(d)
    # Hand-kept before/after figures of core changes (benchmarks/device_changes.md), shown
    # beside the measured ones.
    if DEVICE_CHANGES.exists():
        out += [DEVICE_CHANGES.read_text().rstrip("\n"), ""]
    return out


def _progress_notes(reqs: list[dict[str, Any]]) -> list[str]:
    """A line per call that sent notifications/progress (issue 41): how many, their bytes and
    the instructions of one (the call's difference with the same call without a token)."""
    out = []
    for r in reqs:
        sent = r.get("notifications_per_request")
        if not sent:
            continue
        each = r.get("instructions_per_notification")
        cost = "" if each is None else f", {each:,.0f} instructions each"
        out.append(
            f"* {r['request']}: {sent:g} notifications/progress per call, "
            f"{r['notification_bytes_per_request'] / sent:,.0f} B each{cost} (sent through the driver's "
            "counting link: a port's transport costs its own)."
        )
    return out + [""] if out else []


_SCALE_COLS = ("initialize", "notifications/initialized", "tools/list", "call first tool", "call last tool")


def _device_scaling(d: dict[str, Any]) -> list[str]:
    """The synthetic 10/100/1000-tool specs, mcpgen and (when measured) upstream xiaozhi-esp32."""
    scaling = d.get("scaling") or {}
    up = d.get("upstream") or {}
    if not scaling:
        return []
    out = [
        "### Scaling with the tool count (synthetic specs, host build, instructions per request)",
        "",
        "Specs of 10, 100 and 1000 tools of one shape (an integer `level` 0–100, a boolean result; "
        "`benchmarks/device.py: scale_spec_text`), enveloped requests. *full listing*: every "
        "`tools/list` page with `withUserTools`, following `nextCursor`.",
        "",
    ]
    rows = []
    sources = [("mcpgen", scaling)]
    if up.get("scales"):
        sources.append((f"upstream xiaozhi-esp32 {up.get('revision', '')}", up["scales"]))
    for name, scales in sources:
        for n, r in scales.items():
            allocs = r.get("allocations", {})
            rows.append(
                [
                    name,
                    n,
                    *(f"{r[c]:,.0f}" for c in _SCALE_COLS),
                    f"{r['last / first call']:.2f}×",
                    f"{r['full listing']:,.0f} ({r['pages']})",
                    f"{r['full listing per tool']:,.0f}",
                    f"{sum(allocs.values()):g}" if allocs else "–",
                ]
            )
    out += _table(
        [
            "core",
            "tools",
            "initialize",
            "notifications/initialized",
            "one tools/list page",
            "call first tool",
            "call last tool",
            "last / first",
            "full listing (pages)",
            "listing per tool",
            "heap allocations (the five requests)",
        ],
        rows,
    ) + [""]
    if up.get("skipped"):
        out += [f"Upstream rows: skipped ({up['skipped']}).", ""]
    elif up.get("scales"):
        out += [
            f"Upstream: `main/mcp_server.{{h,cc}}` of xiaozhi-esp32 {up.get('revision', '')} with cJSON, "
            "compiled with shims for the ESP-IDF and board headers (`benchmarks/device_upstream.py`; the "
            "board's own tools are left out), flags `" + " ".join(up.get("flags", [])) + "`, driven like "
            "the stock firmware (cJSON parse of the envelope, `McpServer::ParseMessage`, reply through "
            "`Application::SendMcpMessage` and the protocol's envelope).",
            "",
        ]
    return out


def render(data: dict[str, Any]) -> str:
    m = data.get("machine", {})
    v = data.get("versions", {})
    out = [
        "# Benchmarks",
        "",
        "Extras: the developer install (`scripts/dev.sh setup`, the `[test]` extra: it has `[serial]`, "
        "`[mqtt]`, `[bridge]`, `[console]`).",
        "",
        f"Written by `{data.get('command', 'python -m benchmarks')}` on {data.get('generated', '?')} "
        "(code: `benchmarks/`; raw figures: `docs/benchmarks.json`). Re-run with `python -m benchmarks` "
        "(`--only hotpath|gateway|device`, `--quick` for a smoke run).",
        "",
        "## Machine and versions",
        "",
    ]
    rows = [
        ["CPU", f"{m.get('cpu')} ({m.get('logical_cpus')} logical CPUs, {m.get('usable_cpus')} usable)"],
        ["OS", str(m.get("os"))],
        ["memory", f"{m.get('memory_gib')} GiB"],
        ["virtualization", str(m.get("virtualization") or "–")],
    ] + [[k, str(val)] for k, val in v.items()]
    out += _table(["", ""], rows) + [""]
    quick = any(s.get("quick") for s in data.get("sections", {}).values() if isinstance(s, dict))
    if quick:
        out += [
            "> **Quick (smoke) run**: tiny batches and few rounds; the figures only show that everything "
            "works, they are not measurements.",
            "",
        ]
    out += [
        "## Method",
        "",
        "* Every comparison runs its candidates **interleaved in one process**: for each round the "
        "candidates are shuffled and each runs one batch sized to take about the same time, so machine noise "
        "hits all alike; the tables give the median and the spread (p25–p75, min–max) over the rounds.",
        "* Ratios to the floor are taken **per round** (candidate / floor of the same round) and their "
        "median is reported; targets use the same paired medians.",
        "* The pure-Python runtime runs **in the same process** as the compiled one: `benchmarks/purepy.py` "
        "imports the runtime packages a second time from their `.py` sources (a meta-path finder that only "
        "uses `SourceFileLoader`, while `sys.modules` holds none of their entries), then puts the compiled "
        "modules back. Each copy's own imports bound to its own copy, so both builds coexist and can be "
        "interleaved round by round; no second process, no cross-process noise. The gateway section, which "
        "measures whole processes, uses one process per build (`MCPGEN_PURE_PYTHON=1` for the pure one).",
        "",
    ]
    secs = data.get("sections", {})
    if "hotpath" in secs:
        out += _hotpath(secs["hotpath"])
    if "gateway" in secs:
        out += _gateway(secs["gateway"])
    if "device" in secs:
        out += _device(secs["device"])
    if "mqtt" in secs:
        out += _mqtt(secs["mqtt"])
    if RELEASE_CALLS.exists() and not quick:  # measured on its own (benchmarks/release_calls.py)
        out += ["## 5. Calls through an older release's bindings", "", RELEASE_CALLS.read_text().strip(), ""]
    if OTA_ROLLOUT.exists() and not quick:  # measured on its own (benchmarks/ota_rollout.py)
        out += ["## 6. Rolling over-the-air upgrade", "", OTA_ROLLOUT.read_text().strip(), ""]
    if SCALE.exists() and not quick:  # measured on its own (benchmarks/scale.py)
        out += ["## 7. Scale and fan-out", "", SCALE.read_text().strip(), ""]
    if CLI_START.exists() and not quick:  # measured on its own (benchmarks/cli_start.py)
        out += ["## 8. `codegen` start time", "", CLI_START.read_text().strip(), ""]
    if ESP_IDF_QEMU.exists() and not quick:  # measured by hand (its text says how)
        out += ["## 9. ESP-IDF image on the emulated ESP32-C3", "", ESP_IDF_QEMU.read_text().strip(), ""]
    if BRIDGE_SDK.exists() and not quick:  # measured on its own (benchmarks/bridge_sdk.py)
        out += ["## 10. MCP SDK clients through the bridge", "", BRIDGE_SDK.read_text().strip(), ""]
    if LABLOG.exists() and not quick:
        out += [
            "## Lab log",
            "",
            "The investigation notes behind these figures (profiles, what each change bought, "
            "runs that later ones replaced) are kept apart from them, in",
            "[benchmarks/LABLOG.md](../benchmarks/LABLOG.md).",
            "",
        ]
    return "\n".join(out) + "\n"

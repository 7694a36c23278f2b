"""Section 3: the device side -- code/data size, heap allocations, instructions.

For each example spec the portable core, the generated tables and the spec's handlers
are compiled (with the flags of ``codegen.targets.host`` for the host and of
``codegen.targets.qemu`` for the Cortex-M3) into ``build/benchmarks/device``:

* sizes: ``size`` / ``arm-none-eabi-size`` of every object (text, data, bss), and per
  tool the symbols that belong to it (``nm -S``: its parameter table, its constant
  ``tools/list`` entry, enum tables, the invoke thunk and the user's handler) plus its
  row of the tool table;
* heap: ``benchmarks/device/driver.cpp`` (interposes malloc/free and replaces operator
  new/delete) runs every request N times through ``mcpgen::Server::handle`` and counts
  the allocations made while they ran;
* instructions: the same driver under ``valgrind --tool=callgrind --collect-atstart=no
  --toggle-collect=mcpgen_bench_handle_one``, at two iteration counts; the difference of
  the totals divided by the difference of the counts is the instructions of one
  request (one-time costs cancel out). Deterministic, so one run per figure;
* scaling: synthetic specs of 10, 100 and 1000 tools (generated here, same tool shape)
  give the cost of calling the first and the last tool, of one tools/list page and of
  a full listing (every page, following nextCursor), so lookups that grow with the
  tool count show up;
* upstream: when a xiaozhi-esp32 checkout is found (``benchmarks/device_upstream.py``),
  its ``McpServer`` + cJSON runs the same enveloped requests in a driver of the same
  shape, for the rows the issue compares against.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from benchmarks.frames import SESSION_ID, SPECS
from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.model import Param, Spec, Tool
from mcpgen.codegen.spec.names import device_slug
from mcpgen.codegen.targets.host import CXXFLAGS as HOST_CXXFLAGS
from mcpgen.codegen.targets.qemu import CXX_FLAGS as ARM_CXX_FLAGS
from mcpgen.codegen.targets.qemu_machines import RISCV32

Log = Callable[[str], None]
REPO = Path(__file__).resolve().parent.parent
CORE = REPO / "firmware_template" / "core"
DRIVER = Path(__file__).resolve().parent / "device" / "driver.cpp"


@dataclass(frozen=True)
class Target:
    name: str
    cxx: str
    size: str
    nm: str
    flags: tuple[str, ...]


def targets() -> list[Target]:
    out = [Target("host x86-64 (g++, build_host flags)", "g++", "size", "nm", HOST_CXXFLAGS)]
    if shutil.which("arm-none-eabi-g++"):
        out.append(
            Target(
                "Cortex-M3 (arm-none-eabi-g++, build_qemu flags)",
                "arm-none-eabi-g++",
                "arm-none-eabi-size",
                "arm-none-eabi-nm",
                ARM_CXX_FLAGS,
            )
        )
    # The ESP32-C3's ISA, beside the Cortex-M3 (issue 14): the same core with the flags of
    # `codegen build --target qemu-riscv32`.
    rv = RISCV32.toolchain.prefix
    if shutil.which(rv + "g++"):
        out.append(
            Target(
                "RV32IMC (riscv64-unknown-elf-g++, build_qemu riscv32 flags)",
                rv + "g++",
                rv + "size",
                rv + "nm",
                RISCV32.cxx_flags,
            )
        )
    return out


def _compile(cxx: str, flags: Sequence[str], includes: Sequence[Path], src: Path, obj: Path) -> None:
    cmd = [cxx, *flags, *(f"-I{p}" for p in includes), "-c", str(src), "-o", str(obj)]
    h = hashlib.sha256(" ".join(cmd).encode())
    h.update(src.read_bytes())
    for inc in includes:
        for hdr in sorted(inc.rglob("*.h")):
            h.update(hdr.read_bytes())
    stamp = obj.with_suffix(".stamp")
    if obj.exists() and stamp.exists() and stamp.read_text() == h.hexdigest():
        return
    obj.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"compile failed: {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    stamp.write_text(h.hexdigest())


def _sizes(size_tool: str, obj: Path) -> dict[str, int]:
    out = subprocess.run([size_tool, str(obj)], capture_output=True, text=True, check=True).stdout
    text, data, bss = (int(x) for x in out.splitlines()[1].split()[:3])
    return {"text": text, "data": data, "bss": bss}


def _symbols(nm_tool: str, obj: Path) -> list[tuple[str, int, str]]:
    """(demangled name, size, type letter) of every sized symbol."""
    out = subprocess.run([nm_tool, "-C", "-S", str(obj)], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and re.fullmatch(r"[0-9a-fA-F]+", parts[1]):
            syms.append((parts[3], int(parts[1], 16), parts[2]))
    return syms


def _ident(sym: str) -> str:
    """The bare identifier of a demangled symbol: ``(anonymous namespace)::kEntry_x`` -> ``kEntry_x``."""
    name = sym.split("(", 1)[0] if not sym.startswith("(anonymous") else sym
    name = re.sub(r"\(anonymous namespace\)::", "", name)
    name = name.split("(", 1)[0]
    return name.strip()


def per_tool_sizes(
    spec: Spec, gen_syms: list[tuple[str, int, str]], handler_syms: list[tuple[str, int, str]]
) -> dict[str, dict[str, int]]:
    tools = sorted(spec.tools, key=lambda t: -len(t.handler))
    row = next((size for s, size, _ in gen_syms if _ident(s).endswith("kTools")), 0)
    row_share = row // max(1, len(spec.tools))
    out: dict[str, dict[str, int]] = {
        t.name: {"tables": 0, "list_entry": 0, "thunk": 0, "handler": 0, "tool_row": row_share}
        for t in spec.tools
    }
    for sym, size, _ in gen_syms:
        ident = _ident(sym)
        for t in tools:
            h = t.handler
            if ident == f"kEntry_{h}":
                out[t.name]["list_entry"] += size
            elif ident == f"kParams_{h}" or ident.startswith(f"kEnum_{h}_"):
                out[t.name]["tables"] += size
            elif ident == f"invoke_{h}":
                out[t.name]["thunk"] += size
            else:
                continue
            break
    for sym, size, kind in handler_syms:
        if kind.lower() != "t":
            continue
        ident = _ident(sym)
        for t in tools:
            if ident == f"tools::{t.handler}":
                out[t.name]["handler"] += size
                break
    for v in out.values():
        v["total"] = sum(v.values())
    return out


def _sample(p: Param) -> Any:
    if p.default is not None:
        return p.default
    if p.type == "boolean":
        return True
    if p.type == "integer":
        lo = int(p.minimum) if p.minimum is not None else 0
        hi = int(p.maximum) if p.maximum is not None else lo + 100
        return (lo + hi) // 2
    if p.type == "number":
        lo = float(p.minimum) if p.minimum is not None else 0.0
        hi = float(p.maximum) if p.maximum is not None else lo + 10.0
        return round((lo + hi) / 2, 2)
    if p.enum:
        return p.enum[-1]
    text = "desk-lamp-1" if p.pattern else "Dinner is ready"
    return text[: p.max_length] if p.max_length else text


def _sample_args(tool: Tool) -> dict[str, Any]:
    return {p.name: _sample(p) for p in tool.params}


def requests(spec: Spec) -> list[tuple[str, bytes]]:
    """(label, enveloped request) pairs; the first two open the session."""

    env = _env
    out = [
        (
            "initialize",
            env(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2024-11-05",
                        "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "1"},
                    },
                }
            ),
        ),
        ("notifications/initialized", env({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        (
            "tools/list",
            env(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/list",
                    "params": {"cursor": "", "withUserTools": True},
                }
            ),
        ),
    ]
    for i, t in enumerate(spec.tools):
        out.append(
            (
                f"tools/call {t.name}",
                env(
                    {
                        "jsonrpc": "2.0",
                        "id": 10 + i,
                        "method": "tools/call",
                        "params": {"name": t.name, "arguments": _sample_args(t)},
                    }
                ),
            )
        )
    for i, t in enumerate(t for t in spec.tools if t.progress):
        # Issue 41: the same call from a caller that asks for progress (params._meta), so the
        # handler's Context::progress calls send notifications/progress; the call above, without
        # a token, is what they cost when nobody asks.
        call = {"name": t.name, "arguments": _sample_args(t), "_meta": {"progressToken": "bench-progress"}}
        out.append(
            (
                f"tools/call {t.name}{PROGRESS_SUFFIX}",
                env({"jsonrpc": "2.0", "id": 60 + i, "method": "tools/call", "params": call}),
            )
        )
    for i, r in enumerate(spec.resources):  # issue 30: a read of each resource
        uri = r.uri if r.uri is not None else r.uri_template
        assert uri is not None
        for p in r.params:
            value = _sample(p)
            if p.type == "integer" and isinstance(value, int) and value > 64:
                value = 64  # a small read (the lamp's pattern length): the figure is per request
            uri = uri.replace("{" + p.name + "}", json.dumps(value) if not isinstance(value, str) else value)
        out.append(
            (
                f"resources/read {uri}",
                env({"jsonrpc": "2.0", "id": 100 + i, "method": "resources/read", "params": {"uri": uri}}),
            )
        )
    return out


SCALES = (10, 100, 1000)
# The label of a progress-reporting tool's call with a progressToken: "tools/call NAME" + this.
PROGRESS_SUFFIX = " with a progressToken"


def scale_spec_text(n: int) -> str:
    """A synthetic spec of n tools of one shape (an integer level, a boolean result)."""
    lines = [
        "device:",
        f"  name: bench-{n}-tools",
        "  version: 1.0.0",
        "  description: Synthetic device of the scaling benchmark.",
        "",
        "tools:",
    ]
    for i in range(n):
        lines += [
            f"  - name: self.bank_{i // 100:02d}.set_level_{i:04d}",
            f"    description: Set level {i} of the synthetic device, from 0 to 100.",
            "    params:",
            "      level: {type: integer, min: 0, max: 100}",
            "    returns: boolean",
        ]
    return "\n".join(lines) + "\n"


def _env(payload: dict[str, Any]) -> bytes:
    return json.dumps(
        {"session_id": SESSION_ID, "type": "mcp", "payload": payload}, separators=(",", ":")
    ).encode()


def scale_requests(spec: Spec) -> list[tuple[str, bytes]]:
    """initialize, notifications/initialized, the first tools/list page, first and last tool."""
    base = requests(spec)[:3]
    first, last = spec.tools[0], spec.tools[-1]
    for label, tool, rid in (("call first tool", first, 10), ("call last tool", last, 11)):
        call = {"name": tool.name, "arguments": _sample_args(tool)}
        base.append((label, _env({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": call})))
    return base


def _callgrind_ir(exe: Path, env: dict[str, str], kind: int, n: int, workdir: Path, mode: str = "run") -> int:
    out_file = workdir / f"callgrind.{mode}.{kind}.{n}.out"
    args = [mode, str(kind), str(n)] if mode == "run" else [mode, str(n)]
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--collect-atstart=no",
        "--toggle-collect=mcpgen_bench_handle_one",
        f"--callgrind-out-file={out_file}",
        str(exe),
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"callgrind failed: {proc.stderr[-2000:]}")
    text = out_file.read_text()
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    if m is None:
        raise RuntimeError("no totals in the callgrind output")
    out_file.unlink()
    return int(m.group(1))


def run(quick: bool, log: Log, build_root: Optional[Path] = None) -> dict[str, Any]:
    root = (build_root or REPO / "build" / "benchmarks" / "device").resolve()
    specs = {name: load_spec(path) for name, path in SPECS.items()}
    if quick:
        specs = {"desk-lamp": specs["desk-lamp"]}
    tgts = targets()
    core_srcs = sorted((CORE / "mcpgen").glob("*.cpp"))
    result: dict[str, Any] = {"targets": [], "specs": {}, "flags": {t.name: list(t.flags) for t in tgts}}
    jobs = max(1, min(4, os.cpu_count() or 1))

    # ---- compile everything (core once per target, the rest per spec)
    work: list[tuple[str, Sequence[str], Sequence[Path], Path, Path]] = []
    layout: dict[str, dict[str, Any]] = {}
    for t in tgts:
        tdir = root / re.sub(r"[^a-z0-9]+", "-", t.cxx)
        core_objs = [tdir / "core" / (s.stem + ".o") for s in core_srcs]
        for s, o in zip(core_srcs, core_objs, strict=False):
            work.append((t.cxx, t.flags, [CORE], s, o))
        layout[t.name] = {"dir": tdir, "core": core_objs, "specs": {}}
        for name, spec in specs.items():
            slug = device_slug(spec.device.name)
            gdir = tdir / slug / "generated"
            files = emit_cpp.emit(spec)
            for rel, content in files.items():
                path = gdir / Path(rel).name
                path.parent.mkdir(parents=True, exist_ok=True)
                if not path.exists() or path.read_text() != content:
                    path.write_text(content)
            handlers = SPECS[name].with_name(SPECS[name].stem + "_handlers.cpp")
            incs = [CORE, gdir]
            gen_o = tdir / slug / "mcp_tools.o"
            hnd_o = tdir / slug / "handlers.o"
            work.append((t.cxx, t.flags, incs, gdir / "mcp_tools.cpp", gen_o))
            work.append((t.cxx, t.flags, incs, handlers, hnd_o))
            entry = {"gen": gen_o, "handlers": hnd_o, "incs": incs, "dir": tdir / slug}
            if t.cxx == "g++":
                drv_o = tdir / slug / "driver.o"
                work.append((t.cxx, t.flags, incs, DRIVER, drv_o))
                entry["driver"] = drv_o
            layout[t.name]["specs"][name] = entry
    log(f"  compiling {len(work)} objects ({jobs} jobs)")
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda w: _compile(*w), work))

    # ---- sizes
    for t in tgts:
        lay = layout[t.name]
        core_sizes = {o.stem: _sizes(t.size, o) for o in lay["core"]}
        total = {k: sum(v[k] for v in core_sizes.values()) for k in ("text", "data", "bss")}
        result["targets"].append({"name": t.name, "core_objects": core_sizes, "core_total": total})
        for name, spec in specs.items():
            e = lay["specs"][name]
            gen = _sizes(t.size, e["gen"])
            hnd = _sizes(t.size, e["handlers"])
            per_tool = per_tool_sizes(spec, _symbols(t.nm, e["gen"]), _symbols(t.nm, e["handlers"]))
            spec_out = result["specs"].setdefault(name, {"tools": len(spec.tools), "sizes": {}})
            spec_out["sizes"][t.name] = {"generated": gen, "handlers": hnd, "per_tool": per_tool}
        log(f"  {t.name}: core text {total['text']} B, data {total['data']} B, bss {total['bss']} B")

    # ---- host driver: allocations and instructions
    host = next(t for t in tgts if t.cxx == "g++")
    has_valgrind = shutil.which("valgrind") is not None
    for name, spec in specs.items():
        e = layout[host.name]["specs"][name]
        exe = e["dir"] / "driver"
        objs = [*layout[host.name]["core"], e["gen"], e["handlers"], e["driver"]]
        proc = subprocess.run(
            [host.cxx, *host.flags, *(str(o) for o in objs), "-o", str(exe)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise RuntimeError(f"link failed: {proc.stdout}{proc.stderr}")
        reqs = requests(spec)
        iters = 20 if quick else 200
        rows, probe = measure_host(
            exe,
            e["dir"],
            reqs,
            iters,
            has_valgrind,
            None if not quick else [2, 3],
            (2, 12) if quick else (10, 110),
        )
        result["specs"][name]["alloc_probe"] = probe
        result["specs"][name]["requests"] = rows
        result["specs"][name]["iterations"] = iters
        tot = sum(r["heap_allocations_per_request"] for r in rows)
        log(f"  {name}: {len(rows)} request kinds, heap allocations per request (all kinds) {tot:g}")
        for r in rows:
            if "instructions" in r:
                log(f"    {r['request']}: {r['instructions']:,.0f} instructions, {r['reply_bytes']} B reply")
    result["valgrind"] = has_valgrind
    if has_valgrind:
        result["scaling"] = _scaling(
            root / "scaling", host, layout[host.name]["core"], SCALES[:1] if quick else SCALES, log
        )
        from benchmarks import device_upstream

        result["upstream"] = device_upstream.run(root / "upstream", SCALES[:1] if quick else SCALES, log)
    return result


def measure_host(
    exe: Path,
    workdir: Path,
    reqs: Sequence[tuple[str, bytes]],
    iters: int,
    valgrind: bool,
    kinds: Optional[Sequence[int]] = None,
    counts: tuple[int, int] = (10, 110),
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Runs the linked host driver over ``reqs``: one row per request (reply, heap, progress
    notifications sent and, under valgrind, instructions for ``kinds``, all by default) and
    the allocation counter's probe."""
    req_file = workdir / "requests.jsonl"
    req_file.write_bytes(b"\n".join(r for _, r in reqs) + b"\n")
    env = dict(os.environ, MCPGEN_BENCH_REQUESTS=str(req_file))
    rows: list[dict[str, Any]] = []
    for k, (label, _) in enumerate(reqs):
        shown = subprocess.run([str(exe), "show", str(k)], capture_output=True, text=True, env=env).stdout
        rows.append(
            {
                "request": label,
                "reply_bytes": len(shown.rstrip("\n").encode()),
                "ok": '"error"' not in shown and '"isError":true' not in shown,
            }
        )
    allocs = json.loads(
        subprocess.run(
            [str(exe), "allocs", str(iters)], capture_output=True, text=True, env=env, check=True
        ).stdout
    )
    probe: dict[str, int] = allocs["probe"]
    if probe["malloc"] < 1 or probe["new"] < 1:
        raise RuntimeError(f"the allocation counter does not work: {probe}")
    for row, a in zip(rows, allocs["per_kind"], strict=False):
        row["heap_allocations_per_request"] = (a["malloc"] + a["new"]) / iters
        row["heap_frees_per_request"] = (a["free"] + a["delete"]) / iters
        row["heap_bytes_per_request"] = a["bytes"] / iters
        if a.get("sent"):
            row["notifications_per_request"] = a["sent"] / iters
            row["notification_bytes_per_request"] = a["sent_bytes"] / iters
    if valgrind:
        n1, n2 = counts
        for k in range(len(reqs)) if kinds is None else kinds:
            ir1 = _callgrind_ir(exe, env, k, n1, workdir)
            ir2 = _callgrind_ir(exe, env, k, n2, workdir)
            rows[k]["instructions"] = (ir2 - ir1) / (n2 - n1)
            rows[k]["instructions_first_call"] = ir1 - (n1 - 1) * rows[k]["instructions"]
        _per_notification(rows)
    return rows, probe


def _per_notification(rows: Sequence[dict[str, Any]]) -> None:
    """For a call with a progressToken: the instructions of one notifications/progress, i.e.
    its difference with the same call without a token, divided by the notifications sent."""
    by_label = {r["request"]: r for r in rows}
    for r in rows:
        base = by_label.get(r["request"].removesuffix(PROGRESS_SUFFIX))
        sent = r.get("notifications_per_request")
        if (
            r["request"].endswith(PROGRESS_SUFFIX)
            and base
            and sent
            and "instructions" in r
            and "instructions" in base
        ):
            r["instructions_per_notification"] = (r["instructions"] - base["instructions"]) / sent


def _per_request(exe: Path, env: dict[str, str], kind: int, workdir: Path, mode: str = "run") -> float:
    n1, n2 = (3, 13) if mode == "run" else (1, 3)
    return (
        _callgrind_ir(exe, env, kind, n2, workdir, mode) - _callgrind_ir(exe, env, kind, n1, workdir, mode)
    ) / (n2 - n1)


def write_generated(spec: Spec, sdir: Path) -> Path:
    """The spec's generated C++ in ``sdir/generated``; a file left as it is when unchanged,
    so the incremental compile sees no new timestamp."""
    gdir = sdir / "generated"
    gdir.mkdir(parents=True, exist_ok=True)
    for rel, content in emit_cpp.emit(spec).items():
        path = gdir / Path(rel).name
        if not path.exists() or path.read_text() != content:
            path.write_text(content)
    return gdir


def _scaling(
    root: Path, host: Target, core_objs: Sequence[Path], scales: Sequence[int], log: Log
) -> dict[str, Any]:
    """Instructions per request of the synthetic 10/100/1000-tool specs (host build)."""
    from mcpgen.codegen.spec.loader import load_spec_text

    out: dict[str, Any] = {}
    for n in scales:
        spec = load_spec_text(scale_spec_text(n), f"<scale-{n}>")
        sdir = root / f"tools-{n}"
        gdir = write_generated(spec, sdir)
        handlers = sdir / "handlers.cpp"
        text = emit_cpp.starter_handlers(spec, f"scale-{n}.yaml")
        if not handlers.exists() or handlers.read_text() != text:
            handlers.write_text(text)
        incs = [CORE, gdir]
        objs = []
        for src, name in ((gdir / "mcp_tools.cpp", "gen"), (handlers, "handlers"), (DRIVER, "driver")):
            obj = sdir / f"{name}.o"
            _compile(host.cxx, host.flags, incs, src, obj)
            objs.append(obj)
        exe = sdir / "driver"
        proc = subprocess.run(
            [host.cxx, *host.flags, *(str(o) for o in [*core_objs, *objs]), "-o", str(exe)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"link failed: {proc.stdout}{proc.stderr}")
        reqs = scale_requests(spec)
        req_file = sdir / "requests.jsonl"
        req_file.write_bytes(b"\n".join(r for _, r in reqs) + b"\n")
        env = dict(os.environ, MCPGEN_BENCH_REQUESTS=str(req_file))
        for k, (label, _) in enumerate(reqs):
            shown = subprocess.run([str(exe), "show", str(k)], capture_output=True, text=True, env=env).stdout
            if label.startswith("call") and '"isError":false' not in shown:
                raise RuntimeError(f"{n} tools, {label}: unexpected reply {shown[:300]}")
        row: dict[str, Any] = {label: _per_request(exe, env, k, sdir) for k, (label, _) in enumerate(reqs)}
        pages = json.loads(
            subprocess.run(
                [str(exe), "pages", "1"], capture_output=True, text=True, env=env, check=True
            ).stdout
        )["pages"]
        iters = 20
        allocs = json.loads(
            subprocess.run(
                [str(exe), "allocs", str(iters)], capture_output=True, text=True, env=env, check=True
            ).stdout
        )
        row["allocations"] = {
            label: (a["malloc"] + a["new"]) / iters
            for (label, _), a in zip(reqs, allocs["per_kind"], strict=False)
        }
        row["full listing"] = _per_request(exe, env, 0, sdir, mode="pages")
        row["pages"] = pages
        row["full listing per tool"] = row["full listing"] / n
        row["last / first call"] = row["call last tool"] / row["call first tool"]
        out[str(n)] = row
        log(
            f"  {n} tools: call first {row['call first tool']:,.0f}, last {row['call last tool']:,.0f} "
            f"({row['last / first call']:.2f}x); page {row['tools/list']:,.0f}; full listing "
            f"{row['full listing']:,.0f} in {pages} pages ({row['full listing per tool']:,.0f} per tool)"
        )
    return out


def host_driver(name: str, root: Optional[Path] = None) -> tuple[Path, Spec]:
    """Compiles and links the host driver of one example spec only (same objects, flags and
    directories as :func:`run`, so a later full run reuses them); returns it and the spec."""
    root = (root or REPO / "build" / "benchmarks" / "device").resolve()
    spec = load_spec(SPECS[name])
    host = targets()[0]
    tdir = root / re.sub(r"[^a-z0-9]+", "-", host.cxx)
    sdir = tdir / device_slug(spec.device.name)
    gdir = write_generated(spec, sdir)
    incs = [CORE, gdir]
    work: list[tuple[str, Sequence[str], Sequence[Path], Path, Path]] = [
        (host.cxx, host.flags, [CORE], s, tdir / "core" / (s.stem + ".o"))
        for s in sorted((CORE / "mcpgen").glob("*.cpp"))
    ]
    handlers = SPECS[name].with_name(SPECS[name].stem + "_handlers.cpp")
    for src, obj in (
        (gdir / "mcp_tools.cpp", "mcp_tools.o"),
        (handlers, "handlers.o"),
        (DRIVER, "driver.o"),
    ):
        work.append((host.cxx, host.flags, incs, src, sdir / obj))
    with ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
        list(pool.map(lambda w: _compile(*w), work))
    exe = sdir / "driver"
    proc = subprocess.run(
        [host.cxx, *host.flags, *(str(w[4]) for w in work), "-o", str(exe)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"link failed: {proc.stdout}{proc.stderr}")
    return exe, spec


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m benchmarks.device --spec desk-lamp --match fade``: the request table of one
    spec (all its requests for the heap count and notifications; instructions for those whose
    label contains a --match), without the sizes, scaling and upstream parts of a full run."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m benchmarks.device", description=main.__doc__)
    ap.add_argument("--spec", choices=sorted(SPECS), default="desk-lamp")
    ap.add_argument("--match", action="append", default=[], help="measure instructions of these requests")
    ap.add_argument("--iterations", type=int, default=200, help="rounds of the heap count")
    ap.add_argument("--build-dir", type=Path, default=None, help="default: build/benchmarks/device")
    args = ap.parse_args(argv)
    exe, spec = host_driver(args.spec, args.build_dir)
    reqs = requests(spec)
    kinds = [k for k, (label, _) in enumerate(reqs) if any(m in label for m in args.match)]
    rows, probe = measure_host(
        exe, exe.parent, reqs, args.iterations, shutil.which("valgrind") is not None, kinds
    )
    print(
        json.dumps(
            {"spec": args.spec, "alloc_probe": probe, "iterations": args.iterations, "requests": rows},
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

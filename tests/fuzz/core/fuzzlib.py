"""Builds and runs the libFuzzer harness of the device core (fuzz_core.cpp).

Used by test_fuzz_core.py (a short run in the test suite) and by ``scripts/fuzz.sh core
[seconds]`` (a long run: ``python tests/fuzz/core/fuzzlib.py [seconds]``), which keeps
its corpora in ``build/fuzz/core/<buffers>/corpus`` and saves every crash straight into
``tests/fuzz/core/regressions/``, where the test suite replays it from then on.

The seed corpus is generated from the spec, one file per input: every JSON-RPC method
the core serves, bare and in the xiaozhi envelope, a ``tools/call`` of every tool with
example arguments, the peer hello, responses and notifications the device must ignore,
and whole sessions (several messages, one per line).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
HARNESS = HERE / "fuzz_core.cpp"
DICTIONARY = HERE / "mcp.dict"
REGRESSIONS = HERE / "regressions"
DEFAULT_SPEC = REPO / "toolspec" / "default_device.yaml"
CLANG = os.environ.get("MCPGEN_CLANGXX", "clang++")

# The request buffer of the ports is 4096 bytes; a little more lets the fuzzer reach the
# oversized-line path and sessions of several messages.
MAX_LEN = 6000

SANITIZERS = "-fsanitize=fuzzer,address,undefined"
CXX_FLAGS: tuple[str, ...] = (
    "-std=c++17",
    "-O1",
    "-g",
    "-fno-omit-frame-pointer",
    "-fno-exceptions",
    "-fno-rtti",
    "-Wall",
    "-Wextra",
    "-Werror",
    SANITIZERS,
    # Undefined behaviour aborts like a memory error (the default only prints). vptr
    # checks need RTTI, which the core is built without.
    "-fno-sanitize-recover=all",
    "-fno-sanitize=vptr",
)


class FuzzSetupError(RuntimeError):
    """clang or a library the harness needs is missing; the message names the package."""


def missing_tools() -> Optional[str]:
    """None when the harness can be built, else one line naming what to install."""
    if shutil.which(CLANG) is None:
        return f"{CLANG} not found: install clang (Debian/Ubuntu: apt-get install clang)"
    return None


# Buffer configurations the fuzzer runs with: the ports' defaults, and buffers so small
# that most replies overflow (the writer's and the reply paths' truncation handling).
BUFFERS: dict[str, dict[str, str]] = {
    "default": {},
    "tiny": {
        "MCPGEN_REQUEST_BUFFER_SIZE": "256",
        "MCPGEN_RESPONSE_BUFFER_SIZE": "512",
        "MCPGEN_SCRATCH_SIZE": "128",
    },
}


def build(outdir: Path, spec: Path = DEFAULT_SPEC, *, buffers: str = "default") -> Path:
    """Generates the spec's tables and links core + tables + handlers + harness with the
    given buffer configuration (:data:`BUFFERS`); returns the fuzzer executable."""
    from mcpgen.codegen import resources
    from mcpgen.codegen.emit import cpp as emit_cpp
    from mcpgen.codegen.spec.loader import load_spec
    from mcpgen.codegen.targets.writer import write_tree

    problem = missing_tools()
    if problem:
        raise FuzzSetupError(problem)
    outdir.mkdir(parents=True, exist_ok=True)
    loaded = load_spec(spec)
    files = emit_cpp.emit(loaded)
    write_tree(outdir / "gen", files)
    generated = sorted(outdir / "gen" / rel for rel in files if rel.endswith(".cpp"))
    gen_includes = sorted({(outdir / "gen" / rel).parent for rel in files if rel.endswith(".h")})
    handlers = spec.parent / f"{spec.stem}_handlers.cpp"
    if not handlers.is_file():
        raise FuzzSetupError(f"{handlers} not found: the fuzzer runs the spec's real handlers")
    core = resources.firmware_template() / "core"
    sources = [*sorted((core / "mcpgen").glob("*.cpp")), *generated, handlers, HARNESS]
    includes = [f"-I{d}" for d in (core, core / "mcpgen", *gen_includes, spec.parent)]
    exe = outdir / ("fuzz_core" if buffers == "default" else f"fuzz_core_{buffers}")
    defines = [f"-D{k}={v}" for k, v in sorted(BUFFERS[buffers].items())]
    cmd = [CLANG, *CXX_FLAGS, *defines, *includes, *map(str, sources), "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"building the fuzzer failed:\n$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    return exe


# ---- seed corpus


def _rpc(method: str, params: Optional[dict[str, Any]] = None, id: Optional[int] = 1) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        msg["id"] = id
    if params is not None:
        msg["params"] = params
    return msg


def _envelope(payload: dict[str, Any], session: str = "fuzz-session-1") -> dict[str, Any]:
    return {"session_id": session, "type": "mcp", "payload": payload}


def seed_inputs(spec: Path = DEFAULT_SPEC) -> dict[str, bytes]:
    """Valid inputs for the spec, by a short descriptive name."""
    from mcpgen.codegen.spec.examples import example_arguments
    from mcpgen.codegen.spec.loader import load_spec

    loaded = load_spec(spec)
    init = _rpc(
        "initialize",
        {
            "protocolVersion": loaded.device.protocol_version,
            "capabilities": {"vision": {"url": "http://127.0.0.1:8080/vision", "token": "fuzz-token"}},
            "clientInfo": {"name": "fuzz", "version": "1.0"},
        },
    )
    messages: dict[str, dict[str, Any]] = {
        "initialize": init,
        "initialized": _rpc("notifications/initialized", id=None),
        "ping": _rpc("ping", id=7),
        "list": _rpc("tools/list", {}),
        "list_user": _rpc("tools/list", {"withUserTools": True}),
        "list_cursor": _rpc("tools/list", {"cursor": "1"}),
        "unknown_method": _rpc("resources/list", {}),
        "response": {"jsonrpc": "2.0", "id": 3, "result": {}},
        "error_response": {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "no"}},
        "unknown_tool": _rpc("tools/call", {"name": "self.no_such_tool", "arguments": {}}),
    }
    for n, tool in enumerate(loaded.tools):
        call = {"name": tool.name, "arguments": example_arguments(tool)}
        messages[f"call_{tool.name}"] = _rpc("tools/call", call, id=100 + n)
    messages.update(_resource_messages(loaded))
    seeds: dict[str, bytes] = {}
    for name, msg in messages.items():
        seeds[f"bare_{name}"] = json.dumps(msg).encode()
        seeds[f"env_{name}"] = json.dumps(_envelope(msg)).encode()
    hello = {"type": "hello", "version": 1, "transport": "websocket", "session_id": "fuzz-session-1"}
    seeds["peer_hello"] = json.dumps(hello).encode()
    tts = {"session_id": "fuzz-session-1", "type": "tts", "state": "start"}
    seeds["tts_ignored"] = json.dumps(tts).encode()
    calls = [messages[k] for k in messages if k.startswith("call_")]
    session = [init, messages["initialized"], messages["list"], *calls]
    seeds["session_bare"] = b"\n".join(json.dumps(m).encode() for m in session)
    seeds["session_env"] = b"\n".join(
        [json.dumps(hello).encode(), *(json.dumps(_envelope(m)).encode() for m in session)]
    )
    oversized = _rpc("ping", {"pad": "x" * 4200}, id=9)  # longer than the request buffer
    seeds["oversized_then_ping"] = b"\n".join(json.dumps(m).encode() for m in (oversized, messages["ping"]))
    return seeds


def _resource_messages(loaded: Any) -> dict[str, dict[str, Any]]:
    """resources/* requests of a spec with resources: both lists, a read of every resource
    (templates with example values), an unknown URI and bad template values."""
    from mcpgen.codegen.spec.examples import example_value

    if not loaded.resources:
        return {}
    out: dict[str, dict[str, Any]] = {
        "resources_list": _rpc("resources/list", {}),
        "resources_templates": _rpc("resources/templates/list", {"cursor": "000100000000"}),
        "resources_unknown": _rpc("resources/read", {"uri": "nope://x"}),
    }
    for n, r in enumerate(loaded.resources):
        uri = r.uri
        if uri is None:
            uri = r.uri_template
            for p in r.params:
                value = example_value(p)
                text = json.dumps(value) if not isinstance(value, str) else value
                uri = uri.replace("{" + p.name + "}", text)
            bad = re.sub(r"\{[^}]*\}", "%zz", r.uri_template)
            out[f"read_bad_{r.name}"] = _rpc("resources/read", {"uri": bad}, id=300 + n)
        out[f"read_{r.name}"] = _rpc("resources/read", {"uri": uri}, id=200 + n)
    return out


def write_seeds(directory: Path, spec: Path = DEFAULT_SPEC) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in seed_inputs(spec).items():
        path = directory / re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        path.write_bytes(data)
        paths.append(path)
    return paths


# ---- running


@dataclass(frozen=True)
class FuzzRun:
    returncode: int
    executions: int  # inputs run
    exec_per_sec: int
    new_units: int  # corpus growth
    peak_rss_mb: int
    crashes: list[Path]  # inputs libFuzzer saved (crash-, leak-, timeout-, oom-)
    output: str

    def summary(self) -> str:
        return (
            f"{self.executions} executions, {self.exec_per_sec} exec/s, {self.new_units} new corpus units, "
            f"peak RSS {self.peak_rss_mb} MB, {len(self.crashes)} crash input(s)"
        )


def _stat(output: str, name: str) -> int:
    m = re.search(rf"stat::{name}:\s*(\d+)", output)
    return int(m.group(1)) if m else 0


ARTIFACT_KINDS = ("crash-", "leak-", "timeout-", "oom-")


def _artifacts(directory: Path) -> list[Path]:
    """The inputs libFuzzer saved in ``directory`` (it names them by kind and hash)."""
    return [p for p in directory.iterdir() if p.is_file() and p.name.startswith(ARTIFACT_KINDS)]


def fuzz(exe: Path, *, seconds: int, corpus: Path, seeds: Path, artifacts: Path) -> FuzzRun:
    """Runs libFuzzer for ``seconds``: new inputs go to ``corpus``, crashing ones to
    ``artifacts``. Stops at the first crash (libFuzzer's default)."""
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    before = set(_artifacts(artifacts))
    cmd = [
        str(exe),
        f"-max_total_time={seconds}",
        f"-dict={DICTIONARY}",
        f"-max_len={MAX_LEN}",
        "-timeout=10",
        "-rss_limit_mb=2048",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/",
        str(corpus),
        str(seeds),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    output = proc.stdout + proc.stderr
    crashes = sorted(set(_artifacts(artifacts)) - before)
    return FuzzRun(
        returncode=proc.returncode,
        executions=_stat(output, "number_of_executed_units"),
        exec_per_sec=_stat(output, "average_exec_per_sec"),
        new_units=_stat(output, "new_units_added"),
        peak_rss_mb=_stat(output, "peak_rss_mb"),
        crashes=crashes,
        output=output,
    )


def replay(exe: Path, inputs: list[Path]) -> subprocess.CompletedProcess[str]:
    """Runs each input once (no fuzzing); returncode 0 when none crashes."""
    return subprocess.run([str(exe), *map(str, inputs)], capture_output=True, text=True, timeout=120)


def main(argv: list[str]) -> int:
    """``python tests/fuzz/core/fuzzlib.py [seconds] [default|tiny|all]``: the long run of
    scripts/fuzz.sh, ``seconds`` (default 600) per buffer configuration."""
    seconds = int(argv[0]) if argv else 600
    which = argv[1] if len(argv) > 1 else "all"
    if which != "all" and which not in BUFFERS:
        expected = ", ".join(("all", *BUFFERS))
        print(f"fuzz: unknown buffer configuration {which!r}; expected one of {expected}", file=sys.stderr)
        return 2
    status = 0
    for buffers in BUFFERS if which == "all" else (which,):
        work = REPO / "build" / "fuzz" / "core" / buffers
        try:
            exe = build(work, buffers=buffers)
        except FuzzSetupError as exc:
            print(f"fuzz: {exc}", file=sys.stderr)
            return 2
        seeds = work / "seeds"
        write_seeds(seeds)
        known = sorted(_artifacts(REGRESSIONS))
        if known:
            verdict = "ok" if replay(exe, known).returncode == 0 else "CRASH"
            print(f"fuzz[{buffers}]: {len(known)} regression input(s) replayed: {verdict}")
        print(f"fuzz[{buffers}]: running {exe} for {seconds} s (corpus {work / 'corpus'})", flush=True)
        run = fuzz(exe, seconds=seconds, corpus=work / "corpus", seeds=seeds, artifacts=REGRESSIONS)
        print(f"fuzz[{buffers}]: {run.summary()}", flush=True)
        if run.crashes or run.returncode != 0:
            tail = "\n".join(run.output.splitlines()[-40:])
            saved = ", ".join(map(str, run.crashes)) or "(none saved)"
            print(
                f"{tail}\nfuzz[{buffers}]: crash saved as {saved}; the test suite replays everything in "
                f"{REGRESSIONS} (commit it)",
                file=sys.stderr,
            )
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

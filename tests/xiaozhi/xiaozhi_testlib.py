"""Helpers of the xiaozhi-target tests: find the stock header, build and drive the harness."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOOLSPEC = REPO / "toolspec"
DEFAULT_SPEC = TOOLSPEC / "default_device.yaml"
LAMP_SPEC = TOOLSPEC / "desk_lamp.yaml"
HARNESS_SOURCE = Path(__file__).resolve().parent / "xiaozhi_harness.cc"
# A stand-in for the stock main/mcp_server.h written for these tests (see its header
# comment): the glue's behaviour is tested with it on every machine.
STANDIN_DIR = Path(__file__).resolve().parent / "stock_standin"
SOURCE_ENV = "MCPGEN_XIAOZHI_SRC"

STOCK_HEADER = "main/mcp_server.h"
CJSON_INCLUDE = Path("/usr/include/cjson")  # Debian libcjson-dev puts cJSON.h here

CXXFLAGS = ("-std=c++17", "-O1", "-g", "-Wall", "-Wextra", "-Werror")
# The project's rule for everything but the unit that includes the stock header.
NO_EXCEPTIONS = ("-fno-exceptions", "-fno-rtti")
# The stock main/mcp_server.h contains `throw`, so the one generated unit including it
# (with the port's stock adapter) builds with exceptions, as the stock firmware does.
STOCK_UNITS = frozenset({"mcpgen_xiaozhi_tools.cc"})
SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=undefined")
LIBS = ("-lcjson", "-lmbedcrypto")


def real_stock_header(dest_dir: Path) -> Path | None:
    """A directory holding the real stock ``mcp_server.h`` from ``$MCPGEN_XIAOZHI_SRC`` (a
    xiaozhi-esp32 checkout), or None when the variable is not set. Raises
    FileNotFoundError when it is set but holds no header (a wrong setting fails loudly)."""
    src = os.environ.get(SOURCE_ENV)
    if not src:
        return None
    header = Path(src) / STOCK_HEADER
    if not header.is_file():
        raise FileNotFoundError(f"{SOURCE_ENV}={src}: no {STOCK_HEADER} there")
    dest_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(header, dest_dir / "mcp_server.h")
    return dest_dir


def missing_libraries(cxx: str = "g++") -> str | None:
    """Why the stock header cannot be compiled here (cJSON / mbedtls), or None."""
    if shutil.which(cxx) is None:
        return f"{cxx} not found"
    probe = "#include <cJSON.h>\n#include <mbedtls/base64.h>\nint main() { return 0; }\n"
    proc = subprocess.run(
        [cxx, "-x", "c++", f"-I{CJSON_INCLUDE}", "-", "-o", os.devnull, *LIBS],
        input=probe,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return (
            "cJSON or mbedtls headers/libraries missing (apt-get install libcjson-dev libmbedtls-dev): "
            + proc.stderr.strip()[:300]
        )
    return None


def sanitizers_work(cxx: str = "g++") -> bool:
    proc = subprocess.run(
        [cxx, "-x", "c++", *SANITIZE, "-", "-o", os.devnull],
        input="int main() { return 0; }\n",
        capture_output=True,
        text=True,
    )
    return proc.returncode == 0


def glue_sources(glue_dir: Path) -> list[Path]:
    return sorted([*glue_dir.glob("*.cc"), *glue_dir.glob("*.cpp"), *glue_dir.glob("mcpgen/*.cpp")])


def unit_flags(src: Path) -> tuple[str, ...]:
    """The flags a glue unit builds with: -fno-exceptions -fno-rtti unless it includes the stock header."""
    return CXXFLAGS + (("-fno-rtti",) if src.name in STOCK_UNITS else NO_EXCEPTIONS)


# The harness firmware has the stock registrations of the clashing names removed, so the
# spec's versions of those tools run (the glue leaves them out otherwise, see the
# --stock-boot harness).
SPEC_NAMES_WIN = ("-DMCPGEN_XIAOZHI_REGISTER_STOCK_NAMES=1",)


def compile_unit(
    src: Path, glue_dir: Path, header_dir: Path, obj: Path, flags: tuple[str, ...], cxx: str = "g++"
) -> subprocess.CompletedProcess[str]:
    includes = (f"-I{glue_dir}", f"-I{header_dir}", f"-I{CJSON_INCLUDE}")
    cmd = [cxx, *flags, *includes, "-c", str(src), "-o", str(obj)]
    return subprocess.run(cmd, capture_output=True, text=True)


def compile_units(
    glue_dir: Path, header_dir: Path, objdir: Path, *, extra: tuple[str, ...] = (), cxx: str = "g++"
) -> list[Path]:
    """Compiles every unit of the glue directory with its unit_flags (+ ``extra``); returns the objects."""
    objdir.mkdir(parents=True, exist_ok=True)
    objs: list[Path] = []
    for src in glue_sources(glue_dir):
        obj = objdir / (src.stem + ".o")
        proc = compile_unit(src, glue_dir, header_dir, obj, unit_flags(src) + extra, cxx)
        assert proc.returncode == 0, f"{' '.join(proc.args)}\n{proc.stdout}{proc.stderr}"
        objs.append(obj)
    return objs


def build_harness(
    glue_dir: Path,
    header_dir: Path,
    exe: Path,
    *,
    sanitize: bool,
    cxx: str = "g++",
    defines: tuple[str, ...] = SPEC_NAMES_WIN,
) -> Path:
    """The harness linked from units built as on the firmware: see unit_flags."""
    extra = (SANITIZE if sanitize else ()) + defines
    objs = compile_units(glue_dir, header_dir, exe.parent / f"{exe.name}_obj", extra=extra, cxx=cxx)
    cmd = [
        cxx,
        *CXXFLAGS,
        *extra,
        f"-I{glue_dir}",
        f"-I{header_dir}",
        f"-I{CJSON_INCLUDE}",
        str(HARNESS_SOURCE),
        *(str(o) for o in objs),
        *LIBS,
        "-o",
        str(exe),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
    return exe


@dataclass
class Reply:
    """One tools/call as the stock server would answer it."""

    message: dict[str, Any]  # the JSON-RPC reply
    notifications: list[dict[str, Any]]

    @property
    def error(self) -> str | None:
        err = self.message.get("error")
        return None if err is None else err["message"]

    @property
    def content(self) -> list[dict[str, Any]]:
        assert "result" in self.message, f"expected a result, got {self.message}"
        assert self.message["result"]["isError"] is False
        return self.message["result"]["content"]

    @property
    def text(self) -> str:
        (item,) = self.content
        assert item["type"] == "text", item
        return item["text"]


class Harness:
    """Runs the harness executable on a batch of requests (``args``: its command line,
    e.g. ``("--stock-boot",)``)."""

    def __init__(self, exe: Path, args: tuple[str, ...] = ()) -> None:
        self.exe = exe
        self.args = args

    def run(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="print_stacktrace=1")
        proc = subprocess.run(
            [str(self.exe), *self.args],
            input="".join(json.dumps(r) + "\n" for r in requests),
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert proc.returncode == 0, f"harness failed ({proc.returncode}):\n{proc.stderr}"
        assert proc.stderr == "", proc.stderr
        lines = proc.stdout.splitlines()
        assert len(lines) == len(requests), proc.stdout
        return [json.loads(line) for line in lines]

    def list_tools(self) -> list[dict[str, Any]]:
        (out,) = self.run([{"op": "list"}])
        return [{"user_only": t["user_only"], **json.loads(t["entry"])} for t in out["tools"]]

    def calls(self, *calls: tuple[str, dict[str, Any]]) -> list[Reply]:
        """Calls in order in one process (state carries over between them)."""
        outs = self.run([{"op": "call", "name": n, "arguments": a} for n, a in calls])
        replies = []
        for out in outs:
            # The reply must be valid JSON even though the stock ReplyError does not escape.
            message = json.loads(out["reply"])
            replies.append(Reply(message, [json.loads(n) for n in out["notifications"]]))
        return replies

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Reply:
        return self.calls((name, arguments or {}))[0]


_ESCAPE = re.compile(r"\\([0-7]{3}|.)")


def decode_cpp_literals(text: str) -> str:
    """The value of adjacent C++ string literals as written by codegen.emit.cpp.cpp_string."""
    raw = bytearray()
    for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', text):
        pos = 0
        for m in _ESCAPE.finditer(lit):
            raw += lit[pos : m.start()].encode()
            esc = m.group(1)
            raw += bytes([int(esc, 8)]) if len(esc) == 3 else esc.encode()
            pos = m.end()
        raw += lit[pos:].encode()
    return raw.decode("utf-8")

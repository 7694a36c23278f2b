"""The machine and the versions a benchmark run used (recorded in the report)."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional


def _first_line(cmd: list[str]) -> Optional[str]:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


def _pkg(name: str) -> Optional[str]:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def os_name() -> str:
    try:
        text = Path("/etc/os-release").read_text()
        m = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', text, re.M)
        if m:
            return f"{m.group(1)} (kernel {platform.release()})"
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}"


def machine() -> dict[str, Any]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    virt = _first_line(["systemd-detect-virt"]) if shutil.which("systemd-detect-virt") else None
    mem_kb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    return {
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": affinity,
        "arch": platform.machine(),
        "os": os_name(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1) if mem_kb else None,
        "virtualization": virt,
    }


def versions() -> dict[str, Optional[str]]:
    gxx = _first_line(["g++", "--version"])
    arm = _first_line(["arm-none-eabi-g++", "--version"])
    vg = _first_line(["valgrind", "--version"])
    return {
        "python": sys.version.split()[0] + f" ({platform.python_implementation()})",
        "orjson": _pkg("orjson"),
        "Cython": _pkg("Cython"),
        "mcp": _pkg("mcp"),
        "mcp-types": _pkg("mcp-types"),
        "pydantic": _pkg("pydantic"),
        "pydantic-core": _pkg("pydantic_core") or _pkg("pydantic-core"),
        "websockets": _pkg("websockets"),
        "fastjsonschema": _pkg("fastjsonschema"),
        "jsonschema": _pkg("jsonschema"),
        "g++": gxx,
        "arm-none-eabi-g++": arm,
        "valgrind": vg,
    }

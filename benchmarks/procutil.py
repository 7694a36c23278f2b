"""Small helpers for the benchmark's child processes (JSON-lines control, limits)."""

from __future__ import annotations

import json
import os
import resource
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Optional

REPO = Path(__file__).resolve().parent.parent


def raise_nofile_limit() -> tuple[int, int]:
    """Raises the soft RLIMIT_NOFILE to the hard limit; returns the (soft, hard) now set."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard_target = max(soft, 1 << 16)
    else:
        hard_target = hard
    if soft < hard_target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard_target, hard))
        except (ValueError, OSError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def rss_bytes() -> int:
    """Resident set size of this process (from /proc/self/statm)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child_env(pure: bool = False) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    if pure:
        env["MCPGEN_PURE_PYTHON"] = "1"
    else:
        env.pop("MCPGEN_PURE_PYTHON", None)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def write_line(stream: IO[str], obj: Any) -> None:
    stream.write(json.dumps(obj) + "\n")
    stream.flush()


def emulator(
    url: str,
    count: int,
    max_seconds: float,
    *,
    prefix: Optional[str] = None,
    source: Optional[str] = None,
    name: Optional[str] = None,
) -> Child:
    """An emulator process (``benchmarks.gw_emulator``) connecting ``count`` devices to ``url``."""
    argv = ["-m", "benchmarks.gw_emulator", "--url", url, "--count", str(count)]
    argv += ["--max-seconds", str(max_seconds)]
    if prefix is not None:
        argv += ["--prefix", prefix]
    if source is not None:
        argv += ["--source", source]
    return Child(argv, name=name or f"emulator {prefix or url}")


class Child:
    """A child Python process controlled with JSON lines on stdin/stdout."""

    def __init__(self, args: list[str], pure: bool = False, name: str = "child") -> None:
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            text=True,
            env=child_env(pure),
            cwd=str(REPO),
        )
        self._sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def read(self, timeout: float) -> dict[str, Any]:
        """The next JSON line from the child (non-JSON lines are skipped)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name}: no answer within {timeout:g}s")
            if not self._sel.select(left):
                continue
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} exited (code {self.proc.poll()})")
            line = line.strip()
            if line.startswith("{"):
                return json.loads(line)  # type: ignore[no-any-return]

    def request(self, cmd: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert self.proc.stdin is not None
        write_line(self.proc.stdin, cmd)
        reply = self.read(timeout)
        if "error" in reply:
            raise RuntimeError(f"{self.name}: {reply['error']}")
        return reply

    def stop(self, timeout: float = 10.0) -> Optional[int]:
        """Asks the child to quit, then terminates it (only this child, by its pid)."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                write_line(self.proc.stdin, {"cmd": "quit"})
                self.proc.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self._sel.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode


class Proc:
    """A child Python process answering JSON lines, read without a timeout (the memory
    drivers, which wait as long as a cycle takes); ``env`` defaults to :func:`child_env`."""

    def __init__(self, args: list[str], env: Optional[dict[str, str]] = None) -> None:
        self.p = subprocess.Popen(
            [sys.executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=env or child_env(),
        )  # fmt: skip

    def ask(self, obj: Optional[dict[str, Any]] = None, line: Optional[str] = None) -> dict[str, Any]:
        """Sends ``obj`` as JSON (or a raw ``line``), if any, and returns the next line read."""
        assert self.p.stdin is not None and self.p.stdout is not None
        if obj is not None or line is not None:
            self.p.stdin.write((json.dumps(obj) if obj is not None else line or "") + "\n")
            self.p.stdin.flush()
        got = self.p.stdout.readline()
        if not got:
            raise RuntimeError(f"child {self.p.args} ended")
        return json.loads(got)  # type: ignore[no-any-return]

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(30)

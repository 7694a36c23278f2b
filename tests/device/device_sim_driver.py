"""A small driver for the host simulator's ``--stdio`` mode: one line out, one line in."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any, Optional, Union


class SimTimeout(AssertionError):
    pass


class StdioSim:
    """Runs ``<exe> --stdio``; stderr goes to a file (``self.stderr_path``)."""

    def __init__(self, exe: Path, log_dir: Path) -> None:
        log_dir.mkdir(parents=True, exist_ok=True)
        self.stderr_path = log_dir / f"sim-{id(self)}.log"
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [str(exe), "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lines: queue.Queue[Optional[bytes]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 1

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    # ---- raw lines
    def send_raw(self, data: Union[bytes, str]) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_line(self, data: Union[bytes, str]) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.send_raw(data + b"\n")

    def read_line(self, timeout: float = 5.0) -> str:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise SimTimeout(f"no reply within {timeout}s; stderr:\n{self.stderr()}") from None
        if line is None:
            raise SimTimeout(f"simulator exited ({self.proc.poll()}); stderr:\n{self.stderr()}")
        assert line.endswith(b"\n")
        return line[:-1].decode("utf-8")

    def read_json(self, timeout: float = 5.0) -> dict[str, Any]:
        return json.loads(self.read_line(timeout))

    def no_line(self, wait: float = 0.3) -> bool:
        try:
            line = self._lines.get(timeout=wait)
        except queue.Empty:
            return True
        self._lines.put(line)
        return False

    # ---- JSON-RPC helpers
    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: Optional[dict[str, Any]] = None, **extra: Any) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": extra.pop("id", self.new_id()), "method": method}
        if params is not None:
            msg["params"] = params
        msg.update(extra)
        self.send_line(json.dumps(msg))
        reply = self.read_json()
        assert reply.get("id") == msg["id"], reply
        return reply

    def call(self, name: str, arguments: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        reply = self.request("tools/call", params)
        assert "result" in reply, reply
        return reply["result"]

    def call_text(self, name: str, arguments: Optional[dict[str, Any]] = None) -> str:
        result = self.call(name, arguments)
        assert result["isError"] is False, result
        assert len(result["content"]) == 1 and result["content"][0]["type"] == "text", result
        return result["content"][0]["text"]

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            rc = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self._stderr.close()
        return rc

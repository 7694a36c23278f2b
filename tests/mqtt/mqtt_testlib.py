"""A real Mosquitto broker, the real C++ simulator in --mqtt mode, and an MQTT spy."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

from device_testlib import bindings_module, host_simulator

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.spec.names import device_class
from mcpgen.mqtt_topics import DEFAULT_PREFIX, DEFAULT_WORKER_GROUP, DOWN, STATE, UP

REPO = Path(__file__).resolve().parents[2]
PURE = os.environ.get("MCPGEN_PURE_PYTHON") == "1"
HOST = "127.0.0.1"

# docs/mqtt.md, "Topics and ACL", for the default prefix and worker group: the user
# `worker` may use every device's topics (and the shared subscription); a device (user
# name = device id) only its own subtree.
_P = DEFAULT_PREFIX
FLEET_ACL = f"""\
user worker
topic readwrite {_P}/#
topic read $share/{DEFAULT_WORKER_GROUP}/{_P}/+/{UP}

pattern write {_P}/%u/{UP}
pattern write {_P}/%u/{STATE}
pattern write {_P}/%u/reply/#
pattern read {_P}/%u/{DOWN}
"""


@dataclass
class Built:
    spec: Spec
    exe: Path
    module: ModuleType

    @property
    def bindings(self) -> Any:
        return getattr(self.module, device_class(self.spec.device.name))


def build(spec_path: Path, out: Path) -> Built:
    # shared with the other folders' tests (device_testlib): one compile per spec and session
    exe = host_simulator(spec_path, out)
    return Built(load_spec(spec_path), exe, bindings_module(spec_path, out, compile=not PURE))


# -- broker ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


class Broker:
    """``mosquitto`` on 127.0.0.1 with a config written into ``workdir``.

    ``users`` ({name: password}) switches anonymous access off and writes a password file
    (with ``mosquitto_passwd``); ``acl`` is the text of an ACL file; ``extra`` are more
    configuration lines (``set_tcp_nodelay true``...), written after the listener line.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        users: Optional[dict[str, str]] = None,
        acl: Optional[str] = None,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.workdir = workdir
        self.users = users
        self.acl = acl
        self.extra = extra
        self.port = 0
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = workdir / "mosquitto.log"

    def _config(self) -> str:
        lines = [
            f"listener {self.port} {HOST}",
            *self.extra,
            "persistence false",
            f"log_dest file {self.log_path}",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "connection_messages true",
        ]
        if os.geteuid() == 0:
            lines.append(f"user {getpass.getuser()}")  # do not drop to the 'mosquitto' user
        if self.users is None:
            lines.append("allow_anonymous true")
        else:
            # Plain "name:password" lines hashed in place by one mosquitto_passwd -U (one
            # process for hundreds of device users, not one each).
            pwfile = self.workdir / "passwd"
            pwfile.write_text("".join(f"{name}:{password}\n" for name, password in self.users.items()))
            pwfile.chmod(0o600)
            subprocess.run([_tool("mosquitto_passwd"), "-U", str(pwfile)], check=True, capture_output=True)
            lines += ["allow_anonymous false", f"password_file {pwfile}"]
        if self.acl is not None:
            aclfile = self.workdir / "acl"
            aclfile.write_text(self.acl)
            aclfile.chmod(0o600)
            lines.append(f"acl_file {aclfile}")
        return "\n".join(lines) + "\n"

    def start(self, port: Optional[int] = None) -> Broker:
        """Starts the broker (on ``port``, or a free one) and waits until it accepts."""
        for _attempt in range(5):
            self.port = port or free_port()
            conf = self.workdir / "mosquitto.conf"
            conf.write_text(self._config())
            with open(self.workdir / "mosquitto.stderr", "ab") as err:
                self.proc = subprocess.Popen(
                    [_tool("mosquitto"), "-c", str(conf)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                )
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                with contextlib.suppress(OSError), socket.create_connection((HOST, self.port), 0.2):
                    return self
                time.sleep(0.02)
            self.stop()
            if port is not None:  # the port was asked for: wait for it to become free
                time.sleep(0.5)
        raise RuntimeError(f"mosquitto did not start; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def _tool(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin")
    if path is None:
        raise FileNotFoundError(name)
    return path


def mosquitto_available() -> bool:
    try:
        _tool("mosquitto")
        _tool("mosquitto_passwd")
    except FileNotFoundError:
        return False
    return True


# -- simulator ---------------------------------------------------------------------------------


class Sim:
    """A simulator process in --mqtt mode; its stderr goes to a log file."""

    def __init__(
        self, proc: asyncio.subprocess.Process, log_path: Path, device_id: str, client_id: str
    ) -> None:
        self.proc = proc
        self.log_path = log_path
        self.device_id = device_id
        self.client_id = client_id

    def stop(self) -> None:  # SIGSTOP: connected as far as the broker can tell, but mute
        self.proc.send_signal(signal.SIGSTOP)

    def cont(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    async def wait_log(self, text: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log()
            if text in log:
                return log
            await asyncio.sleep(0.05)
        raise AssertionError(f"{text!r} not in the simulator log:\n{self.log()}")


@contextlib.asynccontextmanager
async def launch(
    exe: Path, port: int, device_id: str, logdir: Path, *extra: str, client_id: Optional[str] = None
) -> AsyncIterator[Sim]:
    client_id = client_id or f"sim-{device_id}-{os.getpid()}-{time.monotonic_ns() % 100000}"
    log_path = logdir / f"sim-{device_id}-{time.monotonic_ns()}.log"
    with open(log_path, "wb") as log:
        proc = await asyncio.create_subprocess_exec(
            str(exe),
            "--mqtt",
            f"{HOST}:{port}",
            "--device-id",
            device_id,
            "--client-id",
            client_id,
            *extra,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log,
        )
    sim = Sim(proc, log_path, device_id, client_id)
    try:
        yield sim
    finally:
        sim.cont()
        sim.kill()
        await proc.wait()


# -- spy ---------------------------------------------------------------------------------------


@dataclass
class Seen:
    topic: str
    payload: bytes
    retain: bool


class Spy:
    """A plain MQTT client subscribed to ``<prefix>/#`` recording every message."""

    def __init__(self, port: int, prefix: str = "mcpgen", **client_args: Any) -> None:
        self.port = port
        self.prefix = prefix
        self.client_args = client_args
        self.seen: list[Seen] = []
        self._task: Optional[asyncio.Task] = None
        self._client: Any = None
        self._event = asyncio.Event()

    async def __aenter__(self) -> Spy:
        import aiomqtt

        ready = asyncio.get_running_loop().create_future()

        async def run() -> None:
            async with aiomqtt.Client(HOST, self.port, **self.client_args) as client:
                self._client = client
                await client.subscribe(f"{self.prefix}/#", qos=1)
                ready.set_result(None)
                async for m in client.messages:
                    payload = m.payload if isinstance(m.payload, bytes) else str(m.payload).encode()
                    self.seen.append(Seen(m.topic.value, payload, bool(m.retain)))
                    self._event.set()

        self._task = asyncio.get_running_loop().create_task(run())
        done, _ = await asyncio.wait({self._task, ready}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            if self._task in done:
                self._task.result()
            raise TimeoutError("spy did not subscribe")
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task

    async def publish(self, topic: str, payload: bytes, qos: int = 1) -> None:
        await self._client.publish(topic, payload, qos=qos)

    async def wait(self, pred: Callable[[Seen], bool], timeout: float = 10.0) -> Seen:
        deadline = time.monotonic() + timeout
        start = 0
        while True:
            self._event.clear()  # (messages are appended only while we await)
            for m in self.seen[start:]:
                if pred(m):
                    return m
            start = len(self.seen)
            left = deadline - time.monotonic()
            if left <= 0:
                seen = "\n".join(f"  {m.topic} {m.payload[:160]!r}" for m in self.seen)
                raise AssertionError(f"no such message; seen:\n{seen}")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._event.wait(), left)

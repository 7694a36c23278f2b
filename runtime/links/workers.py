"""More than one core: N gateway worker processes sharing one port (``SO_REUSEPORT``).

Like gunicorn's workers: every process runs its own event loop, its own
:class:`~mcpgen.runtime.links.websocket.gateway.Gateway` bound to the same host and port with
``reuse_port=True``, and the backend's own code (``serve(gateway)``). The kernel spreads
new connections over the listening processes, so each worker owns the devices that
happened to connect to it; a device that reconnects may land on another worker, which
then runs its session (the old worker sees the old connection drop). Work that needs
every device in one place (calling any device from anywhere) is the MQTT fleet's job.

Linux and macOS (``SO_REUSEPORT`` balancing across processes is Linux behaviour; macOS
accepts the option but hands connections to one socket). ``serve`` must be importable
(a module-level function): workers are started with the ``spawn`` method so that no
parent state (loops, sockets, threads) leaks into them.

    # backend.py
    async def serve(gw: Gateway) -> None:
        async for device in gw.devices():
            ...

    if __name__ == "__main__":
        run_workers(serve, workers=4, port=8765, gateway_options={"auth": TokenAuth({...})})
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Optional

from mcpgen.runtime.core import loop as _loop
from mcpgen.runtime.links.websocket.gateway import Gateway

Serve = Callable[[Gateway], Awaitable[Any]]


def reserve_port(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A bound (not listening) ``SO_REUSEPORT`` socket holding ``port`` for the workers.

    With ``port=0`` the kernel picks one; keep the socket open while the workers run so
    the number stays yours. It never accepts connections (only listening sockets do).
    """
    if not hasattr(socket, "SO_REUSEPORT"):
        raise OSError("SO_REUSEPORT is not available on this platform: run one gateway process")
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind((host, port))
    return s


def _worker_main(
    serve: Serve,
    index: int,
    host: str,
    port: int,
    options: Mapping[str, Any],
    use_uvloop: bool,
    listening: Any = None,
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when workers stop

    async def main() -> None:
        import asyncio

        task = asyncio.current_task()
        assert task is not None
        # SIGTERM ends serve() with CancelledError, then the gateway closes its sessions.
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        async with Gateway(host, port, reuse_port=True, **dict(options)) as gw:
            gw.worker_index = index  # type: ignore[attr-defined]
            if listening is not None:
                listening.set()  # this worker's socket accepts connections from now on
            try:
                await serve(gw)
            except asyncio.CancelledError:
                pass

    _loop.run(main(), use_uvloop=use_uvloop)


@contextlib.contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    """Sets environment variables while processes are spawned (a spawned child inherits the
    parent's environment; an allocator is chosen when the interpreter starts, so the child's
    cannot be changed from inside it), then puts the old values back."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


class Workers:
    """N worker processes serving one port; :meth:`stop` ends them (SIGTERM, then kill)."""

    def __init__(
        self,
        serve: Serve,
        *,
        workers: int,
        host: str = "127.0.0.1",
        port: int = 0,
        gateway_options: Optional[Mapping[str, Any]] = None,
        use_uvloop: bool = True,
        compact_memory: bool = False,
    ) -> None:
        """``compact_memory`` starts the workers with ``PYTHONMALLOC=malloc``: every object
        then lives in glibc's heap, whose free pages the gateway's trim returns after a mass
        departure, instead of in CPython's 1 MiB arenas, which uvloop's and asyncio's free
        lists keep (docs/security.md: +2 MiB instead of +12 MiB over the empty worker after
        1000 devices left, for about 5-10 % more CPU per call)."""
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self._reserved = reserve_port(host, port)
        self.host = host
        self.port: int = self._reserved.getsockname()[1]
        ctx = multiprocessing.get_context("spawn")
        self._listening = [ctx.Event() for _ in range(workers)]
        self.processes = [
            ctx.Process(
                target=_worker_main,
                args=(serve, i, host, self.port, dict(gateway_options or {}), use_uvloop, self._listening[i]),
                name=f"mcpgen-gateway-{i}",
                daemon=True,
            )
            for i in range(workers)
        ]
        with _environment({"PYTHONMALLOC": "malloc"} if compact_memory else {}):
            for p in self.processes:
                p.start()

    def alive(self) -> int:
        return sum(p.is_alive() for p in self.processes)

    def wait_listening(self, timeout: float = 30.0) -> bool:
        """Blocks until every worker listens (the kernel spreads new connections only over
        listening sockets); False when one did not within ``timeout`` seconds or died."""
        deadline = time.monotonic() + timeout
        for event, process in zip(self._listening, self.processes, strict=True):
            while not event.wait(0.1):
                if not process.is_alive() or time.monotonic() > deadline:
                    return False
        return True

    def stop(self, timeout: float = 5.0) -> None:
        for p in self.processes:
            if p.is_alive() and p.pid is not None:
                os.kill(p.pid, signal.SIGTERM)
        for p in self.processes:
            p.join(timeout)
            if p.is_alive():
                p.kill()
                p.join()
        self._reserved.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_workers(
    serve: Serve,
    *,
    workers: int,
    host: str = "127.0.0.1",
    port: int = 0,
    gateway_options: Optional[Mapping[str, Any]] = None,
    use_uvloop: bool = True,
    compact_memory: bool = False,
) -> None:
    """Runs ``workers`` gateway processes until Ctrl-C / SIGTERM (then stops them); the
    arguments are :class:`Workers`'."""
    w = Workers(
        serve,
        workers=workers,
        host=host,
        port=port,
        gateway_options=gateway_options,
        use_uvloop=use_uvloop,
        compact_memory=compact_memory,
    )
    stop = False

    def on_signal(signum: int, frame: Any) -> None:
        nonlocal stop
        stop = True

    old_int = signal.signal(signal.SIGINT, on_signal)
    old_term = signal.signal(signal.SIGTERM, on_signal)
    try:
        while not stop and w.alive():
            for p in w.processes:
                p.join(0.2)
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
        w.stop()


__all__ = ["Workers", "reserve_port", "run_workers"]

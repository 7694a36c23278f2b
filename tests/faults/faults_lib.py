"""Shared by the fault-injection test and its device swarm: the plan, tokens, memory.

Everything here uses the runtime's public API only (``mcpgen.runtime``), so the suite
holds for any gateway implementation behind it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import hashlib
import hmac
import os
import time
from dataclasses import dataclass
from typing import Any, Optional

from mcpgen.runtime import HmacAuth

ECHO_TOOL: dict[str, Any] = {
    "name": "fault.echo",
    "description": "Answers with its tag.",
    "inputSchema": {"type": "object", "properties": {"tag": {"type": "string"}}, "required": ["tag"]},
}

# Device kinds and their share of the swarm. Raw-socket peers (forged, nohello, dribble)
# never become devices.
KINDS: dict[str, float] = {
    "good": 0.40,  # answers every call within 30 ms
    "drop": 0.10,  # drops TCP (no close frame) with every third call in flight, reconnects
    "silent": 0.08,  # answers setup, never a call
    "garbage": 0.08,  # malformed frames (bad JSON, unknown/odd ids, binary) around each reply
    "dup": 0.08,  # every reply sent twice
    "big": 0.06,  # a 1 MiB frame (above max_frame) with every second call, reconnects
    "storm": 0.08,  # reconnects every 0.2-1 s, old connection left open or dropped
    "forged": 0.05,  # upgrades with forged/old/expired/foreign tokens (8 tries each)
    "nohello": 0.04,  # upgraded, never sends its hello
    "dribble": 0.03,  # the upgrade request in 20 pieces over ~1 s
}
RAW_KINDS = frozenset({"forged", "nohello", "dribble"})


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def env_float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


@dataclass(frozen=True)
class Scale:
    """How big a run is (CI defaults; scripts/soak.sh sets the environment)."""

    devices: int = 200
    duration: float = 12.0  # seconds of fault cycles in all
    cycles: int = 2
    call_timeout: float = 3.0
    hello_timeout: float = 2.0
    call_interval: float = 0.4  # seconds between one device's calls
    swarms: int = 1  # device processes
    slack: float = 3.0  # a call may end this much after its timeout (loaded 2-core CI)
    rss_mib: float = 8.0  # RSS after the last cycle may exceed the empty process's by this

    @classmethod
    def from_env(cls) -> Scale:
        return cls(
            devices=env_int("MCPGEN_FAULTS_DEVICES", cls.devices),
            duration=env_float("MCPGEN_FAULTS_DURATION", cls.duration),
            cycles=env_int("MCPGEN_FAULTS_CYCLES", cls.cycles),
            call_timeout=env_float("MCPGEN_FAULTS_CALL_TIMEOUT", cls.call_timeout),
            hello_timeout=env_float("MCPGEN_FAULTS_HELLO_TIMEOUT", cls.hello_timeout),
            call_interval=env_float("MCPGEN_FAULTS_CALL_INTERVAL", cls.call_interval),
            swarms=env_int("MCPGEN_FAULTS_SWARMS", cls.swarms),
            slack=env_float("MCPGEN_FAULTS_SLACK", cls.slack),
            rss_mib=env_float("MCPGEN_FAULTS_RSS_MIB", cls.rss_mib),
        )


def plan_peers(devices: int, cycle: int, kinds: Optional[dict[str, float]] = None) -> list[dict[str, str]]:
    """``devices`` peers split by kind share (each kind at least one); ids name their kind."""
    kinds = kinds or KINDS
    peers: list[dict[str, str]] = []
    for kind, share in kinds.items():
        for i in range(max(1, round(devices * share))):
            peers.append({"id": f"{kind}-{cycle}-{i}", "kind": kind})
    return peers


def kind_of(device_id: str) -> str:
    return device_id.split("-", 1)[0]


def hmac_auth(secret: str) -> HmacAuth:
    return HmacAuth(secret)


def forged_tokens(auth: HmacAuth, target: str) -> list[Optional[str]]:
    """Tokens an attacker could present for ``target`` without its secret-derived token."""
    now = int(time.time())
    sig_of = lambda token: token.rsplit(".", 1)[-1]  # noqa: E731
    dotted = sig_of(auth.token_for(f"{target}.9999999999"))  # issue 18: a device named X.<expiry>
    expired_sig = sig_of(auth.token_for(target, now - 60))
    old_format = hmac.new(auth.secret, target.encode(), hashlib.sha256).hexdigest()
    return [
        None,
        "nope",
        auth.token_for(f"{target}-other"),
        f"{target}.9999999999.{dotted}",
        f"mcpgen1.e.9999999999.{dotted}",
        f"mcpgen1.p.{expired_sig}",
        old_format,
        HmacAuth("another secret").token_for(target),
    ]


# -- memory --------------------------------------------------------------------------------

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def settled_rss() -> int:
    """RSS after a full collection: what the process holds once its garbage is gone.

    No ``malloc_trim`` here: handing freed heap back to the OS is the gateway's job after
    devices leave (runtime/links/memtrim.py); a test that trimmed would hide its absence.
    """
    gc.collect()
    time.sleep(0.2)
    return rss_bytes()


def trimmed_rss() -> int:
    """RSS after a collection and glibc's ``malloc_trim``: the floor, for the figures."""
    gc.collect()
    trim = getattr(_libc, "malloc_trim", None)
    if trim is not None:
        trim(0)
    return rss_bytes()

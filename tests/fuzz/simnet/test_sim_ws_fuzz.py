"""Structured fuzzing of the simulator's WebSocket client (hypothesis, ASan + UBSan build).

Hypothesis builds frame sequences from the parts a hostile server controls -- FIN, the
reserved bits, opcodes (valid and not), the mask bit, the length encoding (7/16/64 bits,
minimal or not) and the declared length (true, a lie, or an edge value up to 2^64-1),
payloads around the 4 KB buffer edge, fragments -- optionally truncated. Each sequence is
sent to a fresh simulator by ``hostile_ws.run_script``; ``hostile_ws.check`` holds it to
its contract: no sanitizer report, no hang, a clean exit, and exactly the close code the
RFC 6455 model predicts.

In the suite: 300 examples from a fixed seed (~10 ms each). ``scripts/fuzz.sh
sim`` runs many more with fresh randomness and saves the smallest failing input in
``tests/fuzz/regressions/sim_ws/``, which ``test_sim_ws_hostile.py`` replays from then on.
Environment: MCPGEN_FUZZ_EXAMPLES (default 300), MCPGEN_FUZZ_RANDOM=1 (fresh seeds),
MCPGEN_FUZZ_SAVE_DIR (where failing inputs go; default: the test's tmp dir).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Optional

import pytest
from hostile_ws import check, frame, run_script
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("MCPGEN_FUZZ_EXAMPLES", "300"))
FRESH = os.environ.get("MCPGEN_FUZZ_RANDOM") == "1"
EDGE_LENGTHS = [0, 1, 2, 125, 126, 127, 4094, 4095, 4096, 65535, 65536, 2**31, 2**32 - 1, 2**32]
EDGE_LENGTHS += [2**63 - 1, 2**63, 2**64 - 100, 2**64 - 1]
OPCODES = st.one_of(st.sampled_from([0x0, 0x1, 0x2, 0x8, 0x9, 0xA]), st.integers(0, 15))
PAYLOADS = st.one_of(
    st.binary(max_size=200),
    st.sampled_from(
        [
            b"{}",
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            (1000).to_bytes(2, "big"),
            (1005).to_bytes(2, "big"),
            (4999).to_bytes(2, "big"),
            b"\x03",
        ]
    ),
    st.integers(3990, 4200).map(lambda n: b" " * n),  # around the 4 KB request buffer
)


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    payload = draw(PAYLOADS)
    how = draw(st.sampled_from(["truth", "truth", "edge", "off by a little"]))
    length: Optional[int] = None  # the truth
    if how == "edge":
        length = draw(st.sampled_from(EDGE_LENGTHS))
    elif how == "off by a little":
        length = max(0, len(payload) + draw(st.integers(-3, 3)))
    n = len(payload) if length is None else length
    widths = [w for w in (7, 16, 64) if (w == 7 and n < 126) or (w == 16 and n <= 0xFFFF) or w == 64]
    return frame(
        draw(OPCODES),
        payload,
        fin=draw(st.booleans()),
        rsv=draw(st.sampled_from([0, 0, 0, 0, 1, 2, 4, 7])),
        masked=draw(st.booleans()) and draw(st.booleans()),  # rarer: it ends the run at once
        length=length,
        width=draw(st.sampled_from(widths)),
    )


@st.composite
def scripts(draw: st.DrawFn) -> bytes:
    data = b"".join(draw(st.lists(frames(), min_size=1, max_size=6)))
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]  # the server stops mid-frame
    return data


_saved: dict[str, Path] = {}


def save_failure(script: bytes, save_dir: Path) -> Path:
    """Keep the smallest failing input of this run (hypothesis shrinks towards it)."""
    prev = _saved.get("smallest")
    if prev is not None and prev.exists() and prev.stat().st_size <= len(script):
        return prev
    save_dir.mkdir(parents=True, exist_ok=True)
    path = save_dir / f"fuzz-{hashlib.sha256(script).hexdigest()[:16]}.bin"
    path.write_bytes(script)
    if prev is not None and prev != path:
        prev.unlink(missing_ok=True)
    _saved["smallest"] = path
    return path


@pytest.fixture(scope="module")
def save_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("MCPGEN_FUZZ_SAVE_DIR")
    return Path(configured) if configured else tmp_path_factory.mktemp("sim_ws_failures")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not FRESH,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
@given(script=scripts())
def test_simulator_survives_any_frame_sequence(asan_sim: Path, save_dir: Path, script: bytes) -> None:
    outcome = run_script(asan_sim, script)
    try:
        check(outcome, script)
    except AssertionError as exc:
        path = save_failure(script, save_dir)
        hint = f"(input saved to {path}; add it to tests/fuzz/regressions/sim_ws/)"
        raise AssertionError(f"{exc}\n{hint}") from None

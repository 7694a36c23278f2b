"""The host simulator's WebSocket client against a hostile server (issue 18), under ASan + UBSan.

Each case sends a frame sequence after the hellos and checks the contract in
``hostile_ws.check``: no sanitizer report, no hang, exit status 0 (the session got as far
as the server hello, then the client gave up cleanly), and exactly the close code the
framing rules call for (1002 for every protocol error).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_ws import PROBE, check, expected_close, frame, framing_error, masked_frame, run_script

REGRESSIONS = Path(__file__).resolve().parents[1] / "regressions" / "sim_ws"
MAX64 = 2**64 - 1

CASES = {
    # A masked server frame: see hostile_ws.masked_frame (only no crash / hang / bad exit).
    "masked_server_frame": frame(0x1, b"{}", masked=True),
    # Issue 18: the continuation's 64-bit length made "total + length <= cap - 1" wrap,
    # and the client copied the following bytes past its 4 KB global buffer.
    "fragment_then_length_2^64-1": frame(0x1, b"A" * 100, fin=False)
    + frame(0x0, b"B" * 8192, length=MAX64, width=64),
    "fragment_then_length_2^64-100": frame(0x1, b"A" * 200, fin=False)
    + frame(0x0, b"B" * 8192, length=MAX64 - 99, width=64),
    # the largest legal length: must be skipped (read to the end of the stream), not copied
    "fragment_then_length_2^63-1": frame(0x1, b"A" * 100, fin=False)
    + frame(0x0, b"B" * 8192, length=2**63 - 1, width=64),
    "message_exactly_fills_the_buffer": frame(0x1, b" " * 4000, fin=False) + frame(0x0, b" " * 95),
    "message_one_byte_too_long": frame(0x1, b" " * 4000, fin=False) + frame(0x0, b" " * 96),
    # Issue 18 item 6: a 1-byte close payload cannot hold a code -> 1002, not 1000.
    "close_with_1_byte_payload": frame(0x8, b"\x03"),
    "close_with_reserved_code_1005": frame(0x8, (1005).to_bytes(2, "big")),
    "close_with_code_999": frame(0x8, (999).to_bytes(2, "big")),
    "close_with_code_4000_is_echoed": frame(0x8, (4000).to_bytes(2, "big") + b"bye"),
    "close_without_payload": frame(0x8),
    "reserved_bits": frame(0x1, b"{}", rsv=4),
    "unknown_data_opcode": frame(0x3, b"x"),
    "unknown_control_opcode": frame(0xB, b"x"),
    "control_frame_too_long": frame(0x9, b"p" * 126),
    "fragmented_ping": frame(0x9, b"p", fin=False),
    "continuation_without_message": frame(0x0, b"x"),
    "new_message_inside_fragmented_one": frame(0x1, b"a", fin=False) + frame(0x1, b"b"),
    "ping_then_truncated_header": frame(0x9, b"hi") + b"\x81",
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_frame_sequences(asan_sim: Path, name: str) -> None:
    script = CASES[name]
    check(run_script(asan_sim, script), script)


def test_the_model_agrees_with_the_rfc_on_the_issue_cases() -> None:
    # The oracle itself must not drift: a few fixed answers.
    assert expected_close(CASES["fragment_then_length_2^64-1"]) == 1002
    assert expected_close(CASES["fragment_then_length_2^63-1"]) is None
    assert expected_close(CASES["close_with_1_byte_payload"]) == 1002
    assert expected_close(CASES["close_with_code_4000_is_echoed"]) == 4000
    assert expected_close(CASES["close_without_payload"]) == 1000


def test_pong_answers_a_ping(asan_sim: Path) -> None:
    outcome = run_script(asan_sim, frame(0x9, b"are you there"))
    assert (0xA, b"are you there") in outcome.frames, outcome.describe()


def regression_inputs() -> list[Path]:
    return sorted(REGRESSIONS.glob("*.bin"))


@pytest.mark.parametrize("path", regression_inputs(), ids=lambda p: p.name)
def test_saved_regression_inputs(asan_sim: Path, path: Path) -> None:
    """Inputs that once broke the client (saved by the fuzzer or by hand) stay fixed."""
    script = path.read_bytes()
    check(run_script(asan_sim, script), script)


def test_the_probe_after_a_malformed_frame_would_be_seen(asan_sim: Path) -> None:
    """PROBE is answered when nothing before it is malformed, so its absence after a bad
    frame shows that the client failed the connection instead of reading on."""
    outcome = run_script(asan_sim, PROBE)
    assert any(op == 0x1 and b"424242" in p for op, p in outcome.frames), outcome.describe()
    assert framing_error(frame(0x3, b"x")) and not framing_error(frame(0x8, b"\x03"))
    # libwebsockets 4.1 (Debian bookworm) does not fail the connection on a masked server
    # frame (RFC 6455 5.1; newer releases do): the contract there is only no crash, no hang.
    assert masked_frame(frame(0x1, b"{}", masked=True)) and not masked_frame(frame(0x1, b"{}"))

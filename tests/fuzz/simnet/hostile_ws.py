"""A hostile WebSocket "gateway" for the host simulator, and a model of what the simulator
must do with any byte stream it is sent.

Malformed frames (as opposed to a close frame with a bad payload) may be answered with
a 1002 close frame or by dropping the connection; either way the client must read
nothing after them, which ``PROBE`` (a request appended after the bad frame) checks.

The server is deliberately hand-written (plain sockets, a few lines of RFC 6455): a real
WebSocket library refuses to *send* the malformed frames this harness exists to send.

One run: listen on 127.0.0.1, start the simulator with ``--ws ... --max-reconnects 0``,
answer its opening handshake, read its hello, send a server hello, then send the script
(arbitrary bytes), half-close, and read everything the simulator sends until it closes.
:func:`expected_close` replays the simulator's framing rules on the script and says which
close code it must answer with (or ``None``: it must see the end of the stream first).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SERVER_HELLO = json.dumps(
    {"type": "hello", "transport": "websocket", "session_id": "hostile-1", "version": 3}
).encode()
SANITIZER_MARKERS = ("AddressSanitizer", "UndefinedBehaviorSanitizer", "runtime error:", "LeakSanitizer")
SIM_ENV = {"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0", "UBSAN_OPTIONS": "print_stacktrace=1"}


def frame(
    opcode: int,
    payload: bytes = b"",
    *,
    fin: bool = True,
    rsv: int = 0,
    masked: bool = False,
    length: Optional[int] = None,
    width: Optional[int] = None,
) -> bytes:
    """One server frame. ``length`` overrides the declared payload length (a lie);
    ``width`` forces the length encoding (7, 16 or 64 bits)."""
    n = len(payload) if length is None else length
    if width is None:
        width = 7 if n < 126 else 16 if n <= 0xFFFF else 64
    head = bytes([(0x80 if fin else 0) | (rsv & 7) << 4 | (opcode & 0xF)])
    mask_bit = 0x80 if masked else 0
    if width == 7:
        head += bytes([mask_bit | (n & 0x7F)])
    elif width == 16:
        head += bytes([mask_bit | 126]) + (n & 0xFFFF).to_bytes(2, "big")
    else:
        head += bytes([mask_bit | 127]) + (n & (2**64 - 1)).to_bytes(8, "big")
    if masked:
        key = b"\x01\x02\x03\x04"
        return head + key + bytes(b ^ key[i & 3] for i, b in enumerate(payload))
    return head + payload


def valid_close_code(code: int) -> bool:
    return 3000 <= code <= 4999 or 1000 <= code <= 1003 or 1007 <= code <= 1014


def expected_close(data: bytes) -> Optional[int]:
    """The close code the simulator must send after reading ``data`` (then EOF), or None
    when the stream ends before any frame makes it close (it then closes silently)."""
    return replay(data)[0]


def masked_frame(data: bytes) -> bool:
    """True when a masked server frame comes before anything else ends the stream.

    RFC 6455 5.1 says the client must then fail the connection, but libwebsockets 4.1
    (Debian bookworm) reads the frame on (newer releases refuse it): what follows is
    not predicted, only the sanitizer / hang / exit contract is checked."""
    return replay(data)[1] == "masked"


def framing_error(data: bytes) -> bool:
    """True when what ends the stream is a malformed frame (not a close frame's payload).

    RFC 6455 7.1.7 lets a client fail the connection there with or without a 1002 close
    frame: libwebsockets drops it without one. What must hold either way is that nothing
    after the bad frame is read (see PROBE)."""
    return replay(data)[1] == "framing"


# Appended after a malformed frame: a client that skipped the bad frame instead of failing
# the connection would answer this request.
PROBE = frame(0x1, b'{"jsonrpc":"2.0","id":424242,"method":"ping"}')


def replay(data: bytes) -> tuple[Optional[int], str]:
    """(close code as for expected_close, what ends the stream: "close" (a close frame or
    the end of the data), "framing" (a malformed frame) or "masked" (see masked_frame))."""
    code = _replay(data)
    return code if isinstance(code, tuple) else (code, "close")


def _replay(data: bytes) -> Optional[int] | tuple[Optional[int], str]:
    framing: tuple[Optional[int], str] = (1002, "framing")
    pos = 0
    in_message = False
    while True:
        if len(data) - pos < 2:
            return None
        b0, b1 = data[pos], data[pos + 1]
        pos += 2
        fin, opcode, masked, plen = b0 & 0x80, b0 & 0x0F, b1 & 0x80, b1 & 0x7F
        if masked:
            return None, "masked"
        if b0 & 0x70:
            return framing
        if plen >= 126:
            if opcode >= 0x8:  # a control frame's length fits 7 bits: a longer encoding is malformed
                return framing
            width = 2 if plen == 126 else 8
            if len(data) - pos < width:
                return None
            plen = int.from_bytes(data[pos : pos + width], "big")
            pos += width
            if width == 8 and plen >> 63:
                return framing
        if opcode >= 0x8:
            if plen > 125 or not fin:
                return framing
            if len(data) - pos < plen:
                return None
            payload = data[pos : pos + plen]
            pos += plen
            if opcode == 0x8:
                if plen == 1:
                    return 1002
                if plen == 0:
                    return 1000
                code = int.from_bytes(payload[:2], "big")
                return code if valid_close_code(code) else 1002
            if opcode not in (0x9, 0xA):
                return framing
            continue
        if opcode in (0x1, 0x2):
            if in_message:
                return framing
            in_message = True
        elif opcode != 0x0 or not in_message:
            return framing
        if len(data) - pos < plen:
            return None
        pos += plen
        if fin:
            in_message = False


@dataclass
class Outcome:
    """What one run against the simulator produced."""

    returncode: Optional[int]  # None: it did not exit in time (a hang)
    stderr: str
    frames: list[tuple[int, bytes]] = field(default_factory=list)  # (opcode, payload) it sent
    handshake_ok: bool = False

    @property
    def sanitizer_report(self) -> bool:
        return any(m in self.stderr for m in SANITIZER_MARKERS)

    @property
    def close_codes(self) -> list[Optional[int]]:
        return [int.from_bytes(p[:2], "big") if len(p) >= 2 else None for op, p in self.frames if op == 0x8]

    def describe(self) -> str:
        return f"exit {self.returncode}, close codes {self.close_codes}, stderr tail:\n{self.stderr[-3000:]}"


class _Reader:
    """Buffered reads from a socket with one overall deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock = sock
        self.deadline = deadline
        self.buf = b""
        self.eof = False

    def _fill(self) -> bool:
        left = self.deadline - time.monotonic()
        if left <= 0 or self.eof:
            return False
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(65536)
        except OSError:  # timeouts and resets are OSErrors too
            return False
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def exact(self, n: int) -> Optional[bytes]:
        while len(self.buf) < n:
            if not self._fill():
                return None
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def until(self, marker: bytes, limit: int = 65536) -> Optional[bytes]:
        while marker not in self.buf:
            if len(self.buf) > limit or not self._fill():
                return None
        i = self.buf.index(marker) + len(marker)
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def client_frame(self) -> Optional[tuple[int, bytes]]:
        """One (masked) client frame, unmasked."""
        head = self.exact(2)
        if head is None:
            return None
        n = head[1] & 0x7F
        if n >= 126:
            ext = self.exact(2 if n == 126 else 8)
            if ext is None:
                return None
            n = int.from_bytes(ext, "big")
        key = self.exact(4) if head[1] & 0x80 else b"\0\0\0\0"
        body = self.exact(n) if key is not None else None
        if body is None or key is None:
            return None
        return head[0] & 0x0F, bytes(b ^ key[i & 3] for i, b in enumerate(body))


def run_script(exe: Path, script: bytes, *, send_hello: bool = True, timeout: float = 15.0) -> Outcome:
    """Serve one connection to a fresh simulator, sending ``script`` after the hellos."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    proc = subprocess.Popen(
        [
            str(exe),
            "--ws",
            f"ws://127.0.0.1:{port}/xiaozhi/v1/",
            "--max-reconnects",
            "0",
            "--hello-timeout-ms",
            "5000",
            "--device-id",
            "fuzz-dev",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **SIM_ENV},
    )
    deadline = time.monotonic() + timeout
    outcome = Outcome(returncode=None, stderr="")
    sender: Optional[threading.Thread] = None
    try:
        listener.settimeout(timeout)
        conn, _ = listener.accept()
        with conn:
            reader = _Reader(conn, deadline)
            request = reader.until(b"\r\n\r\n")
            key = b""
            for line in (request or b"").split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"sec-websocket-key":
                    key = value.strip()
            accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
            conn.sendall(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
            )
            hello = reader.client_frame()  # the device hello
            outcome.handshake_ok = hello is not None and hello[0] == 0x1
            data = (frame(0x1, SERVER_HELLO) if send_hello else b"") + script
            if framing_error(script):
                data += PROBE

            def send_all() -> None:
                # In its own thread so a simulator answering while we send cannot deadlock us.
                try:
                    conn.sendall(data)
                    conn.shutdown(socket.SHUT_WR)
                except OSError:
                    pass  # it closed first (e.g. after a protocol error): expected

            sender = threading.Thread(target=send_all, daemon=True)
            sender.start()
            while (got := reader.client_frame()) is not None:
                outcome.frames.append(got)
    except OSError:  # the simulator went away or timed out
        pass
    finally:
        listener.close()
        try:
            _, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            outcome.returncode = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        outcome.stderr = err.decode("utf-8", "replace")
        if sender is not None:
            sender.join(timeout=5)
    return outcome


def check(outcome: Outcome, script: bytes) -> None:
    """The simulator's contract with a hostile server, for any script."""
    assert not outcome.sanitizer_report, outcome.describe()
    assert outcome.returncode is not None, "the simulator hung: " + outcome.describe()
    assert outcome.handshake_ok, outcome.describe()
    assert outcome.returncode == 0, outcome.describe()  # it saw the server hello, then gave up cleanly
    want, kind = replay(script)
    got = outcome.close_codes
    if kind == "masked":
        return  # libwebsockets 4.1 reads masked server frames on (see masked_frame)
    if kind == "framing":  # fail the connection, with a 1002 close frame or without one (RFC 6455 7.1.7)
        assert got in ([], [1002]), "expected close 1002 or none; " + outcome.describe()
        answered = [p for op, p in outcome.frames if op == 0x1 and b"424242" in p]
        assert not answered, "the client read on after a malformed frame: " + outcome.describe()
    else:
        assert got == ([] if want is None else [want]), f"expected close {want}; " + outcome.describe()

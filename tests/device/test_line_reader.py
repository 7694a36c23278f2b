"""The core's line reader (mcpgen/line_reader.h), the framing every stream port shares.

line_reader_driver.cpp is compiled with g++ against line_reader.cpp and fed bytes on stdin:
byte by byte (push, as the UART loops read) or in chunks of a given size (feed, as read(2)
and the ESP-IDF UART driver deliver), so a line split across reads is covered by every
chunk size from 1 up.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from mcpgen.codegen.targets.host import CORE_DIR, CXXFLAGS

DRIVER = Path(__file__).resolve().parent / "line_reader_driver.cpp"


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("line_reader") / "line_reader_driver"
    subprocess.run(
        [
            "g++",
            *CXXFLAGS,
            f"-I{CORE_DIR}",
            str(DRIVER),
            str(CORE_DIR / "mcpgen" / "line_reader.cpp"),
            "-o",
            str(exe),
        ],
        check=True,
    )
    return exe


Event = tuple[str, bytes]


def events(driver: Path, data: bytes, cap: int, chunk: int = 0) -> list[Event]:
    proc = subprocess.run([str(driver), str(cap), str(chunk)], input=data, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert lines[-1] == "buffer-intact", "the reader wrote past its buffer"
    out = []
    for line in lines[:-1]:
        kind, size, payload = (line.split(" ") + [""])[:3]
        body = bytes.fromhex(payload)
        assert len(body) == int(size)
        out.append((kind, body))
    return out


def test_lines_are_split_on_newline(driver: Path) -> None:
    data = b'{"a":1}\n{"b":2}\n'
    assert events(driver, data, 64) == [("line", b'{"a":1}'), ("line", b'{"b":2}')]


def test_crlf_loses_its_cr_and_a_lone_cr_stays(driver: Path) -> None:
    data = b'{"a":1}\r\n{"b":"x\ry"}\n'
    assert events(driver, data, 64) == [("line", b'{"a":1}'), ("line", b'{"b":"x\ry"}')]


def test_blank_lines_are_skipped(driver: Path) -> None:
    data = b'\n\r\n  \t \n{"a":1}\n \r\n'
    assert events(driver, data, 64) == [("line", b'{"a":1}')]


def test_a_last_line_without_newline_is_delivered_at_the_end(driver: Path) -> None:
    assert events(driver, b'{"a":1}\n{"b":2}', 64) == [("line", b'{"a":1}'), ("line", b'{"b":2}')]


def test_overlong_line_is_reported_with_its_first_bytes_and_skipped(driver: Path) -> None:
    cap = 16  # 15 bytes of text fit, one byte stays for the core's NUL
    fits = b"x" * 15
    too_long = b'{"id":7,"method":"tools/list"}'
    data = fits + b"\n" + too_long + b"\n" + b'{"c":3}\n'
    assert events(driver, data, cap) == [
        ("line", fits),
        ("oversized", too_long[:15]),
        ("line", b'{"c":3}'),
    ]


def test_a_line_one_byte_too_long_is_oversized(driver: Path) -> None:
    assert events(driver, b"y" * 16 + b"\n", 16) == [("oversized", b"y" * 15)]
    # with CRLF the CR counts: the line as read did not fit
    assert events(driver, b"y" * 15 + b"\r\n", 16) == [("oversized", b"y" * 15)]


def test_overlong_last_line_without_newline(driver: Path) -> None:
    assert events(driver, b'{"a":1}\n' + b"z" * 40, 16) == [("line", b'{"a":1}'), ("oversized", b"z" * 15)]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 16, 17, 1000])
def test_feed_in_chunks_gives_what_push_gives(driver: Path, chunk: int) -> None:
    """A line split across reads (every split of the stream below) is framed the same."""
    data = b'{"jsonrpc":"2.0","id":1}\r\n\n' + b"q" * 50 + b'\n{"id":2}\n  \n{"id":3}\r\n{"tail":true}'
    expected = events(driver, data, 32)
    assert expected == [
        ("line", b'{"jsonrpc":"2.0","id":1}'),
        ("oversized", b"q" * 31),
        ("line", b'{"id":2}'),
        ("line", b'{"id":3}'),
        ("line", b'{"tail":true}'),
    ]
    assert events(driver, data, 32, chunk) == expected


def test_random_streams_chunked_and_bytewise_agree(driver: Path) -> None:
    rng = random.Random(20261126)
    alphabet = b'ab{}":, \t\r\n'
    for _ in range(40):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 300)))
        cap = rng.randrange(2, 40)
        reference = events(driver, data, cap)
        # the reference itself: every non-blank line, CR dropped, longer ones cut to cap-1
        want: list[Event] = []
        parts = data.split(b"\n")
        for i, raw in enumerate(parts):
            if i == len(parts) - 1 and raw == b"":
                break
            if len(raw) > cap - 1:
                want.append(("oversized", raw[: cap - 1]))
                continue
            text = raw[:-1] if raw.endswith(b"\r") else raw
            if text.strip(b" \t"):
                want.append(("line", text))
        assert reference == want, (data, cap)
        assert events(driver, data, cap, rng.randrange(1, 50)) == reference, (data, cap)

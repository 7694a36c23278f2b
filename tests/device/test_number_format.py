"""The core's number text (mcpgen/text_format.h) against Python's float()/repr() and glibc.

number_format_driver.cpp is compiled with g++ against json_writer.cpp, which implements
it, with the big-integer capacity checks on. Every double it formats must be exactly
Python's repr() of that double and must parse back (Python float() and glibc strtod) to
the same bits; every decimal text it parses must give the bits of Python's float() and
glibc's strtod. Inputs: edge cases, every power of two and ten with neighbours, random
64-bit patterns, random short decimals, and the exact midpoints between adjacent doubles
(the inputs a parser that is not exact gets wrong), on, just above and just below them.
"""

from __future__ import annotations

import json
import math
import random
import re
import struct
import subprocess
from collections.abc import Iterable
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import pytest

from mcpgen.codegen.targets.host import CORE_DIR, CXXFLAGS

DRIVER = Path(__file__).resolve().parent / "number_format_driver.cpp"
SEED = 20240611
JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def bits(v: float) -> str:
    return struct.pack(">d", v).hex()


def from_bits(b: int) -> float:
    return struct.unpack(">d", struct.pack(">Q", b))[0]


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("number_format") / "number_format_driver"
    subprocess.run(
        [
            "g++",
            *CXXFLAGS,
            "-DMCPGEN_TEXT_FORMAT_CHECKED",
            f"-I{CORE_DIR}",
            str(DRIVER),
            str(CORE_DIR / "mcpgen" / "json_writer.cpp"),
            str(CORE_DIR / "mcpgen" / "json_reader.cpp"),  # the UTF-8 check the writer shares
            "-o",
            str(exe),
        ],
        check=True,
    )
    return exe


def run(driver: Path, commands: list[str]) -> list[str]:
    proc = subprocess.run(
        [str(driver)], input="\n".join(commands) + "\n", capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"driver exit {proc.returncode}: {proc.stderr[-2000:]}"
    out = proc.stdout.splitlines()
    assert len(out) == len(commands)
    return out


# ---------------------------------------------------------------- inputs


def edge_doubles() -> list[float]:
    vals = [
        0.0,
        5e-324,
        1e-323,
        2.2250738585072009e-308,
        2.2250738585072014e-308,
        2.225073858507202e-308,
        1.7976931348623157e308,
        1.7976931348623155e308,
        0.1,
        0.2,
        0.3,
        0.1 + 0.2,
        1 / 3,
        2 / 3,
        1.0,
        3.0,
        0.5,
        1.5,
        2.5,
        123.456,
        1e-4,
        9.999999999999999e-5,
        1e-5,
        1e15,
        1e16,
        9999999999999998.0,
        1e17,
        1e21,
        1e22,
        1e23,
        5e-310,
        4.9406564584124654e-324,
        2.0**53,
        2.0**53 - 1,
        2.0**53 + 2,
        2.0**63,
        2.0**64,
        9007199254740993.0,
        123456789012345678.0,
        0.30000000000000004,
        1e300,
        1e-300,
        1.5e-7,
        1e-6,
        100.0,
        12345678.9,
        math.pi,
        math.e,
        299792458.0,
        6.02214076e23,
        1.602176634e-19,
        2.5e-5,
        0.000123,
        1234567890123456.7,
        4.35,
        8.41,
        5e-324 * 3,
        7e-322,
    ]
    return vals


def power_doubles() -> Iterable[float]:
    for k in range(-1074, 1024):
        v = 2.0**k
        yield v
        yield math.nextafter(v, 0.0)
        yield math.nextafter(v, math.inf)
    for k in range(-323, 309):
        v = float(f"1e{k}")
        yield v
        yield math.nextafter(v, 0.0)
        yield math.nextafter(v, math.inf)


def random_doubles(rng: random.Random, n: int) -> Iterable[float]:
    made = 0
    while made < n:
        v = from_bits(rng.getrandbits(64))
        if math.isfinite(v):
            made += 1
            yield v
    for _ in range(n // 4):  # short decimals: the common case of a device
        yield float(f"{rng.randint(0, 10 ** rng.randint(1, 8))}e{rng.randint(-12, 12)}")
    for _ in range(n // 8):  # subnormals
        yield from_bits(rng.getrandbits(52))


def exact_decimal(x: Fraction) -> str:
    """Exact decimal text of a dyadic fraction (every binary64 midpoint has <= 768 digits)."""
    with localcontext() as ctx:
        ctx.prec = 2000
        d = Decimal(x.numerator) / Decimal(x.denominator)
        assert Decimal(x.numerator) == d * Decimal(x.denominator)
        return format(d.normalize(), "e").replace("E", "e")


def midpoint_texts(rng: random.Random, n: int) -> Iterable[str]:
    """Exact midpoints between neighbouring doubles, and texts just above and below them."""
    picks = [
        5e-324,
        2.2250738585072009e-308,
        2.2250738585072014e-308,
        1.7976931348623157e308,
        1.0,
        0.1,
        2.0**53,
        1e23,
        9007199254740992.0,
        1e-320,
    ]
    picks += [abs(from_bits(rng.getrandbits(64))) for _ in range(n)]
    picks += [from_bits(rng.getrandbits(52)) for _ in range(n // 4)]
    picks += [float(f"{rng.randint(1, 999)}e{rng.randint(-30, 30)}") for _ in range(n // 4)]
    for v in picks:
        if not math.isfinite(v) or v == 0:
            continue
        up = math.nextafter(v, math.inf)
        hi = Fraction(up) if math.isfinite(up) else Fraction(2) ** 1024
        mid = (Fraction(v) + hi) / 2
        text = exact_decimal(mid)
        mant, exp = text.split("e")
        yield text  # a tie: to even
        yield f"{mant}{'' if '.' in mant else '.'}{'0' * rng.randint(0, 60)}1e{exp}"  # just above
        digits = mant.replace(".", "")
        lower = exact_decimal(mid - Fraction(10) ** (int(exp) - (len(digits) - 1)) / 10**30)
        yield lower  # just below, 30 more digits
        yield f"{mant[:19]}e{exp}"  # truncated: below (or on) the midpoint
        yield f"{mant[:19]}{'9' * rng.randint(1, 40)}e{exp}"


def tricky_texts(rng: random.Random) -> list[str]:
    texts = [
        "0",
        "-0",
        "0.0",
        "-0.0",
        "0e0",
        "0e-99999",
        "-0E+99999",
        "1",
        "-1",
        "0.1",
        "1e23",
        "8.41",
        "4.35",
        "9007199254740993",
        "9007199254740993.0000000001",
        "9007199254740992.9999999999",
        "18446744073709551615",
        "18446744073709551616",
        "123456789012345678901234567890",
        "5e-324",
        "4.9406564584124654e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "2.4703282292062327208828439643411068618e-324",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "1e308",
        "1e309",
        "1e-324",
        "1e-325",
        "1e400",
        "-1e400",
        "1e-400",
        "1e99999999999999999999",
        "1e-99999999999999999999",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "2.225073858507201136057409796709131975934e-308",
        "0.000001",
        "1E5",
        "1e+5",
        "1e-5",
        "123.456e-7",
        "0.30000000000000004",
        "3.141592653589793",
        "1" + "0" * 400,
        "1" + "0" * 308,
        "0." + "0" * 400 + "1",
        "0." + "0" * 320 + "5",
        "0." + "0" * 2000 + "7",
        "1" * 900 + "e-800",
        "9" * 1000 + "e-1000",
        "1" + "0" * 1500 + "e-1500",
        "0." + "1" * 850,
        "1." + "0" * 900 + "1",
        "0.1" + "0" * 900,
        "7" * 19,
        "7" * 20,
        "1" * 22 + "e-30",
        "12345678901234567e250",
        "4503599627370496.5",
        "4503599627370497.5",
        "1e22",
        "1e-22",
        "123456789e22",
        "9007199254740991e22",
        "9007199254740993e-22",
    ]
    for _ in range(4000):  # random digit strings and exponents across the whole range
        nd = rng.randint(1, 40)
        digits = str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(nd - 1))
        point = rng.randint(0, nd)
        mant = digits if point == nd else digits[:point] + "." + digits[point:] if point else "0." + digits
        texts.append(f"{rng.choice(['', '-'])}{mant}e{rng.randint(-345, 330)}")
    for _ in range(200):  # long inputs past the 800-digit cut
        count = rng.randint(780, 1100)
        digits = str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(count))
        texts.append(f"0.{digits}e{rng.randint(-330, 300)}")
    return texts


INVALID = [
    "",
    "-",
    "+1",
    "01",
    "-01",
    "1.",
    ".5",
    "1e",
    "1e+",
    "1E-",
    "0x10",
    "1.5e3.2",
    " 1",
    "1 ",
    "Infinity",
    "-Infinity",
    "NaN",
    "--1",
    "1e5e5",
    "1.2.3",
    "00",
    "-.5",
    "1,5",
    "1_000",
    "١",
]


# ---------------------------------------------------------------- tests


def check_format(driver: Path, values: list[float]) -> int:
    out = run(driver, [f"f {bits(v)}" for v in values])
    for v, line in zip(values, out, strict=True):
        text, glibc = line.split(" ")
        assert text == repr(v), (v, text)
        assert JSON_NUMBER.fullmatch(text) and ("." in text or "e" in text), text
        assert bits(float(text)) == bits(v) == glibc, (v, text)
    return len(values)


def test_format_edge_cases_and_signs(driver: Path) -> None:
    values = edge_doubles()
    check_format(driver, values + [-v for v in values])


def test_format_every_power_of_two_and_ten_with_neighbours(driver: Path) -> None:
    assert check_format(driver, list(power_doubles())) > 8000


def test_format_random_bit_patterns(driver: Path) -> None:
    values = list(random_doubles(random.Random(SEED), 40000))
    assert check_format(driver, values) >= 55000


def test_format_non_finite_is_null(driver: Path) -> None:
    specials = [
        "7ff0000000000000",
        "fff0000000000000",
        "7ff8000000000000",
        "fff8000000000001",
        "7ff0000000000001",
    ]
    out = run(driver, [f"f {b}" for b in specials])
    assert [line.split(" ")[0] for line in out] == ["null"] * len(specials)


def check_parse(driver: Path, texts: list[str]) -> None:
    out = run(driver, [f"p {t}" for t in texts])
    for text, line in zip(texts, out, strict=True):
        ours, glibc = line.split(" ")
        expected = bits(float(text))
        assert ours == expected, (text[:120], ours, expected)
        assert glibc == expected, (text[:120], "glibc", glibc)


def test_parse_tricky_and_random_texts(driver: Path) -> None:
    check_parse(driver, tricky_texts(random.Random(SEED)))


def test_parse_midpoints_between_doubles(driver: Path) -> None:
    texts = list(midpoint_texts(random.Random(SEED + 1), 1500))
    assert len(texts) > 8000
    assert max(len(t) for t in texts) > 800  # the cut at 800 digits is exercised
    check_parse(driver, texts)


def test_parse_reads_back_every_formatted_text(driver: Path) -> None:
    rng = random.Random(SEED + 2)
    values = [v for v in random_doubles(rng, 5000)] + list(power_doubles())[::7]
    texts = [repr(v) for v in values] + [f"{v:.17e}" for v in values] + [f"{v:.25g}" for v in values]
    texts = [t.replace("+", "") if rng.random() < 0.5 else t for t in texts]
    check_parse(driver, [t for t in texts if JSON_NUMBER.fullmatch(t)])


def test_parse_rejects_what_json_rejects(driver: Path) -> None:
    for text in INVALID:
        assert not JSON_NUMBER.fullmatch(text)
    out = run(driver, [f"p {t}" for t in INVALID])
    assert [line.split(" ")[0] for line in out] == ["invalid"] * len(INVALID)


def test_format_int64(driver: Path) -> None:
    values = [0, 1, -1, 9, 10, -10, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 1234567890123456789]
    out = run(driver, [f"i {v}" for v in values])
    assert out == [f"{v} {len(str(v))}" for v in values]


def test_server_parses_and_formats_numbers_exactly(sim) -> None:
    """Through Server::handle: argument text -> parse_double -> bounds -> handler -> format_double."""
    sim.request("initialize", {"protocolVersion": "2025-06-18"})
    for raw, shown in [
        ("2.5e0", "2.5"),
        ("0.5000000000000001", "0.5000000000000001"),
        ("3e1", "30.0"),
        ("29.999999999999996447286321199499070644378662109375", "29.999999999999996"),
        ("0.1" + "0" * 900 + "1e1", "1.0"),
        ("1.2345678901234567890123", "1.2345678901234567"),
        ("1.23456789012345689", "1.234567890123457"),
    ]:
        assert shown == repr(float(raw))
        sim.send_line(
            '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"self.display.show_text",'
            f'"arguments":{{"text":"n","seconds":{raw}}}}}}}'
        )
        reply = sim.read_json()
        assert reply["result"]["content"][0]["text"] == f'showing "n" for {shown} s', (raw, reply)
    for raw, message in [
        ("30.000000000000004", "must be <= 30.0, got 30.000000000000004"),
        ("0.49999999999999994", "must be >= 0.5, got 0.49999999999999994"),
        ("1e400", "must be a finite number, got 1e400"),
    ]:
        call = {"name": "self.display.show_text", "arguments": {"text": "n", "seconds": 0}}
        line = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": call})
        sim.send_line(line.replace('"seconds": 0', f'"seconds": {raw}'))
        result = sim.read_json()["result"]
        assert result["isError"] is True
        assert result["content"][0]["text"] == f"invalid argument `seconds`: {message}"

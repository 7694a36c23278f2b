"""The gateway's half-open budget is shared fairly between sources (issue 40, item 2).

Connections that never finish their HTTP upgrade count against ``max_handshakes`` (1024)
and ``max_handshakes_per_source`` (256). Four addresses x 256 used to fill the global cap,
after which no new device got in (0 of 5) until they let go. Now the busiest source gives
up its oldest half-open connection to a source that holds fewer. The loopback addresses
127.0.0.2, 127.0.0.3... stand for distinct peers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from test_gateway_transport import upgrade_request

from mcpgen.runtime import Gateway
from mcpgen.runtime.links.websocket import gateway

Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def until(condition: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    """Waits for ``condition`` (a state of the gateway), failing with ``what`` after ``limit`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"still not: {what}")
        await asyncio.sleep(0.01)


async def half_open(gw: Gateway, source: str) -> Conn:
    """A connection from ``source`` that sends nothing (it never starts its upgrade)."""
    return await asyncio.open_connection("127.0.0.1", gw.port, local_addr=(source, 0))


async def upgrade(gw: Gateway, conn: Conn, device_id: str) -> bytes:
    """The gateway's answer to a device's upgrade request on ``conn`` (b"" when the
    connection was closed without one)."""
    reader, writer = conn
    writer.write(upgrade_request(gw.port, {"Device-Id": device_id}))
    try:
        return await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    except (asyncio.IncompleteReadError, ConnectionResetError):
        return b""


def closed_by_gateway(conn: Conn) -> bool:
    return conn[0].at_eof() or conn[1].is_closing()


async def test_a_fresh_address_gets_in_while_1024_hostile_half_open_sockets_are_held() -> None:
    async with Gateway(port=0, handshake_timeout=600, hello_timeout=600) as gw:  # none expires here
        assert (gw.max_handshakes, gw.max_handshakes_per_source) == (1024, 256)
        hostile: list[Conn] = []
        for source in ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"):
            hostile += [await half_open(gw, source) for _ in range(256)]
        await until(lambda: gw._half_open == 1024, "1024 half-open connections counted")
        # five devices connect from a fresh address while the cap is full (it was: 0 of 5 got in)
        fresh = [await half_open(gw, "127.0.0.6") for _ in range(5)]
        await until(lambda: sum(closed_by_gateway(c) for c in hostile) == 5, "5 hostile ones dropped")
        assert not any(closed_by_gateway(c) for c in fresh), "the fresh ones are in"
        assert gw.handshakes_evicted == 5 and gw.handshakes_refused == 0 and gw._half_open == 1024
        # each took the oldest connection of the busiest source at that moment
        held = {k: len(v) for k, v in gw._half_open_by_source.items()}
        assert held == {
            "127.0.0.2": 254,
            "127.0.0.3": 255,
            "127.0.0.4": 255,
            "127.0.0.5": 255,
            "127.0.0.6": 5,
        }
        assert [closed_by_gateway(c) for c in hostile[:2]] == [True, True], "the oldest of 127.0.0.2 went"
        answers = [await upgrade(gw, conn, f"fresh-{i}") for i, conn in enumerate(fresh)]
        assert [a.split(b"\r\n")[0] for a in answers] == [b"HTTP/1.1 101 Switching Protocols"] * 5
        await until(lambda: len(gw._links) == 5, "the five fresh devices upgraded")
        assert gw._half_open == 1019
        for _, writer in hostile + fresh:
            writer.close()
        await until(lambda: gw._half_open == 0, "every half-open connection released")
        assert gw._half_open_by_source == {} and gw._sources_holding == {} and gw._most_held == 0


async def test_at_the_cap_the_busiest_source_gives_up_its_oldest_and_is_itself_refused() -> None:
    async with Gateway(port=0, max_handshakes=6, max_handshakes_per_source=100, handshake_timeout=600) as gw:
        a = [await half_open(gw, "127.0.0.2") for _ in range(4)]
        b = [await half_open(gw, "127.0.0.3") for _ in range(2)]
        await until(lambda: gw._half_open == 6, "the cap reached")
        c = [await half_open(gw, "127.0.0.4")]  # holds none: 127.0.0.2 (4) gives one up
        await until(lambda: closed_by_gateway(a[0]), "127.0.0.2's oldest connection dropped")
        assert not any(closed_by_gateway(x) for x in a[1:] + b + c)
        c.append(await half_open(gw, "127.0.0.4"))  # holds 1 of (3, 2, 1): 127.0.0.2 again
        await until(lambda: closed_by_gateway(a[1]), "127.0.0.2's next oldest dropped")
        assert {k: len(v) for k, v in gw._half_open_by_source.items()} == {
            "127.0.0.2": 2,
            "127.0.0.3": 2,
            "127.0.0.4": 2,
        }
        refused_before = gw.handshakes_refused
        again = await half_open(gw, "127.0.0.3")  # as busy as any: it is refused, nobody dropped
        await until(lambda: closed_by_gateway(again), "the busiest source's newcomer refused")
        assert gw.handshakes_refused == refused_before + 1 and gw.handshakes_evicted == 2
        assert not any(closed_by_gateway(x) for x in a[2:] + b + c)
        for _, writer in a + b + c + [again]:
            writer.close()
        await until(lambda: gw._half_open == 0, "every half-open connection released")


@pytest.mark.parametrize(
    ("address", "source"),
    [
        ("192.0.2.7", "192.0.2.7"),
        ("::ffff:192.0.2.7", "192.0.2.7"),  # IPv4-mapped: the IPv4 peer it is
        ("2001:db8:1:2::5", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:1:2:3", "2001:db8:1:2::/64"),  # one /64: one source
        ("fe80::1%eth0", "fe80::/64"),
        ("?", "?"),
    ],
)
def test_a_source_is_an_ipv4_address_or_an_ipv6_64(address: str, source: str) -> None:
    assert gateway._source_of(address) == source

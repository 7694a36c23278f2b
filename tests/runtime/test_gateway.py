"""The device gateway and Device handles, against fake xiaozhi devices over WebSocket."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
from runtime_fakes import FakeCore, FakeWsDevice
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from mcpgen.runtime import Device, Gateway, HmacAuth, TokenAuth
from mcpgen.runtime.errors import (
    DeviceDisconnected,
    DeviceTimeout,
    RpcError,
    SpecMismatch,
    ToolError,
    ValidationError,
)


async def start(fakes: list[FakeWsDevice], url: str, device_id: str, **kw: Any) -> FakeWsDevice:
    d = FakeWsDevice(url, device_id, **kw)
    fakes.append(d)
    await d.start()
    return d


def url_of(gw: Gateway) -> str:
    return f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/"


# -- session setup ---------------------------------------------------------------------------


async def test_session_setup_lists_every_page_with_user_tools(
    gateway: Gateway, ws_url: str, fake_devices
) -> None:
    core = FakeCore(page_size=3)
    fake = await start(fake_devices, ws_url, "dev-1", core=core)
    device = await gateway.wait_for_device(timeout=5)
    assert device.device_id == "dev-1"
    assert device.session_id == fake.session_id and fake.server_hello is not None
    assert fake.server_hello == {
        "type": "hello",
        "transport": "websocket",
        "session_id": device.session_id,
        "version": 3,
    }
    assert device.server_info == {"name": "xiaozhi-sim", "version": "1.0.0"}
    assert device.protocol_version == "2024-11-05"
    assert device.fingerprint == core.spec.fingerprint
    assert [t.name for t in device.tools] == [t["name"] for t in core.tools]
    assert [t.name for t in device.tools if t.user_only] == ["self.reboot"]
    # the exchange: initialize, initialized, then tools/list pages with withUserTools
    methods = [m.get("method") for m in core.received]
    pages = -(-len(core.tools) // 3)
    assert methods == ["initialize", "notifications/initialized"] + ["tools/list"] * pages
    init = core.received[0]["params"]
    assert init["protocolVersion"] == "2024-11-05" and "clientInfo" in init
    lists = [m["params"] for m in core.received[2:]]
    assert lists[0] == {"cursor": "", "withUserTools": True}
    assert [p["cursor"] for p in lists[1:]] == [core.tools[3 * i]["name"] for i in range(1, pages)]
    assert gateway.connected == {"dev-1": device}
    ids = [m["id"] for m in core.received if "id" in m]
    assert ids == sorted(set(ids)), "ids are unique and increasing"


async def test_calls_decode_per_kind_and_errors_are_typed(
    gateway: Gateway, ws_url: str, fake_devices
) -> None:
    await start(fake_devices, ws_url, "dev-calls")
    device = await gateway.wait_for_device(timeout=5)
    assert await device.call("self.audio_speaker.set_volume", {"volume": 30}) is True
    status = await device.call("self.get_device_status")
    assert status["audio_speaker"]["volume"] == 30
    assert await device.call("self.counter.add", {"amount": 4}) == 4
    raw = await device.call_raw("self.counter.add", {"amount": 1})
    assert raw == {"content": [{"type": "text", "text": "5"}], "isError": False}
    with pytest.raises(ToolError) as tool_err:
        await device.call("self.test.fail")
    assert tool_err.value.message == "the motor is stuck"
    with pytest.raises(RpcError) as rpc_err:
        await device.call("self.nope", {}, validate=False)
    assert rpc_err.value.code == -32601 and "self.nope" in rpc_err.value.message
    with pytest.raises(ValidationError) as local:
        await device.call("self.audio_speaker.set_volume", {"volume": 101})
    assert (local.value.argument, local.value.rule) == ("volume", "maximum")
    with pytest.raises(ValidationError):
        await device.call("self.nope", {})
    # defaults from the reported schema are sent
    await device.call("self.sensor.read_temperature")


async def test_stock_device_quirks_end_to_end(gateway: Gateway, ws_url: str, fake_devices) -> None:
    core = FakeCore(stock=True, fingerprint=None, page_size=2)
    await start(fake_devices, ws_url, "stock-1", core=core)
    device = await gateway.wait_for_device(timeout=5)
    assert device.fingerprint is None and device.dynamic is True
    assert len(device.tools) == len(core.tools)
    with pytest.raises(RpcError) as err:
        await device.call("self.missing", {}, validate=False)
    assert err.value.code is None and "self.missing" in err.value.message
    # an object without structuredContent: decoded from the text (no outputSchema -> auto)
    status = await device.call("self.get_device_status")
    assert status["battery"]["level"] == 77


# -- fingerprint policies ------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["strict", "warn", "off"])
async def test_fingerprint_mismatch_policies(
    policy: str, fake_devices, caplog: pytest.LogCaptureFixture
) -> None:
    async with Gateway(port=0, fingerprint="0123456789abcdef", policy=policy) as gw:  # type: ignore[arg-type]
        fake = await start(fake_devices, url_of(gw), f"fp-{policy}")
        if policy == "strict":
            with caplog.at_level(logging.WARNING, logger="mcpgen.runtime.links.websocket.gateway"):
                with pytest.raises(DeviceTimeout):
                    await gw.wait_for_device(timeout=1.5)
                await asyncio.wait_for(fake.closed.wait(), 5)
            assert "fingerprint mismatch" in caplog.text
            assert gw.connected == {}
            return
        device = await gw.wait_for_device(timeout=5)
        assert device.dynamic is (policy == "warn")
        assert device.expected_fingerprint == "0123456789abcdef"
        with pytest.raises(ValidationError):
            await device.call("self.audio_speaker.set_volume", {"volume": 101})
        assert await device.call("self.audio_speaker.set_volume", {"volume": 10}) is True


async def test_matching_fingerprint_is_not_dynamic(fake_devices) -> None:
    core = FakeCore()
    async with Gateway(port=0, fingerprint=core.spec.fingerprint, policy="strict") as gw:
        await start(fake_devices, url_of(gw), "fp-ok", core=core)
        device = await gw.wait_for_device(timeout=5)
        assert device.dynamic is False


async def test_strict_refuses_a_device_without_fingerprint(fake_devices) -> None:
    async with Gateway(port=0, fingerprint="0123456789abcdef", policy="strict") as gw:
        fake = await start(fake_devices, url_of(gw), "stock", core=FakeCore(fingerprint=None))
        await asyncio.wait_for(fake.closed.wait(), 5)
        assert gw.connected == {}


# -- authentication ------------------------------------------------------------------------------


async def expect_status(url: str, headers: dict[str, str]) -> int:
    try:
        async with connect(url, additional_headers=headers):
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


async def test_token_auth(fake_devices, caplog: pytest.LogCaptureFixture) -> None:
    async with Gateway(port=0, auth=TokenAuth({"lamp-1": "lamp-token", "*": "fleet"})) as gw:
        url = url_of(gw)
        with caplog.at_level(logging.WARNING, logger="mcpgen.runtime.links.websocket.gateway"):
            assert await expect_status(url, {"Device-Id": "x", "Authorization": "Bearer nope"}) == 401
            assert await expect_status(url, {"Device-Id": "x"}) == 401
            assert await expect_status(url, {"Device-Id": "lamp-1", "Authorization": "Bearer fleet"}) == 101
            assert await expect_status(url, {"Authorization": "Bearer fleet"}) == 400
            assert (
                await expect_status(
                    url, {"Device-Id": "x", "Protocol-Version": "v1", "Authorization": "Bearer fleet"}
                )
                == 400
            )
            # clients that cannot set headers may pass them as query parameters
            q = "?device-id=q1&client-id=c&authorization=Bearer%20fleet&protocol-version=1"
            assert await expect_status(url + q, {}) == 101
            assert await expect_status(url + "?device-id=q2&authorization=Bearer%20bad", {}) == 401
        assert "rejected device 'x'" in caplog.text and "HTTP 401" in caplog.text
        assert gw.rejected == 5
        await start(fake_devices, url, "lamp-1", token="lamp-token")
        await start(fake_devices, url, "other", token="fleet")
        got = {(await gw.wait_for_device(timeout=5)).device_id for _ in range(2)}
        assert got == {"lamp-1", "other"}
        with pytest.raises(InvalidStatus):
            await start(fake_devices, url, "lamp-2", token="lamp-token")


async def test_hmac_auth_permanent_and_expiring_tokens() -> None:
    auth = HmacAuth("s3cret")
    async with Gateway(port=0, auth=auth) as gw:
        url = url_of(gw)

        def h(dev: str, token: str) -> dict[str, str]:
            return {"Device-Id": dev, "Authorization": f"Bearer {token}", "Protocol-Version": "1"}

        permanent = auth.token_for("dev.a")
        assert permanent.startswith("mcpgen1.p.") and len(permanent) == len("mcpgen1.p.") + 64
        assert await expect_status(url, h("dev.a", permanent)) == 101
        assert await expect_status(url, h("dev.b", permanent)) == 401
        future = int(time.time()) + 600
        expiring = auth.token_for("dev.a", future)
        assert expiring.startswith(f"mcpgen1.e.{future}.")
        assert await expect_status(url, h("dev.a", expiring)) == 101
        assert await expect_status(url, h("dev.b", expiring)) == 401
        assert await expect_status(url, h("dev.a", auth.token_for("dev.a", int(time.time()) - 1))) == 401
        assert await expect_status(url, h("dev.a", HmacAuth("other").token_for("dev.a"))) == 401
        assert await expect_status(url, h("dev.a", f"mcpgen1.e.{future}.{'0' * 64}")) == 401


async def test_hmac_forged_token_cannot_take_over_a_live_session(fake_devices) -> None:
    """Issue 18: the permanent token of device 'X.9999999999' took over device X's session."""
    auth = HmacAuth("s3cret")
    async with Gateway(port=0, auth=auth) as gw:
        url = url_of(gw)
        await start(fake_devices, url, "X", token=auth.token_for("X"))
        real = await gw.wait_for_device(timeout=5)
        sig = auth.token_for("X.9999999999").rsplit(".", 1)[-1]  # a token the attacker holds
        for forged in (f"X.9999999999.{sig}", f"mcpgen1.e.9999999999.{sig}", f"mcpgen1.p.{sig}"):
            headers = {"Device-Id": "X", "Authorization": f"Bearer {forged}", "Protocol-Version": "1"}
            assert await expect_status(url, headers) == 401, forged
        await asyncio.sleep(0.1)
        assert gw.connected == {"X": real} and not real.closed


async def test_custom_async_authenticator(fake_devices) -> None:
    seen = []

    class OnlyClient:
        async def authenticate(self, handshake: Any) -> bool:
            seen.append(handshake)
            return handshake.client_id == "good-client"

    async with Gateway(port=0, auth=OnlyClient()) as gw:
        assert await expect_status(url_of(gw), {"Device-Id": "a", "Client-Id": "bad"}) == 401
        await start(fake_devices, url_of(gw), "b", client_id="good-client")
        device = await gw.wait_for_device(timeout=5)
        assert device.device_id == "b"
        assert seen[-1].protocol_version == 1 and seen[-1].token == "secret"


# -- hello ------------------------------------------------------------------------------------------


async def test_hello_without_mcp_is_refused(gateway: Gateway, ws_url: str, fake_devices) -> None:
    fake = await start(fake_devices, ws_url, "no-mcp", mcp=False)
    await asyncio.wait_for(fake.closed.wait(), 5)
    assert gateway.connected == {}
    assert fake.ws is not None and fake.ws.close_code == 1008
    assert fake.ws.close_reason == "MCP support (features.mcp) required"
    assert gateway.rejected == 1  # counted like a refused handshake


async def test_mcp_before_hello_is_refused(gateway: Gateway, ws_url: str) -> None:
    async with connect(
        ws_url, additional_headers={"Device-Id": "rude", "Authorization": "Bearer secret"}
    ) as ws:
        await ws.send(
            json.dumps({"session_id": "", "type": "mcp", "payload": {"jsonrpc": "2.0", "method": "x"}})
        )
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 5)
        assert ws.close_code == 1008 and ws.close_reason == "hello expected"
    assert gateway.rejected == 1


async def test_no_hello_times_out(fake_devices) -> None:
    async with Gateway(port=0, hello_timeout=0.3) as gw:
        fake = await start(fake_devices, url_of(gw), "silent", send_hello=False)
        await asyncio.wait_for(fake.closed.wait(), 5)


# -- failure modes ---------------------------------------------------------------------------------


async def test_device_killed_mid_call_fails_fast(fake_devices) -> None:
    async with Gateway(port=0, call_timeout=30) as gw:
        fake = await start(fake_devices, url_of(gw), "dev-kill")
        device = await gw.wait_for_device(timeout=5)
        call = asyncio.create_task(device.call("self.test.hang"))
        other = asyncio.create_task(device.call("self.test.sleep", {"ms": 20000}))
        await asyncio.sleep(0.2)
        assert not call.done()
        started = time.monotonic()
        fake.kill()
        for task in (call, other):
            with pytest.raises(DeviceDisconnected):
                await asyncio.wait_for(task, 10)
        assert time.monotonic() - started < 3, "DeviceDisconnected must come well within the timeout"
        assert device.closed
        with pytest.raises(DeviceDisconnected):
            await device.call("self.counter.add")
        await asyncio.sleep(0.05)
        assert "dev-kill" not in gw.connected


async def test_device_dropping_the_connection_itself(gateway: Gateway, ws_url: str, fake_devices) -> None:
    await start(fake_devices, ws_url, "dev-die")
    device = await gateway.wait_for_device(timeout=5)
    with pytest.raises(DeviceDisconnected):
        await asyncio.wait_for(device.call("self.test.die"), 5)


async def test_device_that_never_answers_times_out(gateway: Gateway, ws_url: str, fake_devices) -> None:
    fake = await start(fake_devices, ws_url, "dev-silent")
    device = await gateway.wait_for_device(timeout=5)
    started = time.monotonic()
    with pytest.raises(DeviceTimeout):
        await device.call("self.test.hang", timeout=0.3)
    assert time.monotonic() - started < 2
    await asyncio.sleep(0.1)
    cancelled = [p for m, p in fake.core.notifications if m == "notifications/cancelled"]
    assert cancelled and cancelled[-1]["reason"] == "timeout"
    assert device.session.pending_count == 0
    # the device stays usable
    assert await device.call("self.counter.add", {"amount": 2}) == 2


async def test_cancelling_a_call_sends_notifications_cancelled(
    gateway: Gateway, ws_url: str, fake_devices
) -> None:
    fake = await start(fake_devices, ws_url, "dev-cancel")
    device = await gateway.wait_for_device(timeout=5)
    task = asyncio.create_task(device.call("self.test.hang"))
    await asyncio.sleep(0.2)
    call_id = [m["id"] for m in fake.core.received if m.get("method") == "tools/call"][-1]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.2)
    assert (
        "notifications/cancelled",
        {"requestId": call_id, "reason": "cancelled by the client"},
    ) in fake.core.notifications
    assert device.session.pending_count == 0


async def test_oversize_frames_are_refused(fake_devices) -> None:
    async with Gateway(port=0, max_frame=4096) as gw:
        fake = await start(fake_devices, url_of(gw), "big")
        device = await gw.wait_for_device(timeout=5)
        assert len(await device.call("self.test.big", {"n": 1000})) == 1000
        started = time.monotonic()
        with pytest.raises(DeviceDisconnected):
            await device.call("self.test.big", {"n": 10000})
        assert time.monotonic() - started < 3
        await asyncio.wait_for(fake.closed.wait(), 5)
        assert fake.ws is not None and fake.ws.close_code == 1009
        assert "big" not in gw.connected


async def test_garbage_frames_do_not_disturb_the_session(gateway: Gateway, ws_url: str, fake_devices) -> None:
    fake = await start(fake_devices, ws_url, "noisy")
    device = await gateway.wait_for_device(timeout=5)
    await fake.send_raw("not json at all")
    await fake.send_raw(b"\x01\x02binary audio frame")
    await fake.send_raw(json.dumps({"type": "listen", "state": "detect", "text": "hi"}))
    await fake.send_raw(json.dumps({"session_id": fake.session_id, "type": "mcp", "payload": [1]}))
    assert await device.call("self.counter.add", {"amount": 1}) == 1


async def test_reconnect_gets_a_fresh_session(gateway: Gateway, ws_url: str, fake_devices) -> None:
    first = await start(fake_devices, ws_url, "roamer")
    old = await gateway.wait_for_device(timeout=5)
    pending = asyncio.create_task(old.call("self.test.hang", timeout=30))
    await asyncio.sleep(0.1)
    second = await start(fake_devices, ws_url, "roamer")
    new = await gateway.wait_for_device("roamer", timeout=5)
    for _ in range(50):
        if gateway.connected.get("roamer") is not old:
            break
        await asyncio.sleep(0.05)
    new = gateway.connected["roamer"]
    assert new is not old and new.session_id != old.session_id
    assert second.session_id == new.session_id != first.session_id
    with pytest.raises(DeviceDisconnected):
        await asyncio.wait_for(pending, 5)
    assert old.closed and not new.closed
    await asyncio.wait_for(first.closed.wait(), 5)
    assert await new.call("self.counter.add", {"amount": 3}) == 3


async def test_wait_for_device_hands_out_each_device_once(
    gateway: Gateway, ws_url: str, fake_devices
) -> None:
    for i in range(3):
        await start(fake_devices, ws_url, f"d{i}")
    got = [(await gateway.wait_for_device(timeout=5)).device_id for _ in range(3)]
    assert sorted(got) == ["d0", "d1", "d2"]
    with pytest.raises(DeviceTimeout):
        await gateway.wait_for_device(timeout=0.2)
    assert (await gateway.wait_for_device("d1", timeout=1)).device_id == "d1"


async def test_devices_iterator(gateway: Gateway, ws_url: str, fake_devices) -> None:
    await start(fake_devices, ws_url, "early")
    await gateway.wait_for_device("early", timeout=5)
    seen: list[str] = []

    async def collect() -> None:
        async for d in gateway.devices():
            seen.append(d.device_id)
            if len(seen) == 3:
                return

    task = asyncio.create_task(collect())
    await start(fake_devices, ws_url, "late-1")
    await start(fake_devices, ws_url, "late-2")
    await asyncio.wait_for(task, 5)
    assert seen[0] == "early" and sorted(seen[1:]) == ["late-1", "late-2"]


async def test_hundred_devices_with_interleaved_calls(fake_devices) -> None:
    count = 100
    async with Gateway(port=0, auth=TokenAuth({"*": "secret"}), call_timeout=30) as gw:
        await asyncio.gather(*(start(fake_devices, url_of(gw), f"dev-{i:03d}") for i in range(count)))
        devices: dict[str, Device] = {}
        while len(devices) < count:
            d = await gw.wait_for_device(timeout=30)
            devices[d.device_id] = d
        assert len(gw.connected) == count

        async def exercise(dev_id: str, tag: str) -> tuple[str, str]:
            # random-ish delays so replies come back out of order, across and within devices
            ms = (hash(tag) % 7) * 5
            return dev_id, await devices[dev_id].call("self.test.sleep", {"ms": ms, "tag": tag})

        calls = [exercise(dev_id, f"{dev_id}/{r}") for r in range(4) for dev_id in sorted(devices)]
        results = await asyncio.gather(*calls)
        assert results == [(dev_id, f"{dev_id}/{r}") for r in range(4) for dev_id in sorted(devices)]
        # one misbehaving device does not disturb the others
        fake_devices[0].kill()
        res = await asyncio.gather(*(devices[i].call("self.counter.add") for i in sorted(devices)[1:]))
        assert res == [1] * (count - 1)


# -- notifications --------------------------------------------------------------------------------


async def test_notifications_reach_subscribers(gateway: Gateway, ws_url: str, fake_devices) -> None:
    await start(fake_devices, ws_url, "notifier")
    device = await gateway.wait_for_device(timeout=5)
    got: list[tuple[str, dict]] = []
    async_got: list[str] = []

    async def async_cb(method: str, params: dict) -> None:
        async_got.append(method)

    def broken(method: str, params: dict) -> None:
        raise RuntimeError("subscriber bug")

    unsubscribe = device.on_notification(lambda m, p: got.append((m, p)))
    device.on_notification(async_cb)
    device.on_notification(broken)
    assert (
        await device.call("self.test.notify", {"method": "notifications/state_changed", "value": 1}) is True
    )
    await asyncio.sleep(0.1)
    assert got == [("notifications/state_changed", {"value": 1})]
    assert async_got == ["notifications/state_changed"]
    unsubscribe()
    await device.call("self.test.notify", {"method": "notifications/other", "value": 2})
    await asyncio.sleep(0.1)
    assert len(got) == 1 and async_got == ["notifications/state_changed", "notifications/other"]


async def test_list_changed_relists_tools(gateway: Gateway, ws_url: str, fake_devices) -> None:
    fake = await start(fake_devices, ws_url, "grower")
    device = await gateway.wait_for_device(timeout=5)
    methods: list[str] = []
    device.on_notification(lambda m, p: methods.append(m))
    before = len(device.tools)
    waiter = asyncio.create_task(device.wait_tools_changed(timeout=5))
    await asyncio.sleep(0)
    assert await device.call("self.test.add_tool", {"name": "self.new.tool"}) is True
    await waiter
    assert len(device.tools) == before + 1 and device.tool("self.new.tool").description == "added"
    assert "notifications/tools/list_changed" in methods
    assert await device.call("self.new.tool") is True
    lists = [m for m in fake.core.received if m.get("method") == "tools/list"]
    assert len(lists) > 1


async def test_device_requests_are_answered(gateway: Gateway, ws_url: str, fake_devices) -> None:
    fake = await start(fake_devices, ws_url, "asker")
    await gateway.wait_for_device(timeout=5)
    assert fake.ws is not None and fake.task is not None
    fake.task.cancel()  # read the gateway's replies ourselves
    await asyncio.sleep(0.05)
    for rid, method in ((1, "ping"), (2, "sampling/createMessage")):
        payload = {"jsonrpc": "2.0", "id": rid, "method": method}
        await fake.send_raw(json.dumps({"session_id": fake.session_id, "type": "mcp", "payload": payload}))
    replies = [json.loads(await asyncio.wait_for(fake.ws.recv(), 5)) for _ in range(2)]
    a, b = sorted((r["payload"] for r in replies), key=lambda p: p["id"])
    assert a == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert b["error"]["code"] == -32601
    assert all(r["session_id"] == fake.session_id and r["type"] == "mcp" for r in replies)


async def test_gateway_close_disconnects_everyone(fake_devices) -> None:
    gw = Gateway(port=0)
    await gw.start()
    await start(fake_devices, url_of(gw), "a")
    device = await gw.wait_for_device(timeout=5)
    pending = asyncio.create_task(device.call("self.test.hang", timeout=30))
    await asyncio.sleep(0.1)
    await gw.close()
    with pytest.raises(DeviceDisconnected):
        await asyncio.wait_for(pending, 5)
    assert device.closed
    await asyncio.wait_for(fake_devices[0].closed.wait(), 5)


async def test_vision_capability_is_sent(fake_devices) -> None:
    async with Gateway(port=0, vision={"url": "http://backend/vision", "token": "vt"}) as gw:
        fake = await start(fake_devices, url_of(gw), "cam")
        await gw.wait_for_device(timeout=5)
        caps = fake.core.received[0]["params"]["capabilities"]
        assert caps == {"vision": {"url": "http://backend/vision", "token": "vt"}}


async def test_spec_mismatch_from_setup_is_typed() -> None:
    class Loopback:
        def __init__(self) -> None:
            self.core = FakeCore(fingerprint="ffffffffffffffff")
            self.device: Any = None

        async def send(self, data: bytes) -> None:
            reply = await self.core.handle(json.loads(data))
            if reply is not None:
                asyncio.get_running_loop().call_soon(self.device.feed, json.dumps(reply))

        async def close(self) -> None:
            self.device.connection_lost("closed")

    t = Loopback()
    device = Device(t, device_id="loop")
    t.device = device
    with pytest.raises(SpecMismatch) as err:
        await device.setup(fingerprint="0000000000000000", policy="strict")
    assert (err.value.expected, err.value.actual) == ("0000000000000000", "ffffffffffffffff")


async def test_upgrade_headers_reach_the_authenticator_but_are_not_kept(fake_devices) -> None:
    """A connection keeps only the handshake fields it uses: the headers (~1.3 KB per device)
    are dropped once the authenticator has seen them (issue 32, memory per device)."""
    seen: list[Any] = []

    class Recording:
        def authenticate(self, hs: Any) -> bool:
            seen.append(dict(hs.headers))
            return True

    async with Gateway(port=0, auth=Recording()) as gw:
        fake = FakeWsDevice(f"ws://127.0.0.1:{gw.port}/", "kept-light")
        fake_devices.append(fake)
        await fake.start()
        device = await gw.wait_for_device("kept-light", timeout=5)
        assert seen and seen[0]["Device-Id"] == "kept-light" and seen[0]["Client-Id"] == "client-uuid"
        (link,) = list(gw._links)
        assert link.handshake.device_id == "kept-light" and dict(link.handshake.headers) == {}
        assert device.client_id == "client-uuid"
        assert await device.call("self.audio_speaker.set_volume", {"volume": 3}) is True

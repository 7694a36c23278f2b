"""The MQTT transport end to end: the C++ simulator (--mqtt), Mosquitto, runtime.MqttGateway."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from mqtt_testlib import Broker, Built, Seen, Spy, launch

from mcpgen.runtime import Device, Image, MqttGateway, TokenAuth
from mcpgen.runtime.errors import DeviceDisconnected, DeviceTimeout, ToolError, ValidationError

pytestmark = pytest.mark.slow


def _json(m: Seen) -> dict:
    try:
        v = orjson.loads(m.payload)
    except orjson.JSONDecodeError:
        return {}
    return v if isinstance(v, dict) else {}


def _mcp_method(m: Seen) -> str:
    payload = _json(m).get("payload")
    return payload.get("method", "") if isinstance(payload, dict) else ""


async def test_session_setup_and_wire_format(broker: Broker, built: Built, tmp_path: Path) -> None:
    fp = built.bindings.FINGERPRINT
    async with (
        Spy(broker.port) as spy,
        MqttGateway("127.0.0.1", broker.port, fingerprint=fp, policy="strict") as gw,
    ):
        assert gw.url == f"mqtt://127.0.0.1:{broker.port}/mcpgen"
        async with launch(built.exe, broker.port, "dev-a", tmp_path, "--token", "t0k") as sim:
            device = await gw.wait_for_device("dev-a", timeout=15)
            assert isinstance(device, Device)
            assert gw.connected == {"dev-a": device}
            assert device.device_id == "dev-a"
            assert device.client_id == sim.client_id
            assert not device.dynamic and device.fingerprint == fp
            assert device.protocol_version == "2024-11-05"
            assert {t.name for t in device.tools} == {t.name for t in built.spec.tools}
            assert str(uuid.UUID(device.session_id or "")) == device.session_id

            # The device's side of the wire: online state (retained), then its hello.
            state = await spy.wait(lambda m: m.topic == "mcpgen/dev-a/state")
            assert state.payload == b"online"
            hello = _json(await spy.wait(lambda m: m.topic == "mcpgen/dev-a/up"))
            assert hello["type"] == "hello" and hello["transport"] == "mqtt"
            assert hello["features"] == {"mcp": True}
            assert hello["client_id"] == sim.client_id and hello["token"] == "t0k"
            assert device.hello == hello
            # The gateway's answer on the down topic, then MCP in session envelopes.
            server_hello = _json(await spy.wait(lambda m: m.topic == "mcpgen/dev-a/down"))
            assert server_hello == {
                "type": "hello",
                "transport": "mqtt",
                "session_id": device.session_id,
                "version": 3,
            }
            init = await spy.wait(lambda m: m.topic == "mcpgen/dev-a/down" and _mcp_method(m) == "initialize")
            assert _json(init)["session_id"] == device.session_id
            reply = await spy.wait(lambda m: m.topic == "mcpgen/dev-a/up" and _json(m).get("type") == "mcp")
            assert _json(reply)["session_id"] == device.session_id
            assert _json(reply)["payload"]["result"]["serverInfo"]["name"] == "xiaozhi-sim"
            assert "server hello, session_id=" + (device.session_id or "") in sim.log()

            retained = await _retained_state(broker, "dev-a")
            assert retained == b"online"
        # The process is gone: its will turns the state into "offline" (retained).
        await asyncio.wait_for(device.wait_closed(), 5)
        assert "last will" in device.close_reason
        assert gw.connected == {}
        assert await _retained_state(broker, "dev-a") == b"offline"


async def _retained_state(broker: Broker, device_id: str) -> bytes:
    # A fresh subscription: "<prefix>/#" also matches "<prefix>" itself.
    async with Spy(broker.port, prefix=f"mcpgen/{device_id}/state") as spy:
        m = await spy.wait(lambda m: m.topic == f"mcpgen/{device_id}/state", timeout=5)
        assert m.retain
        return m.payload


async def test_calls_through_generated_bindings(broker: Broker, built: Built, tmp_path: Path) -> None:
    async with (
        MqttGateway("127.0.0.1", broker.port, fingerprint=built.bindings.FINGERPRINT, policy="strict") as gw,
        launch(built.exe, broker.port, "dev-b", tmp_path),
    ):
        sim = built.bindings(await gw.wait_for_device(timeout=15), policy="strict")
        assert await sim.audio_speaker.set_volume(volume=42) is True
        assert await sim.screen.set_brightness(brightness=10) is True
        status = await sim.get_device_status()
        assert status["audio_speaker"]["volume"] == 42
        assert status["screen"]["brightness"] == 10
        assert await sim.counter.add(amount=5) == 5
        assert await sim.counter.add(amount=-7) == -2
        assert await sim.sensor.read_temperature(unit="fahrenheit") == pytest.approx(70.7)
        assert await sim.display.show_text(text="hi mqtt") == 'showing "hi mqtt" for 3.0 s'
        img = await sim.camera.snapshot()
        assert isinstance(img, Image) and img.mime_type == "image/png" and img.data.startswith(b"\x89PNG")
        with pytest.raises(ValidationError) as err:
            await sim.audio_speaker.set_volume(volume=101)
        assert err.value.rule == "maximum"

        # A device notification arrives over the up topic.
        seen: list[tuple[str, dict]] = []
        sim.device.on_notification(lambda method, params: seen.append((method, params)))
        assert await sim.screen.set_theme(theme="dark") is True
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.02)
        assert seen == [
            (
                "notifications/state_changed",
                {"component": "screen", "oldState": {"theme": "light"}, "newState": {"theme": "dark"}},
            )
        ]

        # Many calls in flight at once are correlated correctly.
        results = await asyncio.gather(*(sim.counter.add(amount=1) for _ in range(20)))
        assert sorted(results) == list(range(-1, 19))


async def test_tool_error(broker: Broker, built: Built, tmp_path: Path) -> None:
    async with MqttGateway("127.0.0.1", broker.port) as gw, launch(built.exe, broker.port, "dev-c", tmp_path):
        device = await gw.wait_for_device("dev-c", timeout=15)
        with pytest.raises(ToolError) as err:
            await device.call("self.display.show_text", {"text": "fail"})
        assert "did not acknowledge" in str(err.value)
        with pytest.raises(ToolError):
            await device.call("self.network.set_hostname", {"hostname": "Bad_Name"}, validate=False)
        # The session carries on.
        assert await device.call("self.network.set_hostname", {"hostname": "lab-7"}) == "lab-7"


async def test_device_killed_mid_call_fails_at_once_via_will(
    broker: Broker, built: Built, tmp_path: Path
) -> None:
    async with Spy(broker.port) as spy, MqttGateway("127.0.0.1", broker.port, call_timeout=30.0) as gw:
        async with launch(built.exe, broker.port, "dev-d", tmp_path) as sim:
            device = await gw.wait_for_device("dev-d", timeout=15)
            sim.stop()  # so the call is certainly still pending when the process dies
            call = asyncio.ensure_future(device.call("self.counter.add", {"amount": 1}))
            await spy.wait(lambda m: m.topic == "mcpgen/dev-d/down" and _mcp_method(m) == "tools/call")
            t0 = time.monotonic()
            sim.kill()
            with pytest.raises(DeviceDisconnected) as err:
                await asyncio.wait_for(call, 10)
            assert time.monotonic() - t0 < 3.0  # the will, not the 30 s call timeout
            assert "last will" in str(err.value)
            assert device.closed and gw.connected == {}
            offline = await spy.wait(lambda m: m.topic == "mcpgen/dev-d/state" and m.payload == b"offline")
            assert not offline.retain  # a live will, published when the connection dropped
            with pytest.raises(DeviceDisconnected):
                await device.call("self.counter.add", {"amount": 1})


async def test_mute_device_times_out_and_recovers(broker: Broker, built: Built, tmp_path: Path) -> None:
    async with Spy(broker.port) as spy, MqttGateway("127.0.0.1", broker.port, call_timeout=1.0) as gw:
        async with launch(built.exe, broker.port, "dev-e", tmp_path) as sim:
            device = await gw.wait_for_device("dev-e", timeout=15)
            sim.stop()
            t0 = time.monotonic()
            with pytest.raises(DeviceTimeout):
                await device.call("self.counter.add", {"amount": 10})
            assert 0.9 <= time.monotonic() - t0 < 3.0
            # The timed-out request is cancelled towards the device.
            cancelled = await spy.wait(
                lambda m: m.topic == "mcpgen/dev-e/down" and _mcp_method(m) == "notifications/cancelled"
            )
            assert _json(cancelled)["session_id"] == device.session_id
            # Still connected as far as the broker knows: the handle stays open.
            assert not device.closed
            sim.cont()
            assert await device.call("self.counter.add", {"amount": 1}, timeout=5) == 11


async def test_two_devices_at_once(broker: Broker, built: Built, tmp_path: Path) -> None:
    Bindings = built.bindings
    async with (
        MqttGateway("127.0.0.1", broker.port, fingerprint=Bindings.FINGERPRINT) as gw,
        launch(built.exe, broker.port, "left", tmp_path) as left_sim,
        launch(built.exe, broker.port, "right", tmp_path),
    ):
        got: dict[str, Device] = {}
        async for device in gw.devices():
            got[device.device_id] = device
            if len(got) == 2:
                break
        assert set(got) == {"left", "right"} and set(gw.connected) == {"left", "right"}
        assert got["left"].session_id != got["right"].session_id
        left, right = Bindings(got["left"]), Bindings(got["right"])
        await asyncio.gather(
            left.audio_speaker.set_volume(volume=11), right.audio_speaker.set_volume(volume=77)
        )
        s_left, s_right = await asyncio.gather(left.get_device_status(), right.get_device_status())
        assert s_left["audio_speaker"]["volume"] == 11
        assert s_right["audio_speaker"]["volume"] == 77

        left_sim.kill()
        await asyncio.wait_for(got["left"].wait_closed(), 5)
        assert set(gw.connected) == {"right"}
        assert await right.counter.add(amount=3) == 3


async def test_devices_say_hello_again_to_a_restarted_gateway(
    broker: Broker, built: Built, tmp_path: Path
) -> None:
    # A long hello timeout: without the gateway's nudge the device would wait 60 s.
    async with launch(built.exe, broker.port, "dev-f", tmp_path, "--hello-timeout-ms", "60000") as sim:
        async with MqttGateway("127.0.0.1", broker.port) as gw1:
            first = await gw1.wait_for_device("dev-f", timeout=15)
            assert await first.call("self.counter.add", {"amount": 2}) == 2
        assert first.closed
        await sim.wait_log("goodbye from the server (session " + (first.session_id or ""))
        t0 = time.monotonic()
        async with MqttGateway("127.0.0.1", broker.port) as gw2:
            second = await gw2.wait_for_device("dev-f", timeout=15)
            assert time.monotonic() - t0 < 5.0
            assert second.session_id != first.session_id
            # The same process: its state survived, only the session is new.
            assert await second.call("self.counter.add", {"amount": 2}) == 4


async def test_both_ends_reconnect_after_a_broker_restart(
    broker: Broker, built: Built, tmp_path: Path
) -> None:
    async with (
        MqttGateway("127.0.0.1", broker.port) as gw,
        launch(built.exe, broker.port, "dev-g", tmp_path) as sim,
    ):
        first = await gw.wait_for_device("dev-g", timeout=15)
        assert await first.call("self.counter.add", {"amount": 5}) == 5
        broker.stop()
        await asyncio.wait_for(first.wait_closed(), 5)
        # (mosquitto publishes its clients' wills as it shuts down; either way it is over)
        assert "broker" in first.close_reason or "last will" in first.close_reason
        broker.start(port=broker.port)
        second = await gw.wait_for_device("dev-g", timeout=20)
        assert second is not first and second.session_id != first.session_id
        assert await second.call("self.counter.add", {"amount": 1}) == 6
        assert "mqtt: reconnecting in" in sim.log()


async def test_token_in_hello_is_checked_by_the_authenticator(
    broker: Broker, built: Built, tmp_path: Path
) -> None:
    auth = TokenAuth({"good": "s3cret"})
    async with (
        MqttGateway("127.0.0.1", broker.port, auth=auth) as gw,
        launch(
            built.exe, broker.port, "bad", tmp_path, "--token", "wrong", "--hello-timeout-ms", "1000"
        ) as bad,
        launch(built.exe, broker.port, "good", tmp_path, "--token", "s3cret"),
    ):
        device = await gw.wait_for_device(timeout=15)
        assert device.device_id == "good"
        await bad.wait_log("no server hello within")  # never answered
        assert gw.rejected >= 1 and set(gw.connected) == {"good"}


ACL = """\
# the gateway
user gateway
topic readwrite mcpgen/#

# each device (user name = device id) only its own topics
pattern write mcpgen/%u/up
pattern write mcpgen/%u/state
pattern read mcpgen/%u/down
"""


async def test_broker_credentials_and_acl(tmp_path: Path, built: Built) -> None:
    broker = Broker(tmp_path, users={"gateway": "gw-pass", "dev-h": "dev-pass"}, acl=ACL).start()
    try:
        import aiomqtt

        with pytest.raises(aiomqtt.MqttError):
            await MqttGateway("127.0.0.1", broker.port, username="gateway", password="nope").start()
        async with MqttGateway("127.0.0.1", broker.port, username="gateway", password="gw-pass") as gw:
            creds = ("--username", "dev-h", "--password", "dev-pass")
            async with launch(built.exe, broker.port, "dev-h", tmp_path, *creds):
                device = await gw.wait_for_device("dev-h", timeout=15)
                assert await device.call("self.counter.add", {"amount": 3}) == 3
            # A wrong password: refused by the broker (and gives up with --max-reconnects 0).
            bad = ("--username", "dev-h", "--password", "wrong", "--max-reconnects", "0")
            async with launch(built.exe, broker.port, "dev-h", tmp_path, *bad) as sim:
                assert await asyncio.wait_for(sim.proc.wait(), 10) == 1
                assert "connection refused by the broker" in sim.log()
            # Right credentials, but another device's topics: the broker drops what it
            # publishes there (mosquitto still acknowledges it), so no session ever starts.
            spoof = ("--username", "dev-h", "--password", "dev-pass", "--hello-timeout-ms", "1000")
            async with (
                Spy(broker.port, username="gateway", password="gw-pass") as spy,
                launch(built.exe, broker.port, "dev-x", tmp_path, *spoof) as sim,
            ):
                await sim.wait_log("no server hello within")
                assert not [m for m in spy.seen if m.topic.startswith("mcpgen/dev-x/")]
            assert "dev-x" not in gw.connected
    finally:
        broker.stop()


async def test_custom_topic_prefix(broker: Broker, built: Built, tmp_path: Path) -> None:
    async with (
        Spy(broker.port, prefix="site/7") as spy,
        MqttGateway("127.0.0.1", broker.port, topic_prefix="site/7") as gw,
        launch(built.exe, broker.port, "dev-i", tmp_path, "--topic-prefix", "site/7"),
    ):
        device = await gw.wait_for_device("dev-i", timeout=15)
        assert await device.call("self.counter.add", {"amount": 9}) == 9
        await spy.wait(lambda m: m.topic == "site/7/dev-i/up")
        assert all(m.topic.startswith("site/7/dev-i/") for m in spy.seen)


async def test_keepalive_pings_keep_an_idle_device_connected(
    broker: Broker, built: Built, tmp_path: Path
) -> None:
    # Keepalive 5 s (libmosquitto's minimum): the broker drops a client that sends
    # nothing for 7.5 s.
    async with (
        MqttGateway("127.0.0.1", broker.port) as gw,
        launch(built.exe, broker.port, "dev-k", tmp_path, "--keepalive", "5") as sim,
    ):
        device = await gw.wait_for_device("dev-k", timeout=15)
        await asyncio.sleep(9.0)
        assert not device.closed, device.close_reason
        assert await device.call("self.counter.add", {"amount": 4}) == 4
        assert "connection lost" not in sim.log()
        assert "exceeded timeout" not in broker.log()


async def test_oversized_message_is_answered_not_truncated(
    broker: Broker, built: Built, tmp_path: Path
) -> None:
    async with Spy(broker.port) as spy, launch(built.exe, broker.port, "dev-o", tmp_path):
        hello = await spy.wait(lambda m: m.topic == "mcpgen/dev-o/up")
        assert _json(hello)["type"] == "hello"
        await spy.publish("mcpgen/dev-o/down", b'{"type":"hello","transport":"mqtt","session_id":"s-1"}')

        def ping(rid: int) -> bytes:
            return orjson.dumps(
                {
                    "session_id": "s-1",
                    "type": "mcp",
                    "payload": {"jsonrpc": "2.0", "id": rid, "method": "ping"},
                }
            )

        def reply_to(rid: object) -> Callable[[Seen], bool]:
            return lambda m: m.topic == "mcpgen/dev-o/up" and _json(m).get("payload", {}).get("id", 0) == rid

        await spy.publish("mcpgen/dev-o/down", ping(8))
        assert _json(await spy.wait(reply_to(8)))["payload"]["result"] == {}
        big = {
            "session_id": "s-1",
            "type": "mcp",
            "payload": {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "self.display.show_text", "arguments": {"text": "x" * 20000}},
            },
        }
        await spy.publish("mcpgen/dev-o/down", orjson.dumps(big))
        # Answered with its own id (read whole before the cut), as on the other ports.
        reply = _json(await spy.wait(reply_to(9)))
        assert reply["session_id"] == "s-1" and reply["type"] == "mcp"
        assert reply["payload"]["error"]["code"] == -32600
        # The stream stays in sync: the next request is answered normally.
        await spy.publish("mcpgen/dev-o/down", ping(10))
        assert _json(await spy.wait(reply_to(10)))["payload"]["result"] == {}


async def test_bad_device_options_are_refused(built: Built, tmp_path: Path) -> None:
    # A prefix with an empty level at either end would make "a//x/up" (the shared
    # mqtt_conventions.h rule; the host port used to accept it).
    bad_prefixes = [("--device-id", "x", "--topic-prefix", p) for p in ("a/", "/a", "a/+")]
    for extra in (("--device-id", "a/b"), ("--device-id", "x", "--password", "p"), *bad_prefixes):
        proc = await asyncio.create_subprocess_exec(
            str(built.exe),
            "--mqtt",
            "127.0.0.1:1",
            *extra,
            stderr=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 10)
        assert proc.returncode == 2, err
    both = await asyncio.create_subprocess_exec(
        str(built.exe), "--stdio", "--mqtt", "127.0.0.1:1", stderr=asyncio.subprocess.DEVNULL
    )
    assert await asyncio.wait_for(both.wait(), 10) == 2

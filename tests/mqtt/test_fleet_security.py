"""Fleet security against a real Mosquitto: password file, ACL file, TLS."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from pathlib import Path

import orjson
import pytest
from mqtt_testlib import FLEET_ACL, Broker, Built, Spy, launch

from mcpgen.runtime import MqttFleet

pytestmark = pytest.mark.asyncio

USERS = {"worker": "w-pass", "dev-a": "a-pass", "dev-b": "b-pass"}


async def test_acl_keeps_each_device_in_its_own_topics(tmp_path: Path, built: Built) -> None:
    broker = Broker(tmp_path, users=USERS, acl=FLEET_ACL, extra=("set_tcp_nodelay true",)).start()
    try:
        login = {"username": "worker", "password": "w-pass"}
        async with (
            MqttFleet("127.0.0.1", broker.port, worker_id="w1", **login) as fleet,
            Spy(broker.port, **login) as spy,
            launch(
                built.exe, broker.port, "dev-a", tmp_path, "--username", "dev-a", "--password", "a-pass"
            ) as sim,
        ):
            await sim.wait_log("server hello, session_id=")
            device = await fleet.device("dev-a")  # replies on mcpgen/dev-a/reply/w1: allowed
            assert await device.call("self.counter.add", {"amount": 2}) == 2

            # dev-b, logged in, tries to speak for dev-a: a forged reply, an up message
            # and a state; the broker refuses every one (nothing reaches any subscriber).
            import aiomqtt
            from paho.mqtt.packettypes import PacketTypes
            from paho.mqtt.properties import Properties

            async with aiomqtt.Client(
                "127.0.0.1",
                broker.port,
                username="dev-b",
                password="b-pass",
                protocol=aiomqtt.ProtocolVersion.V5,
            ) as evil:
                props = Properties(PacketTypes.PUBLISH)
                props.CorrelationData = b"\0" * 12
                forged = orjson.dumps({"jsonrpc": "2.0", "id": 99, "result": {}})
                fake_hello = b'{"type":"hello","features":{"mcp":true},"evil":1}'
                await evil.publish("mcpgen/dev-a/reply/w1", forged, qos=1, properties=props)
                await evil.publish("mcpgen/dev-a/up", fake_hello, qos=1)
                await evil.publish("mcpgen/dev-a/state", b"offline", qos=1, retain=True)
                # Its own topics work: the ACL is what stopped the others.
                await evil.publish("mcpgen/dev-b/state", b"online", qos=1, retain=True)
            await spy.wait(lambda m: m.topic == "mcpgen/dev-b/state")
            await asyncio.sleep(0.3)
            from_b = [m for m in spy.seen if m.payload in (forged, fake_hello, b"offline")]
            assert not from_b
            assert fleet.is_online("dev-a") is True and fleet.stray_replies == 0 and fleet.hellos == 1
            assert await device.call("self.counter.add", {"amount": 1}) == 3

        # A worker with a wrong password never gets in.
        with pytest.raises(aiomqtt.MqttError):
            await MqttFleet("127.0.0.1", broker.port, username="worker", password="nope").start()
    finally:
        broker.stop()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a test certificate")
async def test_tls_and_passwords_end_to_end(tmp_path: Path, built: Built) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", str(key),
         "-out", str(cert), "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    tls = (f"cafile {cert}", f"certfile {cert}", f"keyfile {key}", "set_tcp_nodelay true")
    broker = Broker(tmp_path, users=USERS, acl=FLEET_ACL, extra=tls).start()
    try:
        ctx = ssl.create_default_context(cafile=str(cert))
        creds = ("--username", "dev-a", "--password", "a-pass", "--cafile", str(cert))
        async with (
            MqttFleet(
                "127.0.0.1", broker.port, username="worker", password="w-pass", tls_context=ctx
            ) as fleet,
            launch(built.exe, broker.port, "dev-a", tmp_path, *creds) as sim,
        ):
            await sim.wait_log("server hello, session_id=")
            device = await fleet.device("dev-a")
            assert await device.call("self.counter.add", {"amount": 5}) == 5
            fast = fleet._broker._fast  # the fast path reads through TLS too (when enabled)
            assert (fast is not None) == fleet._broker.fast
            if fast is not None:
                assert fast.tls and fast.messages_in > 0
        # Plain MQTT (no --cafile: no TLS) is not served on the TLS listener.
        bad = ("--username", "dev-a", "--password", "a-pass", "--max-reconnects", "0")
        async with launch(built.exe, broker.port, "dev-a", tmp_path, *bad) as sim:
            assert await asyncio.wait_for(sim.proc.wait(), 10) == 1
    finally:
        broker.stop()

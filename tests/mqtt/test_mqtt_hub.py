"""The MQTT gateway on the shared session layer: MQTT 5 towards the broker, while a device
that speaks MQTT 3.1.1 and the stock xiaozhi hello (as the stock firmware's esp-mqtt
client does) is still served; a device that says hello again replaces its session."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, Optional

import orjson
import pytest
from mqtt_testlib import HOST, Broker

from mcpgen.runtime import DeviceDisconnected, DeviceHub, Gateway, MqttGateway

pytestmark = pytest.mark.slow

TOOL = {
    "name": "self.echo",
    "description": "Echoes its text",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


class StockDevice:
    """A device written as a plain MQTT 3.1.1 client: hello with ``transport: "udp"`` and
    no client id or token, then MCP envelopes answered on its up topic."""

    def __init__(self, port: int, device_id: str) -> None:
        self.port = port
        self.device_id = device_id
        self.session_ids: list[str] = []
        self.hellos: list[dict] = []
        self.goodbyes: list[dict] = []
        self._client: Any = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[StockDevice]:
        ready = asyncio.get_running_loop().create_future()
        task = asyncio.get_running_loop().create_task(self._serve(ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), 10)
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def say_hello(self) -> None:
        hello = {"type": "hello", "version": 1, "transport": "udp", "features": {"mcp": True}}
        await self._client.publish(f"mcpgen/{self.device_id}/up", orjson.dumps(hello), qos=1)

    async def _serve(self, ready: asyncio.Future) -> None:
        import aiomqtt

        up = f"mcpgen/{self.device_id}/up"
        async with aiomqtt.Client(
            HOST, self.port, identifier=f"stock-{self.device_id}", protocol=aiomqtt.ProtocolVersion.V311
        ) as client:
            self._client = client
            await client.subscribe(f"mcpgen/{self.device_id}/down", qos=1)
            ready.set_result(None)
            async for message in client.messages:
                await self._handle(client, up, message)

    async def _handle(self, client: Any, up: str, message: Any) -> None:
        msg = orjson.loads(message.payload)
        if msg.get("type") == "hello":
            self.hellos.append(msg)
            self.session_ids.append(msg["session_id"])
        elif msg.get("type") == "goodbye":
            self.goodbyes.append(msg)
        else:
            reply = self._answer(msg["payload"])
            if reply is not None:
                env = {"session_id": msg["session_id"], "type": "mcp", "payload": reply}
                # QoS 0: nothing to wait for, so cancelling this task at the end cannot
                # meet a PUBACK wait (Python 3.11's wait_for may swallow the cancel there).
                await client.publish(up, orjson.dumps(env), qos=0)

    def _answer(self, req: dict) -> Optional[dict]:
        if "id" not in req:
            return None
        method = req["method"]
        if method == "initialize":
            result: Any = {
                "protocolVersion": req["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stock", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            text = req["params"]["arguments"]["text"]
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            return {"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": method}}
        return {"jsonrpc": "2.0", "id": req["id"], "result": result}


async def test_mqtt5_gateway_serves_a_stock_mqtt311_device(broker: Broker) -> None:
    async with MqttGateway(HOST, broker.port, policy="off") as gw:
        assert isinstance(gw, DeviceHub) and not isinstance(gw, Gateway)
        stock = StockDevice(broker.port, "stock-1")
        async with stock.running():
            await stock.say_hello()
            device = await gw.wait_for_device("stock-1", timeout=10)
            assert await device.call("self.echo", {"text": "hi"}) == "hi"
            assert stock.hellos == [
                {"type": "hello", "transport": "mqtt", "session_id": device.session_id, "version": 3}
            ]
            # A second hello from the same device replaces the session: the old handle's
            # calls fail, the new one works, and the device is not told goodbye for a
            # session it already left.
            await stock.say_hello()
            for _ in range(100):
                if gw.connected.get("stock-1") not in (None, device):
                    break
                await asyncio.sleep(0.05)
            newer = await gw.wait_for_device("stock-1", timeout=10)
            assert newer is not device and device.closed
            assert "replaced by a new session" in device.close_reason
            with pytest.raises(DeviceDisconnected):
                await device.call("self.echo", {"text": "old"})
            assert await newer.call("self.echo", {"text": "new"}) == "new"
            assert stock.session_ids == [device.session_id, newer.session_id]
            assert stock.goodbyes == []
    log = broker.log()
    assert f"as {gw.client_id} (p5," in log, "the gateway speaks MQTT 5 to the broker"
    assert "as stock-stock-1 (p2," in log, "the device speaks MQTT 3.1.1"

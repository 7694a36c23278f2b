"""``/metrics``: parsed with prometheus_client's own parser, counters moving with what happens;
the console's HTTP rules (Host, Origin, token, bodies) with raw requests."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2 as httpx
from console_testlib import Fleet, fleet
from e2e_testlib import Built, launch_ws
from prometheus_client.parser import text_string_to_metric_families

from mcpgen.runtime.console import FleetMetrics

VOLUME = "self.audio_speaker.set_volume"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def scrape(client: httpx.AsyncClient) -> Samples:
    answer = await client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return parse(answer.text)


async def until(client: httpx.AsyncClient, name: str, want: float, **labels: str) -> Samples:
    for _ in range(400):
        samples = await scrape(client)
        if value(samples, name, **labels) == want:
            return samples
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name}{labels} never became {want}: {value(samples, name, **labels)}")


def client_for(f: Fleet, **headers: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{f.port}", headers={"Authorization": f"Bearer {f.token}", **headers}
    )


async def call(client: httpx.AsyncClient, tool: str, **arguments: object) -> httpx.Response:
    return await client.post("/api/call", json={"device": "speaker-1", "tool": tool, "arguments": arguments})


async def test_metrics_move_with_calls_sessions_events_and_refusals(
    built_default: Built, built_lamp: Built, tmp_path: Path
) -> None:
    async with (
        fleet(tmp_path, built_default.exe, built_default.spec.fingerprint) as f,
        client_for(f) as client,
    ):
        backend = FleetMetrics(process_metrics=False)  # what a backend would run on its gateway
        backend.watch_hub(f.gateway)
        f.console.metrics.start_loop_monitor(0.02)

        before = await scrape(client)
        assert value(before, "mcpgen_devices_connected", transport="stdio") == 1
        assert value(before, "mcpgen_sessions_total", transport="stdio") == 1
        assert value(before, "mcpgen_calls_total", tool=VOLUME, outcome="ok") == 0

        assert (await call(client, VOLUME, volume=10)).json()["outcome"] == "ok"
        assert (await call(client, VOLUME, volume=11)).json()["outcome"] == "ok"
        invalid = await call(client, VOLUME, volume=-1)
        assert invalid.status_code == 422 and invalid.json()["error"] == {
            "type": "ValidationError",
            "message": "volume: must be >= 0, got -1",
            "argument": "volume",
            "rule": "minimum",
        }
        failed = await call(client, "self.display.show_text", text="fail")
        assert failed.json()["outcome"] == "tool_error" and failed.json()["result"]["isError"] is True
        assert f.speaker_calls() == 3

        after = await scrape(client)
        assert value(after, "mcpgen_calls_total", tool=VOLUME, outcome="ok") == 2
        assert value(after, "mcpgen_calls_total", tool=VOLUME, outcome="invalid") == 1
        assert value(after, "mcpgen_calls_total", tool="self.display.show_text", outcome="tool_error") == 1
        # latency only for calls that reached the device
        assert value(after, "mcpgen_call_duration_seconds_count", tool=VOLUME) == 2
        assert value(after, "mcpgen_call_duration_seconds_bucket", tool=VOLUME, le="+Inf") == 2
        assert value(after, "mcpgen_call_duration_seconds_sum", tool=VOLUME) > 0
        # the monitor samples every 0.02 s; the calls above may all fit in less (Nagle is off)
        for _ in range(250):
            if value(after, "mcpgen_event_loop_lag_seconds_count") > 0:
                break
            await asyncio.sleep(0.02)
            after = await scrape(client)
        assert value(after, "mcpgen_event_loop_lag_seconds_count") > 0
        assert value(after, "process_open_fds") > 0

        # A WebSocket device: a session, its events, a reconnect under the same id.
        async with launch_ws(built_lamp.exe, f.ws_url, f.device_token, "lamp-1") as sim:
            await until(client, "mcpgen_devices_connected", 1, transport="websocket")
            lamp = await f.gateway.wait_for_device("lamp-1", timeout=10)
            async with backend.timing("self.button.press"):
                await lamp.call("self.button.press", {"count": 1})
            samples = await until(client, "mcpgen_events_total", 1, event="power_changed")
            assert value(samples, "mcpgen_events_total", event="button_pressed") == 1
            sim.kill()
            await until(client, "mcpgen_devices_connected", 0, transport="websocket")
        async with launch_ws(built_lamp.exe, f.ws_url, f.device_token, "lamp-1"):
            samples = await until(client, "mcpgen_sessions_total", 2, transport="websocket")
            assert value(samples, "mcpgen_reconnects_total", transport="websocket") == 1
            assert value(samples, "mcpgen_reconnects_total", transport="stdio") == 0
            # a device with a wrong token is refused at the handshake
            async with launch_ws(built_lamp.exe, f.ws_url, "wrong", "intruder", ("--max-reconnects", "0")):
                await until(client, "mcpgen_rejected_handshakes_total", 1, transport="websocket")

        # The backend's own metrics of the same gateway agree, and count its timed call.
        mine = parse(backend.render()[0].decode())
        assert value(mine, "mcpgen_sessions_total", transport="websocket") == 2
        assert value(mine, "mcpgen_reconnects_total", transport="websocket") == 1
        assert value(mine, "mcpgen_rejected_handshakes_total", transport="websocket") == 1
        assert value(mine, "mcpgen_calls_total", tool="self.button.press", outcome="ok") == 1
        assert value(mine, "mcpgen_events_total", event="button_pressed") == 1
        await backend.close()


async def test_http_rules_host_origin_token_and_bodies(built_default: Built, tmp_path: Path) -> None:
    async with fleet(tmp_path, built_default.exe, built_default.spec.fingerprint, body_timeout=0.5) as f:
        base = f"http://127.0.0.1:{f.port}"
        async with httpx.AsyncClient(base_url=base) as anon:
            assert (await anon.get("/api/state")).status_code == 401
            assert (await anon.get("/api/state", headers={"Authorization": "Bearer nope"})).status_code == 401
            assert (await anon.get("/metrics")).status_code == 401
            page = await anon.get("/")
            assert page.status_code == 401 and "Token needed" in page.text
            assert "content-security-policy" in page.headers
            assert (await anon.get("/console.js")).status_code == 200  # no secrets in the script
            login = await anon.get(f"/?token={f.token}")
            assert login.status_code == 303 and login.headers["location"] == "/"
            cookie = login.headers["set-cookie"]
            assert cookie.startswith(f"mcpgen-console-{f.port}=") and "HttpOnly" in cookie
            assert "SameSite=Strict" in cookie and f.token not in cookie
            assert (await anon.get("/api/state")).status_code == 200  # the cookie is kept by httpx

        async with client_for(f) as client:
            rebinding = await client.get("/api/state", headers={"Host": f"evil.example:{f.port}"})
            assert rebinding.status_code == 421
            other_port = await client.get("/api/state", headers={"Host": f"127.0.0.1:{f.port + 1}"})
            assert other_port.status_code == 421
            foreign = await client.get("/api/stream", headers={"Origin": "http://evil.example"})
            assert foreign.status_code == 403
            same = await client.get("/api/state", headers={"Origin": f"http://127.0.0.1:{f.port}"})
            assert same.status_code == 200
            body = json.dumps({"device": "speaker-1", "tool": VOLUME, "arguments": {"volume": 1}})
            plain = await client.post("/api/call", content=body, headers={"Content-Type": "text/plain"})
            assert plain.status_code == 415
            big = await client.post(
                "/api/call", content=b"x" * (65 * 1024), headers={"Content-Type": "application/json"}
            )
            assert big.status_code == 413
            dup = '{"device": "speaker-1", "tool": "x", "tool": "' + VOLUME + '", "arguments": {"volume": 1}}'
            duplicate = await client.post(
                "/api/call", content=dup, headers={"Content-Type": "application/json"}
            )
            assert duplicate.status_code == 400 and "duplicate key" in duplicate.json()["error"]["message"]
            unknown = await client.post(
                "/api/call", json={"device": "nobody", "tool": VOLUME, "arguments": {}}
            )
            assert unknown.status_code == 404
            hidden = await client.post("/api/call", json={"device": "speaker-1", "tool": "self.reboot"})
            assert hidden.status_code == 403 and "--user-tools" in hidden.json()["error"]["message"]
            assert (await client.put("/api/call")).status_code == 405
            assert f.speaker_calls() == 0, "no refused request reached the device"

        # A body that does not arrive in time: 408 and the connection closes.
        reader, writer = await asyncio.open_connection("127.0.0.1", f.port)
        writer.write(
            f"POST /api/call HTTP/1.1\r\nHost: 127.0.0.1:{f.port}\r\nAuthorization: Bearer {f.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode()
        )
        await writer.drain()
        head = await asyncio.wait_for(reader.readline(), 10)
        assert head.startswith(b"HTTP/1.1 408")
        writer.close()


async def test_user_only_tools_only_with_the_flag(built_default: Built, tmp_path: Path) -> None:
    async with fleet(tmp_path, built_default.exe, built_default.spec.fingerprint, user_tools=True) as f:
        async with client_for(f) as client:
            detail = (await client.get("/api/device", params={"id": "speaker-1"})).json()
            names = [t["name"] for t in detail["toolList"]]
            assert "self.reboot" in names and detail["hiddenTools"] == 0
            assert [t["userOnly"] for t in detail["toolList"] if t["name"] == "self.reboot"] == [True]
            check = await client.post(
                "/api/check", json={"device": "speaker-1", "tool": "self.counter.add", "arguments": {}}
            )
            assert check.json() == {"ok": True, "arguments": {"amount": 1}}  # the default filled in

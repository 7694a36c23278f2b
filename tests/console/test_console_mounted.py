"""The console's Starlette routes, mounted in a backend's own Starlette app at a path:
routes below the mount point, the shared guard's refusals (the console's JSON format,
counted, with the security headers) and the shared body reader's bound."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2 as httpx
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpgen.runtime.bridge.core import Bridge
from mcpgen.runtime.bridge.http import StreamableHttpApp
from mcpgen.runtime.bridge.web import AccessGuard
from mcpgen.runtime.console import Console, ConsoleApp, Guard
from mcpgen.runtime.console.app import MAX_BODY

TOKEN = "s3cret"


async def _chunks(count: int) -> AsyncIterator[bytes]:
    for _ in range(count // 1024 + 1):
        yield b"x" * 1024


def _client(app: ConsoleApp) -> httpx.AsyncClient:
    backend = Starlette(routes=[Mount("/console", app=app)])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=backend), base_url="http://localhost")


async def test_the_console_mounted_in_starlette_routes_below_its_mount_point() -> None:
    console = Console()
    app = ConsoleApp(console, Guard(token=TOKEN))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with _client(app) as client:
        r = await client.get("/console/")  # the page: the login form without the token
        assert r.status_code == 401 and r.headers["content-type"].startswith("text/html")
        r = await client.get("/console/", params={"token": TOKEN})
        assert r.status_code == 303 and r.headers["location"] == "/console/"
        assert "Path=/console/; HttpOnly; SameSite=Strict" in r.headers["set-cookie"]
        r = await client.get("/console/api/state")  # the login cookie counts as the token
        assert r.status_code == 200
        client.cookies.clear()
        r = await client.get("/console/console.js")  # the page's files need no token
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
        r = await client.get("/console/api/state")
        assert r.status_code == 401 and r.json()["error"]["type"] == "HttpError"
        assert r.headers["www-authenticate"] == "Bearer"
        r = await client.get("/console/api/state", headers=auth)
        assert r.status_code == 200 and r.json()["devices"] == []
        assert "default-src 'none'" in r.headers["content-security-policy"]
        r = await client.put("/console/api/call", headers=auth)
        assert r.status_code == 405 and r.json()["error"]["type"] == "HttpError"
        assert "POST" in r.headers["allow"] and r.headers["x-frame-options"] == "DENY"
        r = await client.get("/console/api/nothing", headers=auth)
        assert r.status_code == 404 and r.json()["error"]["message"] == "Not Found: /api/nothing"
        r = await client.get("/console/api/device", headers=auth)
        assert r.status_code == 400 and "needs ?id=" in r.json()["error"]["message"]
        r = await client.get("/console/api/state", headers={**auth, "Host": "evil.example"})
        assert r.status_code == 421 and "'evil.example' is not this console" in r.json()["error"]["message"]
        r = await client.post(
            "/console/api/call",
            headers={**auth, "Content-Type": "application/json"},
            content=_chunks(MAX_BODY + 1),  # chunked: no Content-Length to refuse early
        )
        assert r.status_code == 413 and r.headers["connection"] == "close"
    counted = {
        sample.labels["status"]: sample.value
        for metric in console.metrics.registry.collect()
        for sample in metric.samples
        if sample.name == "mcpgen_http_refused_requests_total"
    }
    assert counted == {"401": 1.0, "405": 1.0, "404": 1.0, "400": 1.0, "421": 1.0, "413": 1.0}


def test_the_bridge_and_the_console_share_one_guard() -> None:
    bridge_app = StreamableHttpApp(Bridge(), client_token=TOKEN)
    console_app = ConsoleApp(Console(), Guard(token=TOKEN))
    assert isinstance(bridge_app.guard, AccessGuard) and isinstance(console_app.guard, AccessGuard)
    assert not bridge_app.guard.cookies and console_app.guard.cookies  # the login cookie is the console's

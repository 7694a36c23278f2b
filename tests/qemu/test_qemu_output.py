"""A QEMU run prints arguments and results as JSON, the way a host run does (it printed
Python reprs: ``{'on': True}``, ``None``)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen.codegen.resources import example_spec
from mcpgen.codegen.run import console, run_qemu
from mcpgen.codegen.spec.examples import example_arguments
from mcpgen.codegen.spec.loader import load_spec


class FakeDevice:
    server_info = {"name": "desk-lamp"}
    protocol_version = "2024-11-05"
    fingerprint = "0" * 16
    tools: list[Any] = []

    async def call(self, name: str, args: dict, timeout: float = 10.0, human: Any = None) -> Any:
        return {"on": True, "rgb": [1, 2, 3], "name": "lamp"} if name.endswith("get_state") else None

    async def close(self) -> None:
        pass


async def test_qemu_session_prints_json_like_a_host_run(monkeypatch: pytest.MonkeyPatch) -> None:
    async def connect(url: str, **_: Any) -> FakeDevice:
        return FakeDevice()

    monkeypatch.setattr("mcpgen.runtime.connect_serial", connect)
    spec = load_spec(example_spec("desk_lamp"))
    lines: list[str] = []

    class Dev:
        url = "socket://127.0.0.1:1"

    assert await run_qemu._session(Dev(), spec, lines.append) == 0  # type: ignore[arg-type]
    text = "\n".join(lines)
    assert 'call self.light.get_state({}) -> {"on": true, "rgb": [1, 2, 3], "name": "lamp"}' in text
    assert "-> null" in text and "True" not in text and "None" not in text
    rgb = next(t for t in spec.tools if t.name == "self.light.set_rgb")
    assert f"call self.light.set_rgb({console._show(example_arguments(rgb))}) -> null" in text

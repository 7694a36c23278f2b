"""Fixtures of the runtime tests: a gateway, fake devices, the compiled/pure check."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

from runtime_fakes import FakeWsDevice  # noqa: E402

from mcpgen import runtime  # noqa: E402
from mcpgen.runtime import Gateway, TokenAuth  # noqa: E402


@pytest.fixture(autouse=True)
def _build_under_test_is_the_claimed_one() -> Iterator[None]:
    """With MCPGEN_EXPECT_COMPILED set, the suite must run on that build of the hot path."""
    expect = os.environ.get("MCPGEN_EXPECT_COMPILED")
    if expect is not None:
        assert runtime.COMPILED == (expect == "1"), f"runtime.COMPILED={runtime.COMPILED}, expected {expect}"
    yield


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    async with Gateway(port=0, auth=TokenAuth({"*": "secret"}), call_timeout=5.0) as gw:
        yield gw


@pytest.fixture
def ws_url(gateway: Gateway) -> str:
    return f"ws://127.0.0.1:{gateway.port}/xiaozhi/v1/"


@pytest.fixture
async def fake_devices() -> AsyncIterator[list[FakeWsDevice]]:
    """Fake devices appended here are closed after the test."""
    started: list[FakeWsDevice] = []
    yield started
    for d in started:
        await d.close()

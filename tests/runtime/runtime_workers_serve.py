"""The backend code the SO_REUSEPORT worker test runs in each worker process."""

from __future__ import annotations

from mcpgen.runtime import Gateway


async def tag_devices(gw: Gateway) -> None:
    """Adds (worker index + 1) to each device's counter: the device learns who served it."""
    index = getattr(gw, "worker_index", 0)
    async for device in gw.devices():
        await device.call("self.counter.add", {"amount": index + 1})

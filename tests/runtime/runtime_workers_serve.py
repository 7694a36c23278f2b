"""The backend code the SO_REUSEPORT worker test runs in each worker process."""

from __future__ import annotations

from mcpgen.runtime import Gateway


async def tag_devices(gw: Gateway) -> None:
    """Adds (worker index + 1) to each device's counter: the device learns who served it."""
    index = getattr(gw, "worker_index", 0)
    async for device in gw.devices():
        await device.call("self.counter.add", {"amount": index + 1})


async def tag_allocator(gw: Gateway) -> None:
    """Adds 1 to each device's counter when this worker runs on CPython's small-object
    allocator, 2 when it runs on malloc (``PYTHONMALLOC=malloc``: no pymalloc blocks)."""
    import sys

    amount = 2 if sys.getallocatedblocks() == 0 else 1
    async for device in gw.devices():
        await device.call("self.counter.add", {"amount": amount})

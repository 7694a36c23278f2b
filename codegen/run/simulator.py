"""Launching the host simulator (``codegen.targets.host``) as a WebSocket device."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import IO, Union

Output = Union[int, IO[bytes]]


async def launch_simulator(
    exe: Path,
    url: str,
    token: str,
    device_id: str,
    *extra: str,
    output: Output = asyncio.subprocess.DEVNULL,
) -> asyncio.subprocess.Process:
    """Starts ``exe --ws URL --device-id ID [extra...]`` with ``token`` in its environment
    (``MCPGEN_BACKEND_TOKEN``: on its command line every local user could read it).

    Its stdin is closed; its stdout and stderr both go to ``output`` (a file opened for
    binary writing, or one of the ``asyncio.subprocess`` constants; discarded by default).
    """
    return await asyncio.create_subprocess_exec(
        str(exe),
        "--ws",
        url,
        "--device-id",
        device_id,
        *extra,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=output,
        stderr=output,
        env={**os.environ, "MCPGEN_BACKEND_TOKEN": token},
    )

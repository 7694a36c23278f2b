"""Raising the process's open-file limit (``RLIMIT_NOFILE``) for a server.

Every connected device holds one file descriptor, and the soft limit a service starts
with is often 1024 while the hard limit allows far more: servers raise the soft limit to
the hard one at start, and so does the gateway (once per process, logged).
"""

from __future__ import annotations

import logging
from typing import Optional

log = logging.getLogger("mcpgen.runtime.links.websocket.gateway")

_raised: Optional[int] = None


def raise_nofile_limit() -> Optional[int]:
    """Raises the soft ``RLIMIT_NOFILE`` to the hard limit; returns the soft limit now in
    force (None where the platform has no such limit)."""
    global _raised
    try:
        import resource
    except ImportError:  # not on this platform (Windows)
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if _raised is not None and soft >= _raised:
        return soft
    target = hard
    if target == resource.RLIM_INFINITY or target > 1 << 20:
        target = 1 << 20  # an "unlimited" hard limit still has the kernel's nr_open cap
    if target > soft and soft != resource.RLIM_INFINITY:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            log.info("open-file limit (RLIMIT_NOFILE) raised from %d to %d", soft, target)
            soft = target
        except (ValueError, OSError) as exc:
            log.warning(
                "could not raise the open-file limit (RLIMIT_NOFILE) from %d to %d: %s", soft, target, exc
            )
    _raised = soft
    return None if soft == resource.RLIM_INFINITY else soft

"""``Log``: how the generator's steps report progress (one line of text a call).

Every step that builds, flashes, boots or checks takes one; the CLI passes its printer,
tests a list's ``append``.
"""

from __future__ import annotations

from collections.abc import Callable

Log = Callable[[str], None]

__all__ = ["Log"]

"""``python -m mcpgen ...`` is the ``codegen`` command."""

from __future__ import annotations

import sys

from mcpgen.codegen.cli import main

if __name__ == "__main__":
    sys.exit(main())

"""``python -m mcpgen.runtime.console ...``: the same as ``codegen console ...``."""

import sys

from .cli import main

sys.exit(main())

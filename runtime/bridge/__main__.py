"""``python -m mcpgen.runtime.bridge ...``: the same as ``codegen bridge ...``."""

import sys

from .cli import main

sys.exit(main())

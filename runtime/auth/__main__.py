"""``python -m mcpgen.runtime.auth DEVICE_ID [--expires-in SECONDS]``: print an HmacAuth token.

Why a package with this ``__main__``: the package ``mcpgen.runtime`` imports the auth module
before ``-m`` runs it, so a plain ``auth.py`` was executed a second time as ``__main__`` (a
second copy of every class) and runpy warned about it on every run. This entry point only
imports the module, once.
"""

import sys

from mcpgen.runtime.auth import main

sys.exit(main())

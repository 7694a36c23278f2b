"""The one version number of mcpgen and mcpgen-runtime (they are released together).

pyproject.toml reads it (``[tool.setuptools.dynamic]``) and scripts/dist.py writes it
into both release distributions; CHANGELOG.md says what changed in each.
"""

__version__ = "0.2.0"

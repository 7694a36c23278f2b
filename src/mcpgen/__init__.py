"""mcpgen: one YAML spec, both ends of MCP on ESP32 devices.

Two distributions share this import package: ``mcpgen-runtime`` installs this file,
``mcpgen.protocol`` and ``mcpgen.runtime`` (the backend runtime, which never imports the
generator); ``mcpgen`` installs ``mcpgen.codegen`` (the generator and its ``codegen``
command) with the firmware sources and example specs as data beside it (see
:mod:`mcpgen.codegen.resources`). Both are usually in one site-packages; ``extend_path``
also finds the parts when they are installed on different ``sys.path`` entries.
"""

from __future__ import annotations

from pkgutil import extend_path

from mcpgen._version import __version__ as __version__

__path__ = extend_path(__path__, __name__)

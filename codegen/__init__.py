"""codegen: one YAML spec -> device C++ and backend Python for MCP tools on ESP32."""

from mcpgen import __version__ as __version__

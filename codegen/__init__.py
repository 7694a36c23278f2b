"""codegen: one YAML spec -> device C++ and backend Python for MCP tools on ESP32."""

__version__ = "0.1.0"

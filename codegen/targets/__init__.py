"""Build targets: each turns the spec model into something that runs (a simulator, a
QEMU image, an ESP32 project, xiaozhi glue, Python bindings).

Imports ``spec`` and ``emit``; never ``run`` or the CLI.
"""

"""codegen: one YAML spec -> device C++ and backend Python for MCP tools on ESP32.

``spec`` reads and checks the YAML into the immutable model; ``emit`` turns the model
into files; ``targets`` builds them into something that runs (one ``Target`` per
``--target``, in ``targets.registry``); ``run`` boots and talks to what was built;
``cli`` is the ``codegen`` command. docs/architecture.md shows the tree.
"""

from mcpgen import __version__ as __version__

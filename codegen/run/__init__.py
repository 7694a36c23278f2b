"""Running what a target built: the simulator, QEMU, flashing, the serial monitor, the
interactive device session and the demo. Imports ``spec``, ``emit`` and ``targets``.
"""

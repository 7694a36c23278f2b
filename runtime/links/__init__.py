"""The front doors: how devices reach the backend.

``hub`` is what every device-facing server does (accept, set up, hand out ``Device``
handles); each transport is a folder (``websocket/``, ``mqtt/``) or, for the line-based
ones (a simulator's stdio, a serial port), ``transports``. ``workers`` runs a front door on
several cores; ``memtrim`` and ``fdlimit`` keep a long-lived server's process in shape.
A new transport goes here, as a folder beside ``websocket/`` and ``mqtt/`` (CONTRIBUTING.md).
"""

"""A web console for a fleet of devices, and Prometheus metrics (docs/console.md).

* :class:`Console`: the devices shown, calls validated by the runtime's validator before
  they are sent, call history, events, and a live feed of every change.
* :class:`ConsoleApp`: the page and its API as an ASGI app, guarded like the MCP bridge
  (Host, Origin, token, body limits); mount it in a backend or run :func:`serve_console`.
* :class:`FleetMetrics`: ``prometheus_client`` metrics of devices, sessions, calls,
  events, refused handshakes and event-loop lag, for the console, a ``Gateway``, an
  ``MqttGateway`` or an ``MqttFleet`` worker.

``codegen console`` (:mod:`.cli`) attaches devices as ``codegen bridge`` does.
Needs the ``console`` extra (``pip install 'mcpgen[console]'``).
"""

from mcpgen.extras import missing_extra

try:  # prometheus_client and the bridge's HTTP stack: the `console` extra
    from .app import ConsoleApp
    from .console import Console, ConsoleError
    from .guard import Guard
    from .metrics import FleetMetrics, outcome_of
    from .server import serve_console
except ModuleNotFoundError as exc:
    raise missing_extra(exc, "the web console", extra="console") from None

__all__ = ["Console", "ConsoleApp", "ConsoleError", "FleetMetrics", "Guard", "outcome_of", "serve_console"]

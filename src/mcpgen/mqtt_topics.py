"""The MQTT topic names of an mcpgen fleet (docs/mqtt.md): one home for the runtime, the
bridge, the benchmarks and the tests.

Every device has three topics, ``<prefix>/<device_id>/<leaf>``: it publishes its hello,
replies and notifications to ``up``, reads the backend's hello, requests and goodbye on
``down``, and keeps ``state`` = ``online`` (retained) while connected, ``offline``
(retained, its Last Will) after. The device ports hold the same names in the core's
``mcpgen/mqtt_conventions.h``; tests/spec/test_protocol_constants.py compares them.
"""

from __future__ import annotations

#: The topic prefix when none is given (devices: ``--topic-prefix``, Kconfig).
DEFAULT_PREFIX = "mcpgen"
#: Device -> backend: hello, replies, notifications.
UP = "up"
#: Backend -> device: hello, requests, goodbye.
DOWN = "down"
#: Device -> one fleet worker: replies to that worker's calls, under ``REPLY/<worker_id>``
#: (the MQTT 5 Response Topic the worker names; see :func:`reply_leaf`).
REPLY = "reply"
#: Retained presence: :data:`ONLINE` or :data:`OFFLINE`.
STATE = "state"
ONLINE = b"online"
OFFLINE = b"offline"
#: The shared-subscription group fleet workers share device hellos in.
DEFAULT_WORKER_GROUP = "mcpgen-workers"

_NOT_IN_A_LEVEL = frozenset("/+#")


def device_topic(prefix: str, device_id: str, leaf: str) -> str:
    """``<prefix>/<device_id>/<leaf>`` (leaf: :data:`UP`, :data:`DOWN`, :data:`STATE`)."""
    return f"{prefix}/{device_id}/{leaf}"


def reply_leaf(worker_id: str) -> str:
    """The leaf under a device's topic where it answers the worker ``worker_id``."""
    return f"{REPLY}/{worker_id}"


def is_topic_level(value: str) -> bool:
    """True when ``value`` is one non-empty topic level (no ``/``, ``+`` or ``#``): what a
    device id, a worker id and a shared-subscription group must be."""
    return bool(value) and _NOT_IN_A_LEVEL.isdisjoint(value)


__all__ = [
    "DEFAULT_PREFIX",
    "DEFAULT_WORKER_GROUP",
    "DOWN",
    "OFFLINE",
    "ONLINE",
    "REPLY",
    "STATE",
    "UP",
    "device_topic",
    "is_topic_level",
    "reply_leaf",
]

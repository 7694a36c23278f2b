"""Exported tool names: what an MCP client sees, and the way back to (device, tool).

Device tool names such as ``self.audio_speaker.set_volume`` are valid MCP names but not
valid function names for most LLM APIs, which accept only ``^[a-zA-Z0-9_-]{1,64}$``.
The bridge therefore exports *safe* names by default:

* ``.`` becomes ``__`` (the rule of ``mcpgen.llm_names``, which ``runtime.session.llm.NameMap``
  and the spec checker follow too); a name that would not map back that way is sanitized
  and hashed;
* with per-device prefixes the name is ``<device prefix>__<tool>``, where the device
  prefix never contains ``__`` so the first ``__`` always ends it;
* a name longer than 64 characters is cut and given an 8-hex-digit hash of the original
  (device id, tool name), and a collision between two sanitized names is resolved the
  same way, so names are deterministic for a given set of devices and tools.

The mapping is reversible through :class:`ToolNameMap` (exported name -> device id and
original tool name); the bridge also states the original names in each exported tool's
``_meta``.

Device resource URIs follow the same ``prefix`` rule (``device_resources.py``): as the
device gave them without it, ``mcpgen://devices/<id>/<uri>`` with it, and a URI two
devices share without a prefix is served plainly for one and prefixed for the other, as
a colliding name gets a hash here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from mcpgen.llm_names import MAX_LLM_NAME as MAX_NAME
from mcpgen.llm_names import safe_llm_name


def device_prefix(device_id: str) -> str:
    """A device id as a name prefix: ``aa:bb:cc:dd:ee:ff`` -> ``aa_bb_cc_dd_ee_ff``.

    Runs of anything but letters, digits and ``-`` collapse to one ``_`` so the prefix never
    contains ``__`` (the prefix separator).
    """
    slug = re.sub(r"[^A-Za-z0-9-]+", "_", device_id).strip("_")
    return slug or "device"


def safe_tool_name(tool_name: str) -> str:
    """``self.audio_speaker.set_volume`` -> ``self__audio_speaker__set_volume``.

    When that simple form is not valid or would not map back (``__`` already in the
    name, other characters, too long), the name is sanitized, cut and given ``_`` and 8
    hex digits of the SHA-256 of the original (:func:`mcpgen.llm_names.safe_llm_name`).
    """
    return safe_llm_name(tool_name)


def _hash8(device_id: str, tool_name: str) -> str:
    return hashlib.sha256(f"{device_id}\0{tool_name}".encode()).hexdigest()[:8]


def _shorten(name: str, device_id: str, tool_name: str) -> str:
    suffix = "_" + _hash8(device_id, tool_name)
    return name[: MAX_NAME - len(suffix)] + suffix


@dataclass(frozen=True)
class ToolKey:
    """Where an exported tool lives: the device and the tool's name on that device."""

    device_id: str
    tool_name: str


class ToolNameMap:
    """A reversible mapping between exported names and (device id, device tool name).

    Build it from every (device id, tool name) pair at once; the result depends only on
    that set, not on the order devices connected in.
    """

    def __init__(self, keys: Iterable[ToolKey], *, prefix: bool, safe: bool = True) -> None:
        self.prefix = prefix
        self.safe = safe
        self._to_key: dict[str, ToolKey] = {}
        self._to_name: dict[ToolKey, str] = {}
        for key in sorted(set(keys), key=lambda k: (k.device_id, k.tool_name)):
            name = self._candidate(key)
            if name in self._to_key:
                name = _shorten(name, key.device_id, key.tool_name)
            self._to_key[name] = key
            self._to_name[key] = name

    def _candidate(self, key: ToolKey) -> str:
        base = safe_tool_name(key.tool_name) if self.safe else key.tool_name
        name = f"{device_prefix(key.device_id)}__{base}" if self.prefix else base
        if self.safe and len(name) > MAX_NAME:
            name = _shorten(name, key.device_id, key.tool_name)
        return name

    def exported(self, key: ToolKey) -> str:
        """The exported name of a device tool (KeyError if it is not in the map)."""
        return self._to_name[key]

    def resolve(self, exported_name: str) -> ToolKey | None:
        """The device tool behind an exported name, or None."""
        return self._to_key.get(exported_name)

    def items(self) -> list[tuple[str, ToolKey]]:
        return list(self._to_key.items())

    def __len__(self) -> int:
        return len(self._to_key)

    def __contains__(self, exported_name: object) -> bool:
        return exported_name in self._to_key

"""The whole document: ``device``, ``tools`` and ``events``; builds the immutable model.

The model objects are built only from the parts that validated; the ``Spec`` itself is
returned only when there are no errors at all.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Optional

import yaml

from mcpgen.codegen.spec.model import (
    DEFAULT_PAGE_SIZE,
    DEFAULT_PROTOCOL_VERSION,
    DEFAULT_RESPONSE_BUFFER,
    ERROR_STYLES,
    DeviceSpec,
    ErrorStyle,
    OtaSigning,
    Spec,
)
from mcpgen.codegen.spec.ota import OTA_TOOL_NAME, ota_tool
from mcpgen.codegen.spec.ota_keys import KeyProblem, read_public_key
from mcpgen.codegen.spec.rules.base import (
    BAD,
)
from mcpgen.codegen.spec.rules.cross import CrossToolRules
from mcpgen.codegen.spec.rules.events import check_events
from mcpgen.codegen.spec.rules.firmware import check_firmware
from mcpgen.codegen.spec.rules.names import (
    device_name_problem,
)
from mcpgen.codegen.spec.rules.prompts import check_prompts
from mcpgen.codegen.spec.rules.resources import MAX_SIZE_LIMIT, MIN_RESPONSE_BUFFER, check_resources
from mcpgen.codegen.spec.rules.tables import (
    DEVICE_KEYS,
    DEVICE_REQUIRED,
    PROTOCOL_VERSIONS,
    TOP_KEYS,
    TOP_REQUIRED,
)
from mcpgen.codegen.spec.rules.tools import ToolEntry, ToolRules
from mcpgen.codegen.spec.rules.types import check_types, collect_type_names
from mcpgen.codegen.spec.yaml_source import (
    describe,
)

#: ESP-IDF's secure_version is counted in a 32-bit eFuse field on the ESP32.
MAX_SECURE_VERSION = 32


class SpecChecker(ToolRules, CrossToolRules):
    """Checks one spec document: ``check(root)`` returns the model, or None with ``errors`` set."""

    ota_signing: Optional[OtaSigning] = None  # set by device() from `device.ota: {public_key: ...}`

    # -- the document ----------------------------------------------------------------------

    def check(self, root: Optional[yaml.Node]) -> Optional[Spec]:
        if root is None:
            self.error(
                None,
                "",
                "the spec is empty; expected a mapping with `device` and `tools`",
                "run `codegen new NAME` for a starter spec",
            )
            return None
        top = self.mapping(
            root, "", allowed=TOP_KEYS, required=TOP_REQUIRED, what="a mapping with `device` and `tools`"
        )
        if top is None:
            return None
        device = self.device(top["device"][1]) if "device" in top else None
        self.type_names = collect_type_names(self, top["types"][1]) if "types" in top else {}
        types = check_types(self, top["types"][1]) if "types" in top else ()
        infos: list[ToolEntry] = []
        if "tools" in top:
            tools_node = top["tools"][1]
            items = self.sequence(tools_node, "tools", "a list of tools")
            if items is not None and not items:
                self.error(tools_node, "tools", "expected at least one tool")
            for i, item in enumerate(items or []):
                infos.append(self.tool(item, i))
        if device is not None and device.ota:
            self.check_ota_name(infos)
        self.cross_check(infos)
        if self.page_size is not None:
            self.check_page_size(self.page_size, infos, types)
        events = check_events(self, top["events"][1], infos) if "events" in top else ()
        resources = check_resources(self, top["resources"][1], infos) if "resources" in top else ()
        if "resources" not in top:
            self.check_embedded_resources(infos)
        firmware = check_firmware(self, top["firmware"][1]) if "firmware" in top else ()
        prompts = check_prompts(self, top["prompts"][1], infos, resources) if "prompts" in top else ()
        if self.errors or device is None or any(i.model is None for i in infos):
            return None
        return Spec(
            device=device,
            # device.ota adds the port's update tool after the declared ones.
            tools=tuple(i.model for i in infos if i.model is not None)
            + ((ota_tool(),) if device.ota else ()),
            source=self.file,
            events=events,
            resources=resources,
            firmware=firmware,
            ota_signing=self.ota_signing,
            prompts=prompts,
            types=types,
        )

    def check_embedded_resources(self, infos: list[ToolEntry]) -> None:
        """A tool that returns an embedded resource needs the spec's `resources:` to embed."""
        for info in infos:
            returns = info.model.returns if info.model is not None else None
            if returns is None or not (returns.kind == "resource" or "resource" in returns.items):
                continue
            node: Optional[yaml.Node] = info.node
            if isinstance(info.node, yaml.MappingNode):
                found = (v for k, v in info.node.value if getattr(k, "value", None) == "returns")
                node = next(found, info.node)
            self.error(
                node,
                f"tools[{info.index}].returns",
                "an embedded resource is one of the device's resources, and the spec declares none",
                "declare it in a top-level `resources:` section (docs: toolspec/README.md, Resources)",
            )

    def check_ota_name(self, infos: list[ToolEntry]) -> None:
        """``device.ota`` adds ``self.upgrade_firmware``: a declared tool of that name clashes."""
        for info in infos:
            if info.name == OTA_TOOL_NAME:
                self.error(
                    info.name_node or info.node,
                    f"tools[{info.index}].name",
                    f"`{OTA_TOOL_NAME}` is the built-in OTA tool that `device.ota: true` adds",
                    "rename this tool, or drop `ota: true` and implement updates yourself",
                )

    def ota_mapping(self, node: yaml.MappingNode) -> Any:
        """``device.ota: {public_key: PATH, secure_version: N}``: the :class:`OtaSigning`, or BAD."""
        m = self.mapping(
            node,
            "device.ota",
            allowed=("public_key", "secure_version"),
            required=("public_key",),
            what="true, false or a mapping with `public_key`",
        )
        if m is None:
            return BAD
        secure_version = 0
        if "secure_version" in m:
            v = self.integer(m["secure_version"][1], "device.ota.secure_version")
            if v is not BAD and not 0 <= v <= MAX_SECURE_VERSION:
                self.error(
                    m["secure_version"][1],
                    "device.ota.secure_version",
                    f"expected 0 to {MAX_SECURE_VERSION}, got {v}",
                    "ESP-IDF counts it in a 32-bit eFuse field on the ESP32; raise it by one per "
                    "release that must not be rolled back to",
                )
                v = BAD
            if v is BAD:
                return BAD
            secure_version = v
        if "public_key" not in m:
            return BAD
        knode = m["public_key"][1]
        path = self.string(knode, "device.ota.public_key")
        if path is BAD:
            return BAD
        key_file = Path(path) if Path(path).is_absolute() else Path(self.file).parent / path
        try:
            key = read_public_key(key_file)
        except KeyProblem as exc:
            self.error(
                knode,
                "device.ota.public_key",
                str(exc),
                "generate a key pair with `espsecure generate_signing_key --version 1 KEY.pem`, then "
                "`espsecure extract_public_key --version 1 --keyfile KEY.pem PUBLIC.bin`, and name "
                'PUBLIC.bin here (docs/ota.md, "Signed images")',
            )
            return BAD
        return OtaSigning(public_key=key, key_path=path, secure_version=secure_version)

    def device(self, node: yaml.Node) -> Optional[DeviceSpec]:
        m = self.mapping(node, "device", allowed=DEVICE_KEYS, required=DEVICE_REQUIRED)
        if m is None:
            return None
        ok = True
        name: Any = BAD
        if "name" in m:
            name = self.string(m["name"][1], "device.name")
            if name is not BAD:
                problem = device_name_problem(name)
                if problem:
                    self.error(m["name"][1], "device.name", problem[0], problem[1])
                    name = BAD
        version: Any = BAD
        if "version" in m:
            vnode = m["version"][1]
            raw = self.scalar(vnode, "device.version", "a version string")
            if raw is not BAD:
                if isinstance(raw, str) and raw.strip():
                    version = raw
                elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
                    version = vnode.value  # as written: `1.10` stays "1.10", not "1.1"
                else:
                    self.error(
                        vnode,
                        "device.version",
                        f"expected a version string, got {describe(raw)}",
                        'write it like "1.0.0"',
                    )
        description = ""
        if "description" in m:
            d = self.string(m["description"][1], "device.description", nonempty=False)
            ok &= d is not BAD
            description = d if d is not BAD else ""
        page_size = DEFAULT_PAGE_SIZE
        if "page_size" in m:
            p = self.integer(m["page_size"][1], "device.page_size", "an integer number of bytes")
            if p is not BAD and p < 1:
                self.error(
                    m["page_size"][1],
                    "device.page_size",
                    f"expected a positive integer, got {p}",
                    f"the xiaozhi default is {DEFAULT_PAGE_SIZE}",
                )
                p = BAD
            ok &= p is not BAD
            page_size = p if p is not BAD else DEFAULT_PAGE_SIZE
            self.page_size = p if p is not BAD else None
        else:
            self.page_size = page_size
        protocol_version = DEFAULT_PROTOCOL_VERSION
        if "protocol_version" in m:
            pv = self.choice(
                m["protocol_version"][1],
                "device.protocol_version",
                PROTOCOL_VERSIONS,
                "an MCP protocol version",
            )
            ok &= pv is not BAD
            protocol_version = pv if pv is not BAD else DEFAULT_PROTOCOL_VERSION
        errors: ErrorStyle = "mcp"
        if "errors" in m:
            es = self.choice(m["errors"][1], "device.errors", ERROR_STYLES, "an error style")
            ok &= es is not BAD
            errors = es if es is not BAD else "mcp"
        response_buffer = DEFAULT_RESPONSE_BUFFER
        if "response_buffer" in m:
            rb = self.integer(m["response_buffer"][1], "device.response_buffer", "an integer number of bytes")
            if rb is not BAD and not MIN_RESPONSE_BUFFER <= rb <= MAX_SIZE_LIMIT:
                self.error(
                    m["response_buffer"][1],
                    "device.response_buffer",
                    f"expected {MIN_RESPONSE_BUFFER} to {MAX_SIZE_LIMIT} bytes, got {rb}",
                    "the MCPGEN_RESPONSE_BUFFER_SIZE the firmware is built with "
                    f"(the core's default is {DEFAULT_RESPONSE_BUFFER})",
                )
                rb = BAD
            ok &= rb is not BAD
            response_buffer = rb if rb is not BAD else DEFAULT_RESPONSE_BUFFER
            self.response_buffer = rb if rb is not BAD else None
        else:
            self.response_buffer = response_buffer
        ota = False
        self.ota_signing = None
        if "ota" in m:
            onode = m["ota"][1]
            if isinstance(onode, yaml.MappingNode):  # signed images only (codegen.spec.ota_keys)
                signing = self.ota_mapping(onode)
                ok &= signing is not BAD
                ota = True
                self.ota_signing = signing if signing is not BAD else None
            else:
                before = len(self.errors)
                o = self.boolean(onode, "device.ota")
                ok &= o is not BAD
                ota = o is True
                if o is BAD and len(self.errors) > before:  # say that a mapping is the other form
                    e = self.errors[-1]
                    self.errors[-1] = dataclasses.replace(
                        e, hint="write true or false, or a mapping `{public_key: KEY}` for signed images"
                    )
        if not ok or name is BAD or version is BAD:
            return None
        return DeviceSpec(
            ota=ota,
            name=name,
            version=version,
            description=description,
            page_size=page_size,
            protocol_version=protocol_version,
            errors=errors,
            response_buffer=response_buffer,
        )

"""PROVISIONAL minimal loader (no validation) so emitters can be developed.

To be replaced by the validating loader; keep the signature ``load_spec(path) -> Spec``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from codegen.model import DEFAULT_PAGE_SIZE, DEFAULT_PROTOCOL_VERSION, Device, Field, Param, Returns, Spec, Tool
from codegen.names import cpp_handler_name


class _Yaml12Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false (``on:`` is a key, not True)."""


_Yaml12Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", __import__("re").compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _field(name: str, d: dict[str, Any]) -> Field:
    return Field(
        name=name,
        type=d["type"],
        description=d.get("description", ""),
        properties=tuple(_field(k, v) for k, v in sorted((d.get("properties") or {}).items())),
        items=_field("", d["items"]) if "items" in d else None,
    )


def load_spec(path: str | Path) -> Spec:
    raw = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_Yaml12Loader)
    dev = raw["device"]
    device = Device(
        name=dev["name"],
        version=str(dev["version"]),
        description=dev.get("description", ""),
        page_size=dev.get("page_size", DEFAULT_PAGE_SIZE),
        protocol_version=dev.get("protocol_version", DEFAULT_PROTOCOL_VERSION),
    )
    tools = []
    for t in raw.get("tools") or []:
        params = []
        for pname, p in sorted((t.get("params") or {}).items()):
            params.append(
                Param(
                    name=pname,
                    type=p["type"],
                    description=p.get("description", ""),
                    default=p.get("default"),
                    minimum=p.get("min"),
                    maximum=p.get("max"),
                    max_length=p.get("max_length"),
                    enum=tuple(p.get("enum") or ()),
                    pattern=p.get("pattern"),
                )
            )
        r = t.get("returns", "none")
        if isinstance(r, str):
            returns = Returns(kind=r)  # type: ignore[arg-type]
        else:
            returns = Returns(
                kind=r["type"],
                description=r.get("description", ""),
                properties=tuple(_field(k, v) for k, v in sorted((r.get("properties") or {}).items())),
            )
        tools.append(
            Tool(
                name=t["name"],
                description=t["description"],
                handler=t.get("handler") or cpp_handler_name(t["name"]),
                params=tuple(params),
                returns=returns,
                title=t.get("title"),
                user_only=bool(t.get("user_only", False)),
                read_only=t.get("read_only"),
                destructive=t.get("destructive"),
                idempotent=t.get("idempotent"),
            )
        )
    return Spec(device=device, tools=tuple(tools), source=str(path))

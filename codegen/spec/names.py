"""How spec names map to identifiers in C++ and Python (one place, so both ends agree)."""

from __future__ import annotations

import keyword
import re

MCP_TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

CPP_KEYWORDS: frozenset[str] = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq
    main NULL""".split()
)
# Hard keywords only: soft keywords (match, case, type, _) are valid identifiers, and
# kwlist is the same on every supported Python, so validity never depends on the version.
PYTHON_RESERVED: frozenset[str] = frozenset(keyword.kwlist) | {"self", "cls"}


def _identifier_parts(tool_name: str) -> list[str]:
    parts = tool_name.split(".")
    if len(parts) > 1 and parts[0] == "self":
        parts = parts[1:]
    return [re.sub(r"[^A-Za-z0-9_]", "_", p) for p in parts]


def cpp_handler_name(tool_name: str) -> str:
    """``self.audio_speaker.set_volume`` -> ``audio_speaker_set_volume``."""
    return "_".join(_identifier_parts(tool_name))


def python_path(tool_name: str) -> tuple[str, ...]:
    """``self.audio_speaker.set_volume`` -> ("audio_speaker", "set_volume")."""
    return tuple(_identifier_parts(tool_name))


def camel(snake: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^A-Za-z0-9]+", snake) if p)


def cpp_args_struct(handler: str) -> str:
    """Handler ``audio_speaker_set_volume`` -> ``AudioSpeakerSetVolumeArgs``."""
    return camel(handler) + "Args"


def device_slug(device_name: str) -> str:
    """``xiaozhi-sim`` -> ``xiaozhi_sim``; the Python package is ``<slug>_tools``."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", device_name).strip("_").lower()
    if not slug or slug[0].isdigit():
        slug = "device_" + slug
    return slug


def device_class(device_name: str) -> str:
    """``xiaozhi-sim`` -> ``XiaozhiSim``: the bindings class backends import."""
    return camel(device_slug(device_name))

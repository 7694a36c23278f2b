"""Literals of the generated sources: C++ and Python strings, comments, numbers and
identifiers written so that any spec text is safe in them and the output is
deterministic. Every emitter writes its literals with these (cpp.py, events_cpp.py,
xiaozhi.py, python.py, events_py.py), so there is one escaping rule per language.
"""

from __future__ import annotations

import math
import re
from typing import Any

from mcpgen.codegen.spec.names import CPP_KEYWORDS, PYTHON_RESERVED

_LITERAL_CHUNK = 88  # escaped characters per source line of a long C++ string literal
_INT64_MIN = -(2**63)


# -- C++ -----------------------------------------------------------------------------------


def cpp_string(text: str, indent: str = "    ") -> str:
    """A C++ string literal with exactly the UTF-8 bytes of ``text``.

    Printable ASCII stays readable; every other byte is a 3-digit octal escape (so the
    literal's bytes never depend on the compiler's source or execution charset, and an
    escape can never swallow the next character). Long literals are split into adjacent
    literals on separate lines.
    """
    units: list[str] = []
    for b in text.encode("utf-8"):
        c = chr(b)
        if c in '"\\?':
            units.append("\\" + c)
        elif 0x20 <= b < 0x7F:
            units.append(c)
        else:
            units.append(f"\\{b:03o}")
    chunks: list[str] = []
    cur = ""
    for u in units:
        if len(cur) + len(u) > _LITERAL_CHUNK and cur:
            chunks.append(cur)
            cur = ""
        cur += u
    chunks.append(cur)
    return ("\n" + indent).join(f'"{c}"' for c in chunks)


CPP_LINE = 120  # .clang-format's ColumnLimit: generated C++ is already in the project's format


def cpp_fill(head: str, items: list[str], tail: str, cont: str) -> str:
    """``head`` + ``items`` joined by ", " + ``tail``, filled into lines of at most CPP_LINE
    columns the way clang-format bin-packs them: as many items per line as fit, each further
    line starting with ``cont``."""
    lines: list[str] = []
    cur = head
    for i, item in enumerate(items):
        end = tail if i == len(items) - 1 else ","
        if cur not in (head, cont) and len(cur) + 1 + len(item) + len(end) > CPP_LINE:
            lines.append(cur)
            cur = cont
        cur += ("" if cur in (head, cont) else " ") + item + end
    lines.append(cur if items else head + tail)
    return "\n".join(lines)


def cpp_wrap_comment(code: str, text: str) -> str:
    """``code`` followed by the comment ``// text``, reflowed as clang-format reflows it:
    words filled to CPP_LINE columns, each further line a ``//`` under the first."""
    lead = code + ("  // " if code.strip() else "// ")
    pad = " " * (len(lead) - 3) + "// "
    lines: list[str] = []
    cur = lead
    for word in text.split():
        if cur not in (lead, pad) and len(cur) + 1 + len(word) > CPP_LINE:
            lines.append(cur)
            cur = pad
        cur += ("" if cur in (lead, pad) else " ") + word
    lines.append(cur)
    return "\n".join(lines)


def cpp_comment(text: str) -> str:
    """Text safe inside a ``//`` comment: one line, no line splice, printable."""
    out = "".join(ch if (ch.isprintable() and ch != "\\") else " " for ch in text.replace("\\", "/"))
    return re.sub(r"\s+", " ", out).strip()


def cpp_field_name(param_name: str) -> str:
    """The args struct member of a parameter: its name, made a valid C++ identifier."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", param_name)
    if not ident or ident[0].isdigit():
        ident = "p_" + ident
    if ident in CPP_KEYWORDS or ident.startswith("__") or re.match(r"^_[A-Z]", ident):
        ident = ident + "_"
    return ident


def cpp_int(v: int) -> str:
    if v == _INT64_MIN:
        return "(-9223372036854775807LL - 1)"
    return f"{v}LL"


def cpp_double(v: float) -> str:
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"non-finite number {v!r} cannot be emitted")
    text = repr(v)
    return text if any(c in text for c in ".e") else text + ".0"


# -- Python --------------------------------------------------------------------------------


def py_literal(value: Any, indent: int = 0) -> str:
    """Deterministic Python source for JSON-like data (dict order kept)."""
    pad = " " * (indent + 4)
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            raise ValueError(f"non-finite number {value!r} in spec")
        return repr(value)
    if isinstance(value, str):
        return py_str_literal(value)
    if isinstance(value, (list, tuple)):
        if not value:
            return "()" if isinstance(value, tuple) else "[]"
        items = [py_literal(v, indent + 4) for v in value]
        if isinstance(value, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        keys = [py_str_literal(str(k)) for k in value]
        inner = ",\n".join(
            f"{pad}{key}: {_py_value(v, indent + 4, len(pad) + len(key) + 2)}"
            for key, v in zip(keys, value.values(), strict=True)
        )
        return "{\n" + inner + ",\n" + " " * indent + "}"
    raise TypeError(f"cannot write {type(value).__name__} as a Python literal")


PY_LINE = 110  # the project's ruff line-length: generated Python stays within it


def _py_value(value: Any, indent: int, used: int) -> str:
    """``py_literal`` of a dict value that starts ``used`` columns into its line: a string
    too long for the line becomes adjacent literals in parentheses, split between words."""
    text = py_literal(value, indent)
    if not isinstance(value, str) or used + len(text) + 1 <= PY_LINE:
        return text
    pad = " " * (indent + 4)
    room = PY_LINE - len(pad) - 2
    parts: list[str] = []
    cur = ""
    for word in re.findall(r"\S*\s*", value):
        if cur and len(py_str_literal(cur + word)) - 2 > room:
            parts.append(cur)
            cur = ""
        cur += word
    if cur:
        parts.append(cur)
    lines = "\n".join(pad + py_str_literal(p) for p in parts)
    return "(\n" + lines + "\n" + " " * indent + ")"


def py_str_literal(s: str) -> str:
    """A double-quoted string literal (repr, but stable in quote choice)."""
    body = s.replace("\\", "\\\\").replace('"', '\\"')
    out = []
    for ch in body:
        code = ord(ch)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def py_ident(name: str) -> str:
    """A Python identifier for a spec name (keywords get a trailing ``_``)."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not ident:
        ident = "_"
    if ident[0].isdigit():
        ident = "n" + ident
    if ident in PYTHON_RESERVED:
        ident += "_"
    return ident


def py_doc_text(text: str) -> str:
    """Text safe inside a triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').rstrip()

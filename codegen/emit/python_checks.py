"""The argument checks and annotations of the generated Python bindings, shared by tool
methods (python.py) and event decoders (events_py.py): the same rules as the device,
written as inline tests with a call to ``mcpgen.runtime.core.validate`` for the message.
"""

from __future__ import annotations

import math
from typing import Any

from mcpgen.codegen.emit.literals import py_literal, py_str_literal
from mcpgen.codegen.spec.model import Param

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
SCALAR_TYPES = {"boolean": "bool", "integer": "int", "number": "float", "string": "str"}


def _num(v: Any) -> str:
    return repr(v)


def param_checks(p: Param, ident: str) -> list[str]:
    """Lines that leave ``ident`` as is when it passes ``p``'s rules and otherwise let the
    runtime's validator raise the ``ValidationError`` (the fast test inline, the message there)."""
    n = py_str_literal(p.name)
    if p.ref is not None:  # a named type: the runtime's checks of its published $defs
        return [f"{ident} = _OBJECTS[{py_str_literal(p.ref)}].check({n}, {ident})"]
    if p.type == "boolean":
        return [
            f"if {ident} is not True and {ident} is not False:",
            f"    {ident} = _v.check_bool({n}, {ident})",
        ]
    if p.type == "integer":
        lo = p.minimum if p.minimum is not None else INT64_MIN
        hi = p.maximum if p.maximum is not None else INT64_MAX
        if isinstance(lo, float):
            lo = math.ceil(lo)
        if isinstance(hi, float):
            hi = math.floor(hi)
        return [
            f"if type({ident}) is not int or {ident} < {_num(lo)} or {ident} > {_num(hi)}:",
            f"    {ident} = _v.check_int({n}, {ident}, {_num(lo)}, {_num(hi)})",
        ]
    if p.type == "number":
        lo_c = f"{_num(p.minimum)} <= {ident}" if p.minimum is not None else f"-_INF < {ident}"
        hi_c = f"{ident} <= {_num(p.maximum)}" if p.maximum is not None else f"{ident} < _INF"
        lo_a = _num(p.minimum) if p.minimum is not None else "None"
        hi_a = _num(p.maximum) if p.maximum is not None else "None"
        return [
            f"if (type({ident}) is not float and type({ident}) is not int) or not ({lo_c} and {hi_c}):",
            f"    {ident} = _v.check_number({n}, {ident}, {lo_a}, {hi_a})",
        ]
    # string
    conds = [f"type({ident}) is not str"]
    ml = "None"
    en = "None"
    pat = "None"
    if p.max_length is not None:
        conds.append(f"len({ident}) > {p.max_length}")
        ml = str(p.max_length)
    if p.enum:
        en = py_literal(tuple(p.enum))
        conds.append(f"{ident} not in {en}")
    if p.pattern is not None:
        pat = f"_PATTERNS[{py_str_literal(p.pattern)}]"
        conds.append(f"not {pat}.matches({ident})")  # RE2: linear time, bounded work
    return [
        f"if {' or '.join(conds)}:",
        f"    {ident} = _v.check_str({n}, {ident}, {ml}, {en}, {pat})",
    ]


def param_annotation(p: Param) -> str:
    """The Python type of an argument: ``Literal["a", "b"]`` for an enum, so mypy catches typos."""
    if p.enum:
        return "Literal[" + ", ".join(py_str_literal(v) for v in p.enum) + "]"
    if p.ref is not None:
        return "dict[str, Any]"
    return SCALAR_TYPES[p.type]

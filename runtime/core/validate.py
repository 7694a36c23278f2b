# cython: annotation_typing=False
"""Argument validation: primitives for generated bindings and a schema-driven validator.

Compiled by Cython (pure-Python mode; declarations in ``validate.pxd``). The same file
runs unchanged as Python when the build skips compilation.

Rules follow the JSON Schema keywords the device enforces: ``type``, ``minimum``,
``maximum`` (inclusive), ``maxLength`` (Unicode code points), ``enum``, ``pattern``
(a regular-expression *search*, as in JSON Schema), ``required`` and unknown arguments
(``additionalProperties``). A Python ``bool`` is never accepted as an integer or number.
Objects nest: a property with ``properties``, ``required`` or ``additionalProperties``
(or a ``$ref`` to ``#/$defs/<Name>``, JSON Schema 2020-12, as a spec's named ``types:``
are published) is checked key by key like the arguments, its errors named by their path
(``scene.color.r``). The arguments object refuses unknown keys unless the schema sets
``additionalProperties`` to something else than ``false`` (stock devices refuse them and
say nothing); a nested object refuses them when it says ``additionalProperties: false``,
as JSON Schema reads it (mcpgen devices say so at every level).

Every ``pattern`` runs on RE2 (:class:`LinearPattern`), never on Python's backtracking
``re``: a pattern comes from a device's ``tools/list`` (any device, hostile ones too) or
from a spec, and the value it is checked against comes from a user or an LLM. RE2 takes
time linear in the value's length for any pattern, so ``^(\\w+\\s?)*$`` against a
46-character sentence costs microseconds where ``re`` blocks the event loop for seconds.
The work per check is bounded as well: the pattern's RE2 program is capped (``max_mem``,
the text's length: ``mcpgen.patterns``) and a value longer than the pattern's ``max_subject``
(:data:`MAX_PATTERN_WORK` characters x instructions) is refused without running it. A
pattern RE2 cannot take (backreferences, lookaround, ...) raises
:class:`~mcpgen.runtime.errors.UnsupportedPattern` when its validator is built.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Optional, Union

from mcpgen.patterns import MAX_PATTERN_WORK, UNANCHORED, compile_re2, max_subject, program_size
from mcpgen.runtime.errors import QUOTE_LIMIT, UnsupportedPattern, ValidationError, clip, range_error

_INF = math.inf
#: Compiled patterns (or the reason RE2 refused one) by source text, for every validator.
_PATTERNS: dict = {}
#: Distinct pattern texts kept in that cache (a hostile device may report a new one each
#: session); past it, patterns are compiled per validator and not kept here.
MAX_PATTERN_CACHE = 1024
_UNANCHORED = UNANCHORED

T_ANY = 0
T_BOOLEAN = 1
T_INTEGER = 2
T_NUMBER = 3
T_STRING = 4
T_OBJECT = 5
T_ARRAY = 6
T_NULL = 7
T_MULTI = 8

_TYPE_CODES: dict = {
    "boolean": T_BOOLEAN,
    "integer": T_INTEGER,
    "number": T_NUMBER,
    "string": T_STRING,
    "object": T_OBJECT,
    "array": T_ARRAY,
    "null": T_NULL,
}

#: A pattern as the checks take it: its text, a :class:`LinearPattern`, or (bindings
#: generated before RE2) a compiled ``re`` pattern, whose text is then run on RE2.
PatternLike = Union[str, "LinearPattern", Any]


def _kind(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, (list, tuple)):
        return "array"
    return type(v).__name__


class LinearPattern:
    """A ``pattern`` compiled by RE2: :meth:`matches` takes time linear in the value's
    length whatever the pattern, and refuses (returns False without running) a value
    longer than :attr:`max_subject` characters, so each check's work is bounded."""

    def __init__(self, source: str) -> None:
        compiled = compile_re2(source)  # ValueError: why RE2 refuses it
        self.pattern = source
        low = getattr(compiled, "_regexp", None)
        # The binding's search() builds a match object through a generator (about ten
        # times the cost of the match itself); its low-level Match answers the same question.
        self._match = getattr(low, "Match", None) if _UNANCHORED is not None else None
        self._search = compiled.search
        self.program_size = program_size(compiled, source)
        self.max_subject = max_subject(self.program_size)

    def matches(self, text: str) -> bool:
        """Whether ``text`` contains a match (a JSON Schema ``pattern`` is a search); False,
        without running, for a ``text`` longer than :attr:`max_subject` characters."""
        if len(text) > self.max_subject:
            return False
        if self._match is None:
            return self._search(text) is not None
        data = text.encode("utf-8", "surrogatepass")
        return self._match(_UNANCHORED, data, 0, len(data))[0][0] >= 0

    def check(self, name: str, text: str) -> None:
        """Raises :class:`ValidationError` (rule ``pattern``) unless ``text`` matches."""
        if self.matches(text):
            return
        if len(text) > self.max_subject:
            raise ValidationError(
                name,
                "pattern",
                f"is too long to be checked against pattern {clip(self.pattern, QUOTE_LIMIT)!r}: "
                f"at most {self.max_subject} characters with this pattern, got {len(text)}",
            )
        raise ValidationError(
            name,
            "pattern",
            f"must match {clip(self.pattern, QUOTE_LIMIT)!r}, got {clip(text, QUOTE_LIMIT)!r}",
        )

    def __repr__(self) -> str:
        return f"LinearPattern({clip(self.pattern, QUOTE_LIMIT)!r})"


def _compiled(source: str) -> object:
    """The :class:`LinearPattern` of ``source``, or the reason (a ``str``) it is refused."""
    got = _PATTERNS.get(source)
    if got is not None:
        return got
    try:
        got = LinearPattern(source)
    except ValueError as exc:
        got = str(exc)
    if len(_PATTERNS) < MAX_PATTERN_CACHE:
        _PATTERNS[source] = got
    return got


def compile_pattern(pattern: PatternLike, argument: str = "") -> LinearPattern:
    """``pattern`` compiled by RE2 (cached per source text). A pattern RE2 cannot take
    raises :class:`UnsupportedPattern` (naming ``argument``, the property it is for)."""
    if isinstance(pattern, LinearPattern):
        return pattern
    source = pattern if isinstance(pattern, str) else getattr(pattern, "pattern", None)
    if not isinstance(source, str):
        raise TypeError(f"a pattern is a str, not {type(pattern).__name__}")
    got = _compiled(source)
    if isinstance(got, str):
        raise UnsupportedPattern(argument, source, got)
    return got  # type: ignore[return-value]


def _type_error(name: str, v: object, expected: str) -> ValidationError:
    return ValidationError(name, "type", f"must be {expected}, got {_kind(v)}")


def _enum_error(name: str, v: object, enum: Any) -> ValidationError:
    allowed = ", ".join([repr(e) for e in enum])
    return ValidationError(name, "enum", f"must be one of {allowed}, got {v!r}")


def check_int(name: str, v: object, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    """``v`` as an ``int`` within ``[lo, hi]`` (either bound may be ``None``)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise _type_error(name, v, "an integer")
    if lo is not None and v < lo:
        raise range_error(name, "minimum", ">=", lo, v)
    if hi is not None and v > hi:
        raise range_error(name, "maximum", "<=", hi, v)
    return int(v)


def check_number(
    name: str, v: object, lo: Optional[float] = None, hi: Optional[float] = None
) -> Union[int, float]:
    """``v`` as a finite ``int`` or ``float`` within ``[lo, hi]``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _type_error(name, v, "a number")
    if isinstance(v, float):
        if v != v or v == _INF or v == -_INF:
            raise ValidationError(name, "type", f"must be a finite number, got {v}")
        v = float(v)
    else:
        v = int(v)
    if lo is not None and v < lo:
        raise range_error(name, "minimum", ">=", lo, v)
    if hi is not None and v > hi:
        raise range_error(name, "maximum", "<=", hi, v)
    return v


def check_bool(name: str, v: object) -> bool:
    """``v`` must be a real ``bool`` (``1`` and ``"true"`` are refused)."""
    if v is True or v is False:
        return v
    raise _type_error(name, v, "a boolean")


def check_str(
    name: str,
    v: object,
    max_length: Optional[int] = None,
    enum: Optional[Any] = None,
    pattern: Optional[PatternLike] = None,
) -> str:
    """``v`` as a ``str`` of at most ``max_length`` code points, in ``enum``, matching ``pattern``."""
    if not isinstance(v, str):
        raise _type_error(name, v, "a string")
    s = str(v)
    if max_length is not None and len(s) > max_length:
        raise ValidationError(name, "maxLength", f"must be at most {max_length} characters, got {len(s)}")
    if enum is not None and s not in enum:
        raise _enum_error(name, s, enum)
    if pattern is not None:
        compile_pattern(pattern, name).check(name, s)
    return s


def check_arguments(v: object) -> dict:
    """The arguments object itself: ``None`` -> ``{}``, otherwise it must be a dict."""
    if v is None:
        return {}
    if not isinstance(v, dict):
        if isinstance(v, Mapping):
            return dict(v)
        raise _type_error("", v, "an object of named arguments")
    return v


#: How deep ``$ref`` chains and nested object schemas are followed when a validator is
#: built; past it a property is checked for its JSON type only (a schema is device input).
MAX_SCHEMA_DEPTH = 32
_DEFS_PREFIXES = ("#/$defs/", "#/definitions/")


class _Defs:
    """The ``$defs`` of one input schema: each named object shape digested once (shared by
    every ``$ref`` to it, so a shape that refers to itself is built once, not forever)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        defs: Any = schema.get("$defs")
        if not isinstance(defs, dict):
            defs = schema.get("definitions")
        self.schemas: dict = dict(defs) if isinstance(defs, dict) else {}
        self.objects: dict = {}

    def resolve(self, schema: Any, depth: int) -> Any:
        """``schema`` with its local ``$ref`` followed (None for a ref to nothing known)."""
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < MAX_SCHEMA_DEPTH:
            ref = str(schema["$ref"])
            target = None
            for prefix in _DEFS_PREFIXES:
                if ref.startswith(prefix):
                    target = self.schemas.get(ref[len(prefix) :])
            if not isinstance(target, dict):
                return None
            schema = target
            depth += 1
        return schema

    def object_for(self, schema: Any, depth: int) -> Any:
        """The :class:`_Object` of an object schema (``$defs`` entries built once)."""
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        key = ref if isinstance(ref, str) else None
        if key is not None and key in self.objects:
            return self.objects[key]
        target = self.resolve(schema, depth)
        if not isinstance(target, dict) or depth >= MAX_SCHEMA_DEPTH:
            return None
        obj = _Object()
        if key is not None:
            self.objects[key] = obj  # before its fields: a self-reference finds it
        obj.fill(target, self, depth + 1, target.get("additionalProperties", True) is not False)
        return obj


def _is_object_schema(schema: Any) -> bool:
    return isinstance(schema, dict) and (
        "properties" in schema or "required" in schema or "additionalProperties" in schema
    )


class _Object:
    """The rules of one nested object: its properties, required keys, defaults, and
    whether keys it does not declare pass."""

    def __init__(self) -> None:
        self.props: dict = {}
        self.required: tuple = ()
        self.defaults: tuple = ()
        self.allow_additional = True

    def fill(self, schema: Mapping[str, Any], defs: _Defs, depth: int, allow_additional: bool) -> None:
        props = schema.get("properties") or {}
        defaults = []
        if isinstance(props, dict):
            for name, sub in props.items():
                self.props[name] = _Prop(str(name), sub, defs, depth)
                resolved = defs.resolve(sub, depth)
                if isinstance(resolved, dict) and "default" in resolved:
                    defaults.append((name, resolved["default"]))
        self.defaults = tuple(defaults)
        req = schema.get("required") or ()
        self.required = tuple([str(r) for r in req]) if isinstance(req, (list, tuple)) else ()
        self.allow_additional = allow_additional

    def check(self, value: dict) -> dict:
        """``value`` checked key by key (errors named relative to it: ``color.r``); a new
        dict when defaults were filled in or a value was normalized, else ``value``."""
        changed = None
        for key, item in value.items():
            prop = self.props.get(key)
            if prop is None:
                if not self.allow_additional:
                    raise ValidationError(str(key), "additionalProperties", "unknown field")
                continue
            out = prop.check(item)
            if out is not item or type(out) is not type(item):
                if changed is None:
                    changed = dict(value)
                changed[key] = out
        for name in self.required:
            if name not in value:
                raise ValidationError(name, "required", "is required")
        for name, default in self.defaults:
            if name not in value:
                if changed is None:
                    changed = dict(value)
                changed[name] = default
        return value if changed is None else changed


class _Prop:
    """One property of an input schema, pre-digested for fast checking."""

    def __init__(self, name: str, schema: Any, defs: Optional[_Defs] = None, depth: int = 0) -> None:
        self.name = name
        self.obj = None
        self.types: tuple = ()
        self.type_code = T_ANY
        self.has_lo = False
        self.has_hi = False
        self.lo: Any = -_INF
        self.hi: Any = _INF
        self.lo_exclusive = False
        self.hi_exclusive = False
        self.max_length = -1
        self.min_length = -1
        self.enum: Optional[tuple] = None
        self.pattern: Optional[LinearPattern] = None
        if defs is not None and isinstance(schema, dict) and "$ref" in schema:
            target = defs.resolve(schema, depth)
            if _is_object_schema(target):
                self.obj = defs.object_for(schema, depth)
            schema = target
            if self.obj is not None:
                self.type_code = T_OBJECT
        elif defs is not None and _is_object_schema(schema) and depth < MAX_SCHEMA_DEPTH:
            self.obj = _Object()
            self.obj.fill(schema, defs, depth + 1, schema.get("additionalProperties", True) is not False)
        if not isinstance(schema, dict):
            return
        t = schema.get("type")
        if isinstance(t, str):
            self.type_code = _TYPE_CODES.get(t, T_ANY)
        elif isinstance(t, (list, tuple)):
            codes = tuple(_TYPE_CODES[x] for x in t if isinstance(x, str) and x in _TYPE_CODES)
            if len(codes) == 1:
                self.type_code = codes[0]
            elif codes:
                self.type_code = T_MULTI
                self.types = codes
        lo: Any = schema.get("minimum")
        if _is_num(lo):
            self.has_lo = True
            self.lo = lo
        hi: Any = schema.get("maximum")
        if _is_num(hi):
            self.has_hi = True
            self.hi = hi
        xlo: Any = schema.get("exclusiveMinimum")
        if _is_num(xlo) and (not self.has_lo or xlo >= self.lo):
            self.has_lo = True
            self.lo = xlo
            self.lo_exclusive = True
        xhi: Any = schema.get("exclusiveMaximum")
        if _is_num(xhi) and (not self.has_hi or xhi <= self.hi):
            self.has_hi = True
            self.hi = xhi
            self.hi_exclusive = True
        ml: Any = schema.get("maxLength")
        if _is_num(ml):
            self.max_length = int(ml)
        nl: Any = schema.get("minLength")
        if _is_num(nl):
            self.min_length = int(nl)
        en = schema.get("enum")
        if isinstance(en, (list, tuple)):
            self.enum = tuple(en)
        pat = schema.get("pattern")
        if isinstance(pat, str):
            self.pattern = compile_pattern(pat, self.name)

    def check(self, v: object) -> object:
        code = self.type_code
        if code == T_MULTI:
            code = self._pick_type(v)
        if code == T_INTEGER:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise _type_error(self.name, v, "an integer")
            if isinstance(v, float):
                if not v.is_integer():
                    raise _type_error(self.name, v, "an integer")
                v = int(v)
            self._check_range(v)
        elif code == T_NUMBER:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise _type_error(self.name, v, "a number")
            if isinstance(v, float) and (v != v or v in (_INF, -_INF)):
                raise ValidationError(self.name, "type", f"must be a finite number, got {v}")
            self._check_range(v)
        elif code == T_STRING:
            if not isinstance(v, str):
                raise _type_error(self.name, v, "a string")
            n = len(v)
            if self.max_length >= 0 and n > self.max_length:
                raise ValidationError(
                    self.name, "maxLength", f"must be at most {self.max_length} characters, got {n}"
                )
            if self.min_length >= 0 and n < self.min_length:
                raise ValidationError(
                    self.name, "minLength", f"must be at least {self.min_length} characters, got {n}"
                )
            if self.pattern is not None:
                self.pattern.check(self.name, v)
        elif code == T_BOOLEAN:
            if v is not True and v is not False:
                raise _type_error(self.name, v, "a boolean")
        elif code == T_OBJECT:
            if not isinstance(v, dict):
                raise _type_error(self.name, v, "an object")
            if self.obj is not None:
                try:
                    v = self.obj.check(v)
                except ValidationError as exc:
                    raise ValidationError(f"{self.name}.{exc.argument}", exc.rule, exc.message) from None
        elif code == T_ARRAY:
            if not isinstance(v, (list, tuple)):
                raise _type_error(self.name, v, "an array")
        elif code == T_NULL:
            if v is not None:
                raise _type_error(self.name, v, "null")
        if self.enum is not None and not _in_enum(v, self.enum):
            raise _enum_error(self.name, v, self.enum)
        return v

    def _pick_type(self, v: object) -> int:
        k = _TYPE_CODES.get(_kind(v), -1)
        if k in self.types:
            return k
        if k == T_INTEGER and T_NUMBER in self.types:
            return T_NUMBER
        if k == T_NUMBER and T_INTEGER in self.types and isinstance(v, float) and v.is_integer():
            return T_INTEGER
        names = " or ".join([n for n, c in _TYPE_CODES.items() if c in self.types])
        raise _type_error(self.name, v, names)

    def _check_range(self, v: Any) -> None:
        if self.has_lo:
            if v < self.lo or (self.lo_exclusive and v == self.lo):
                op = ">" if self.lo_exclusive else ">="
                raise range_error(self.name, "minimum", op, self.lo, v)
        if self.has_hi:
            if v > self.hi or (self.hi_exclusive and v == self.hi):
                op = "<" if self.hi_exclusive else "<="
                raise range_error(self.name, "maximum", op, self.hi, v)


def _is_num(v: object) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float))


def _in_enum(v: object, enum: tuple) -> bool:
    for e in enum:
        if e == v and isinstance(e, bool) == isinstance(v, bool):
            return True
    return False


class SchemaValidator:
    """Validates an arguments object against a tool's reported ``inputSchema``.

    Build once per tool; :meth:`validate` returns the arguments to send (a new dict with
    the schema's defaults filled in when some were missing, else the caller's dict).
    Unknown arguments are refused unless the schema sets ``additionalProperties: true``.
    Building raises :class:`UnsupportedPattern` when a property's ``pattern`` cannot run
    on RE2: such a tool cannot be called with validation.
    """

    def __init__(self, schema: Optional[Mapping[str, Any]]) -> None:
        schema = dict(schema or {})
        props = schema.get("properties") or {}
        self.props = {}
        defaults = []
        defs = _Defs(schema)
        if isinstance(props, dict):
            for name, sub in props.items():
                self.props[name] = _Prop(str(name), sub, defs, 1)
                resolved = defs.resolve(sub, 1)
                if isinstance(resolved, dict) and "default" in resolved:
                    defaults.append((name, resolved["default"]))
        self.defaults = tuple(defaults)
        req = schema.get("required") or ()
        self.required = tuple(str(r) for r in req) if isinstance(req, (list, tuple)) else ()
        self.allow_additional = schema.get("additionalProperties", False) is not False
        self.schema = schema

    def validate(self, arguments: object) -> dict:
        args = check_arguments(arguments)
        props = self.props
        changed = None
        for key, value in args.items():
            prop = props.get(key)
            if prop is None:
                if not self.allow_additional:
                    raise ValidationError(str(key), "additionalProperties", "unknown argument")
                continue
            out = prop.check(value)
            if out is not value or type(out) is not type(value):
                if changed is None:
                    changed = dict(args)
                changed[key] = out
        for name in self.required:
            if name not in args:
                raise ValidationError(name, "required", "is required")
        for name, default in self.defaults:
            if name not in args:
                if changed is None:
                    changed = dict(args)
                changed[name] = default
        return args if changed is None else changed

    def __repr__(self) -> str:
        return f"SchemaValidator(properties={list(self.props)!r}, required={list(self.required)!r})"


class ObjectChecker:
    """The checks of one named object type (a spec's ``types:`` entry) for generated
    bindings: ``schema`` is ``{"$ref": "#/$defs/<Name>", "$defs": {...}}``, the same
    ``$defs`` the tool's published ``inputSchema`` carries, so both check alike."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.obj = _Defs(schema).object_for(dict(schema), 1)

    def check(self, name: str, v: object) -> dict:
        """``v`` checked (a new dict with its defaults filled in when some were missing);
        :class:`ValidationError` named by the path (``scene.color.r``) otherwise."""
        if not isinstance(v, dict):
            raise _type_error(name, v, "an object")
        if self.obj is None:
            return v
        try:
            return self.obj.check(v)
        except ValidationError as exc:
            raise ValidationError(f"{name}.{exc.argument}", exc.rule, exc.message) from None


def unsupported_pattern(schema: Optional[Mapping[str, Any]]) -> Optional[UnsupportedPattern]:
    """Why an input schema cannot be validated (the first ``pattern`` RE2 refuses), or None:
    what session setup records for each tool a device reports."""
    try:
        SchemaValidator(schema)
    except UnsupportedPattern as exc:
        return exc
    return None


__all__ = [
    "LinearPattern",
    "MAX_PATTERN_WORK",
    "unsupported_pattern",
    "check_int",
    "check_number",
    "check_bool",
    "check_str",
    "check_arguments",
    "compile_pattern",
    "SchemaValidator",
    "ObjectChecker",
]

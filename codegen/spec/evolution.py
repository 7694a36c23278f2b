"""Classify every change between two versions of a spec as compatible or breaking.

``diff_specs(old, new)`` returns one ``Change`` per difference, in the order of NEW's file.
The rules (the table "Evolving a spec" in toolspec/README.md) answer one question: can a
device built from one version and a backend built from the other still work together? A
backend always meets devices of older versions (updates roll out in waves), so anything an
older device or an older backend would reject or misread is breaking, as ``buf breaking``
classifies protobuf schemas.

Tool arguments flow backend -> device, so narrowing what a parameter accepts is breaking.
Event parameters flow device -> backend, so there it is the other way round: a *widened*
range lets a device send a value an older backend drops.

A named type (``types:``) is judged once, where it is written: its fields follow the
tool-parameter rules (they are tool arguments, one level down). Every object the device
decodes refuses keys it does not declare (``additionalProperties: false``, stated in the
published schemas and always done by the device), so a removed field breaks older backends
that still send it, as a removed parameter does.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Literal, Optional, Union

from mcpgen.codegen.spec.locate import SpecLocator, Step, ToolStep
from mcpgen.codegen.spec.model import Event, Field, ObjectType, Param, Resource, Spec, Tool

Verdict = Literal["compatible", "breaking"]


@dataclass(frozen=True)
class Change:
    """One difference between OLD and NEW. ``steps`` lead to its place in NEW's YAML (or to
    the nearest enclosing field when the thing was removed); ``path`` is the field path."""

    verdict: Verdict
    path: str
    what: str
    reason: str
    steps: tuple[Step, ...] = ()
    hint: str = ""

    @property
    def breaking(self) -> bool:
        return self.verdict == "breaking"


@dataclass(frozen=True)
class LocatedChange:
    """A change with its ``file:line:col`` in NEW."""

    change: Change
    file: str
    line: int
    column: int

    def format(self) -> str:
        c = self.change
        text = f"{self.file}:{self.line}:{self.column}: {c.verdict}: {c.path}: {c.what} ({c.reason})"
        return text + (f"\n  hint: {c.hint}" if c.hint else "")

    def as_json(self) -> dict[str, object]:
        c = self.change
        return {
            "verdict": c.verdict,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": c.path,
            "what": c.what,
            "reason": c.reason,
            "hint": c.hint,
        }


_OLD_DEVICES = "devices in the field run the old version"
_OLD_BACKENDS = "older backends still decode it"
Num = Union[int, float]


#: Most names one removed name is compared with when guessing a rename (difflib's ratio
#: is the costly step): all of them while there are at most this many, else those in
#: the same group (the text before the last `.`) and those with the same last part.
RENAME_CANDIDATES = 64
#: Removed names that get a rename guess in one list: past this many removals a hint per
#: name says little, and the guesses would cost more than the whole diff.
RENAME_GUESSES = 1000


class RenameGuesser:
    """Guesses which added name a removed one was renamed to, with at most
    :data:`RENAME_CANDIDATES` comparisons per removed name and for the first
    :data:`RENAME_GUESSES` removed names, so the cost of a diff is linear in the number of
    names (comparing each removed name with every added one was quadratic: 100,000 tools
    ran past 60 s). ``compared`` counts the comparisons."""

    def __init__(self, added: list[str]) -> None:
        self.added = added
        self.compared = 0
        self.guesses = 0
        self._by_group: dict[str, list[str]] = {}
        self._by_leaf: dict[str, list[str]] = {}
        if len(added) > RENAME_CANDIDATES:
            for name in added:
                group, _, leaf = name.rpartition(".")
                for table, key in ((self._by_group, group), (self._by_leaf, leaf)):
                    bucket = table.setdefault(key, [])
                    if len(bucket) < RENAME_CANDIDATES // 2:
                        bucket.append(name)

    def guess(self, removed: str) -> Optional[str]:
        self.guesses += 1
        if self.guesses > RENAME_GUESSES:
            return None
        if len(self.added) <= RENAME_CANDIDATES:
            pool = self.added
        else:
            group, _, leaf = removed.rpartition(".")
            pool = list(dict.fromkeys(self._by_group.get(group, []) + self._by_leaf.get(leaf, [])))
        self.compared += len(pool)
        close = difflib.get_close_matches(removed, pool, n=1, cutoff=0.6)
        return close[0] if close else None


def _c(path: str, what: str, reason: str, steps: tuple[Step, ...], hint: str = "") -> Change:
    return Change("compatible", path, what, reason, steps, hint)


def _b(path: str, what: str, reason: str, steps: tuple[Step, ...], hint: str = "") -> Change:
    return Change("breaking", path, what, reason, steps, hint)


def _doc(path: str, steps: tuple[Step, ...]) -> Change:
    return _c(path, "description changed", "documentation only", steps)


def diff_specs(old: Spec, new: Spec) -> list[Change]:
    """Every change from ``old`` to ``new`` with its verdict (empty when they are equal)."""
    out: list[Change] = []
    _device(old, new, out)
    _types(old, new, out)
    _tools(old, new, out)
    _events(old, new, out)
    _resources(old, new, out)
    return out


def locate_changes(changes: list[Change], locator: SpecLocator) -> list[LocatedChange]:
    """The changes with their place in NEW, sorted by line."""
    located = []
    for c in changes:
        line, column = locator.locate(c.steps)
        located.append(LocatedChange(c, locator.file, line, column))
    return sorted(located, key=lambda lc: (lc.line, lc.column))


# -- device ------------------------------------------------------------------------------------


def _device(old: Spec, new: Spec, out: list[Change]) -> None:
    o, n = old.device, new.device
    at: tuple[Step, ...] = ("device",)
    if o.name != n.name:
        out.append(
            _b(
                "device.name",
                f"device name changed from {o.name!r} to {n.name!r}",
                "it is another device to every backend",
                at + ("name",),
                "keep the name; a new device gets its own spec",
            )
        )
    if o.errors != n.errors:
        out.append(
            _b(
                "device.errors",
                f"error style changed from {o.errors!r} to {n.errors!r}",
                "backends read argument errors the old way",
                at + ("errors",),
            )
        )
    if o.protocol_version != n.protocol_version:
        out.append(
            _b(
                "device.protocol_version",
                f"protocol version changed from {o.protocol_version} to {n.protocol_version}",
                "clients negotiate the old revision",
                at + ("protocol_version",),
            )
        )
    if o.page_size != n.page_size:
        out.append(
            _c(
                "device.page_size",
                f"page size changed from {o.page_size} to {n.page_size}",
                "clients read every page whatever its size",
                at + ("page_size",),
            )
        )
    if o.description != n.description:
        out.append(_doc("device.description", at + ("description",)))


# -- named types -------------------------------------------------------------------------------

#: The named types of OLD and NEW while one diff runs (a parameter's type is looked up there).
Types = tuple[dict[str, ObjectType], dict[str, ObjectType]]
_NO_TYPES: Types = ({}, {})


def _types(old: Spec, new: Spec, out: list[Change]) -> None:
    olds = {t.name: t for t in old.types}
    news = {t.name: t for t in new.types}
    both: Types = (olds, news)
    for t in old.types:
        if t.name not in news:
            out.append(
                _c(
                    f"types.{t.name}",
                    f"type `{t.name}` removed",
                    "only its uses reach the wire: each parameter that used it is judged there",
                    ("types",) if news else (),
                )
            )
    for t in new.types:
        at: tuple[Step, ...] = ("types", t.name)
        if t.name not in olds:
            out.append(
                _c(
                    f"types.{t.name}",
                    f"type `{t.name}` added",
                    "nothing used it before; a parameter that uses it is judged there",
                    at,
                )
            )
            continue
        o = olds[t.name]
        if o.description != t.description:
            out.append(_doc(f"types.{t.name}.description", at + ("description",)))
        _params(o.fields, t.fields, f"types.{t.name}", at, "tool", out, key="fields", types=both)


# -- tools -------------------------------------------------------------------------------------


def _tools(old: Spec, new: Spec, out: list[Change]) -> None:
    olds = {t.name: t for t in old.tools}
    news = {t.name: t for t in new.tools}
    guesser = RenameGuesser([t.name for t in new.tools if t.name not in olds])
    for t in old.tools:
        if t.name not in news:
            close = guesser.guess(t.name)
            hint = (
                f"renamed to `{close}`? a rename breaks callers: keep `{t.name}` as well"
                if close
                else f"keep `{t.name}`, or raise device.version's major number"
            )
            out.append(
                _b(
                    f"tools.{t.name}",
                    f"tool `{t.name}` removed",
                    _OLD_DEVICES + " and " + "backends still call it",
                    ("tools",),
                    hint,
                )
            )
    types: Types = ({t.name: t for t in old.types}, {t.name: t for t in new.types})
    for t in new.tools:
        if t.name in olds:
            _tool(olds[t.name], t, out, types)
        else:
            out.append(
                _c(
                    f"tools.{t.name}",
                    f"tool `{t.name}` added",
                    "nobody calls it yet",
                    ("tools", ToolStep(t.name)),
                )
            )


def _tool(o: Tool, n: Tool, out: list[Change], types: Types = _NO_TYPES) -> None:
    at: tuple[Step, ...] = ("tools", ToolStep(n.name))
    base = f"tools.{n.name}"
    if not o.user_only and n.user_only:
        out.append(
            _b(
                f"{base}.user_only",
                "tool became user-only",
                "an assistant that called it no longer sees it",
                at + ("user_only",),
            )
        )
    elif o.user_only and not n.user_only:
        out.append(
            _c(
                f"{base}.user_only",
                "tool is no longer user-only",
                "it is only offered more widely",
                at + ("user_only",),
            )
        )
    if o.progress and not n.progress:
        out.append(
            _b(
                f"{base}.progress",
                "tool no longer reports progress",
                "backend code that passes on_progress to its binding stops compiling",
                at + ("progress",),
            )
        )
    elif n.progress and not o.progress:
        out.append(
            _c(
                f"{base}.progress",
                "tool reports progress",
                "callers may pass on_progress",
                at + ("progress",),
            )
        )
    for key in ("description", "title", "read_only", "destructive", "idempotent"):
        if getattr(o, key) != getattr(n, key):
            what = "description changed" if key == "description" else f"{key} changed"
            out.append(_c(f"{base}.{key}", what, "documentation and hints only", at + (key,)))
    if o.confirm != n.confirm:
        what = "confirm " + ("added" if o.confirm is None else "removed" if n.confirm is None else "changed")
        out.append(
            _c(
                f"{base}.confirm",
                what,
                "the device is unchanged; the bridge and the console ask it",
                at + ("confirm",),
            )
        )
    _params(o.params, n.params, base, at, "tool", out, types=types)
    _returns(o, n, base, at, out)


def _params(
    olds_t: tuple[Param, ...],
    news_t: tuple[Param, ...],
    base: str,
    at: tuple[Step, ...],
    owner: Literal["tool", "event"],
    out: list[Change],
    *,
    key: str = "params",
    types: Types = _NO_TYPES,
) -> None:
    """Parameters (``key``: ``params``), or the fields of a named type (``fields``)."""
    what = "parameter" if key == "params" else "field"
    olds = {p.name: p for p in olds_t}
    news = {p.name: p for p in news_t}
    guesser = RenameGuesser([p.name for p in news_t if p.name not in olds])
    for p in olds_t:
        if p.name not in news:
            close = guesser.guess(p.name)
            hint = f"renamed to `{close}`? keep the old name" if close else ""
            reason = (
                "older backends still send it, and the device refuses keys it does not declare "
                "(additionalProperties: false)"
                if owner == "tool"
                else "older backends require it in every event"
            )
            out.append(_b(f"{base}.{key}.{p.name}", f"{what} `{p.name}` removed", reason, at + (key,), hint))
    for p in news_t:
        path = f"{base}.{key}.{p.name}"
        here = at + (key, p.name)
        if p.name not in olds:
            if owner == "event":
                out.append(_c(path, f"event parameter `{p.name}` added", "older backends ignore it", here))
            elif p.required:
                hint = f"give `{p.name}` a default" if p.ref is None else f"make `{p.name}` a new tool's"
                out.append(
                    _b(path, f"required {what} `{p.name}` added", "older backends do not send it", here, hint)
                )
            else:
                out.append(
                    _c(
                        path,
                        f"optional {what} `{p.name}` added (default {p.default!r})",
                        "older callers get the default",
                        here,
                    )
                )
            continue
        _param(olds[p.name], p, path, here, owner, out, types)


def _param(
    o: Param,
    n: Param,
    path: str,
    at: tuple[Step, ...],
    owner: Literal["tool", "event"],
    out: list[Change],
    types: Types = _NO_TYPES,
) -> None:
    # For a tool the device accepts what the backend sends: narrowing breaks. For an event the
    # backend accepts what the device sends: widening breaks.
    narrow: Verdict = "breaking" if owner == "tool" else "compatible"
    wide: Verdict = "compatible" if owner == "tool" else "breaking"
    why_narrow = (
        "older backends send values the device now rejects"
        if owner == "tool"
        else "the device only sends less"
    )
    why_wide = "the device accepts more" if owner == "tool" else "older backends drop the new values"
    if o.type != n.type:
        out.append(
            _b(
                path + ".type",
                f"type changed from {o.ref or o.type} to {n.ref or n.type}",
                "both ends encode it the old way",
                at + ("type",),
            )
        )
        return
    if o.ref != n.ref and o.ref is not None and n.ref is not None:
        # Another named type: the wire carries no type names, so only the shapes matter.
        old_t, new_t = types[0].get(o.ref), types[1].get(n.ref)
        out.append(
            _c(
                path + ".type",
                f"named type changed from {o.ref} to {n.ref}",
                "the wire carries the fields, not the name: they are judged here",
                at + ("type",),
            )
        )
        if old_t is not None and new_t is not None:
            _params(old_t.fields, new_t.fields, path, at, owner, out, key="fields", types=types)
    if owner == "tool":
        if not o.required and n.required:
            out.append(
                _b(
                    path + ".default",
                    "parameter became required (default removed)",
                    "older backends may leave it out",
                    at,
                )
            )
        elif o.required and not n.required:
            out.append(
                _c(
                    path + ".default",
                    f"parameter became optional (default {n.default!r})",
                    "callers may still send it",
                    at + ("default",),
                )
            )
        elif o.default != n.default:
            out.append(
                _c(
                    path + ".default",
                    f"default changed from {o.default!r} to {n.default!r}",
                    "callers that send it are unaffected",
                    at + ("default",),
                )
            )
    for key, yaml_key, lower in (("minimum", "min", True), ("maximum", "max", False)):
        change = _bound(getattr(o, key), getattr(n, key), lower)
        if change:
            was, now = _show(getattr(o, key)), _show(getattr(n, key))
            verdict = narrow if change == "narrowed" else wide
            out.append(
                Change(
                    verdict,
                    f"{path}.{yaml_key}",
                    f"range {change}: {yaml_key} {was} -> {now}",
                    why_narrow if change == "narrowed" else why_wide,
                    at + (yaml_key,),
                )
            )
    change = _bound(o.max_length, n.max_length, False)
    if change:
        verdict = narrow if change == "narrowed" else wide
        out.append(
            Change(
                verdict,
                path + ".max_length",
                f"length {change}: max_length {_show(o.max_length)} -> {_show(n.max_length)}",
                why_narrow if change == "narrowed" else why_wide,
                at + ("max_length",),
            )
        )
    _enum(o, n, path, at, narrow, wide, why_narrow, why_wide, out)
    if o.pattern != n.pattern:
        if n.pattern is None:
            out.append(Change(wide, path + ".pattern", "pattern removed", why_wide, at))
        else:  # whether one pattern accepts less than another is not decidable here: breaking
            out.append(
                _b(
                    path + ".pattern",
                    f"pattern changed to {n.pattern!r}",
                    "the new pattern may reject what the old one accepted",
                    at + ("pattern",),
                )
            )
    if (o.human is None) != (n.human is None):
        # the device accepts the value either way; the backend's API changes (human= or not)
        what = "now asked of the person" if n.human is not None else "no longer asked of the person"
        out.append(
            _b(
                path + ".from_human",
                what,
                "the typed bindings take it as human= or as an argument, so backend code and "
                "the bindings of other released versions pass it the other way",
                at + ("from_human",) if n.human is not None else at,
            )
        )
    elif o.human != n.human:
        out.append(_c(path + ".from_human", "question changed", "documentation only", at + ("from_human",)))
    if o.description != n.description:
        out.append(_doc(path + ".description", at + ("description",)))


def _enum(
    o: Param,
    n: Param,
    path: str,
    at: tuple[Step, ...],
    narrow: Verdict,
    wide: Verdict,
    why_narrow: str,
    why_wide: str,
    out: list[Change],
) -> None:
    if o.enum == n.enum:
        return
    here = at + ("enum",)
    if not n.enum:
        out.append(Change(wide, path + ".enum", "enum removed: any string", why_wide, at))
        return
    if not o.enum:
        out.append(Change(narrow, path + ".enum", "enum added", why_narrow, here))
        return
    old_values, new_values = set(o.enum), set(n.enum)  # (sets: an enum may be long)
    gone = [v for v in o.enum if v not in new_values]
    new = [v for v in n.enum if v not in old_values]
    if gone:
        out.append(
            Change(
                narrow,
                path + ".enum",
                "enum value" + ("s" if len(gone) > 1 else "") + " removed: " + ", ".join(gone),
                why_narrow,
                here,
            )
        )
    if new:
        out.append(
            Change(
                wide,
                path + ".enum",
                "enum value" + ("s" if len(new) > 1 else "") + " added: " + ", ".join(new),
                why_wide,
                here,
            )
        )


def _bound(old: Optional[Num], new: Optional[Num], lower: bool) -> str:
    """ "narrowed", "widened" or "" for one bound (None: unbounded)."""
    if old == new:
        return ""
    o = old if old is not None else (-math.inf if lower else math.inf)
    nn = new if new is not None else (-math.inf if lower else math.inf)
    if o == nn:
        return ""
    tighter = nn > o if lower else nn < o
    return "narrowed" if tighter else "widened"


def _show(x: Optional[Num]) -> str:
    return "none" if x is None else (repr(x) if isinstance(x, float) else str(x))


# -- results -----------------------------------------------------------------------------------


def _returns(o: Tool, n: Tool, base: str, at: tuple[Step, ...], out: list[Change]) -> None:
    here = at + ("returns",)
    if o.returns.kind != n.returns.kind:
        out.append(
            _b(
                base + ".returns",
                f"return kind changed from {o.returns.kind} to {n.returns.kind}",
                "backends decode the result the old way",
                here,
            )
        )
        return
    if o.returns.items != n.returns.items:
        old_items, new_items = ", ".join(o.returns.items), ", ".join(n.returns.items)
        out.append(
            _b(
                base + ".returns",
                f"content items changed from [{old_items}] to [{new_items}]",
                "backends unpack the result's items by position",
                here,
            )
        )
        return
    if o.returns.description != n.returns.description:
        out.append(
            _c(
                base + ".returns.description",
                "result description changed",
                "documentation only",
                here + ("description",),
            )
        )
    _fields(o.returns.properties, n.returns.properties, base + ".returns", here + ("properties",), out)


def _fields(
    olds_t: tuple[Field, ...], news_t: tuple[Field, ...], base: str, at: tuple[Step, ...], out: list[Change]
) -> None:
    olds = {f.name: f for f in olds_t}
    news = {f.name: f for f in news_t}
    for f in olds_t:
        if f.name not in news:
            out.append(
                _b(
                    f"{base}.properties.{f.name}",
                    f"result property `{f.name}` removed",
                    "backends still read it",
                    at,
                )
            )
    for f in news_t:
        path = f"{base}.properties.{f.name}"
        here = at + (f.name,)
        if f.name not in olds:
            out.append(_c(path, f"result property `{f.name}` added", "older backends ignore it", here))
            continue
        _field(olds[f.name], f, path, here, out)


def _field(o: Field, n: Field, path: str, at: tuple[Step, ...], out: list[Change]) -> None:
    if o.type != n.type:
        out.append(
            _b(
                path + ".type",
                f"property type changed from {o.type} to {n.type}",
                "backends decode it the old way",
                at + ("type",),
            )
        )
        return
    if o.description != n.description:
        out.append(_doc(path + ".description", at + ("description",)))
    if n.type == "object":
        _fields(o.properties, n.properties, path, at + ("properties",), out)
    elif n.type == "array" and o.items is not None and n.items is not None:
        _field(o.items, n.items, path + ".items", at + ("items",), out)


# -- events ------------------------------------------------------------------------------------


def _events(old: Spec, new: Spec, out: list[Change]) -> None:
    olds = {e.name: e for e in old.events}
    news = {e.name: e for e in new.events}
    for e in old.events:
        if e.name not in news:
            out.append(
                _b(f"events.{e.name}", f"event `{e.name}` removed", "backends still wait for it", ("events",))
            )
    for e in new.events:
        at: tuple[Step, ...] = ("events", e.name)
        if e.name not in olds:
            out.append(_c(f"events.{e.name}", f"event `{e.name}` added", "older backends ignore it", at))
            continue
        _event(olds[e.name], e, at, out)


def _event(o: Event, n: Event, at: tuple[Step, ...], out: list[Change]) -> None:
    if o.description != n.description:
        out.append(
            _c(
                f"events.{n.name}.description",
                "description changed",
                "documentation only",
                at + ("description",),
            )
        )
    _params(o.params, n.params, f"events.{n.name}", at, "event", out)


# -- resources ---------------------------------------------------------------------------------
# A backend reads a resource by its URI and decodes the content by its kind: a resource gone,
# moved or re-encoded fails older backends. Template variables flow backend -> device (the
# backend fills them in), so they follow the tool-parameter rules: narrowing breaks.


def _resources(old: Spec, new: Spec, out: list[Change]) -> None:
    olds = {r.name: r for r in old.resources}
    news = {r.name: r for r in new.resources}
    for r in old.resources:
        if r.name not in news:
            out.append(
                _b(
                    f"resources.{r.name}",
                    f"resource `{r.name}` removed",
                    "older backends still read it",
                    ("resources",),
                )
            )
    for r in new.resources:
        at: tuple[Step, ...] = ("resources", r.name)
        if r.name not in olds:
            out.append(
                _c(f"resources.{r.name}", f"resource `{r.name}` added", "older backends do not read it", at)
            )
            continue
        _resource(olds[r.name], r, at, out)


def _resource(o: Resource, n: Resource, at: tuple[Step, ...], out: list[Change]) -> None:
    base = f"resources.{n.name}"
    for key in ("uri", "uri_template"):
        was, now = getattr(o, key), getattr(n, key)
        if was != now:
            out.append(
                _b(
                    f"{base}.{key}",
                    f"{key} changed from {was!r} to {now!r}",
                    "older backends read the old URI",
                    at + ((key,) if now is not None else ()),
                )
            )
    if o.content != n.content:
        out.append(
            _b(
                f"{base}.content",
                f"content changed from {o.content} to {n.content}",
                "older backends decode it the old way",
                at + ("content",),
            )
        )
    if o.mime_type != n.mime_type:
        out.append(
            _b(
                f"{base}.mime_type",
                f"mime_type changed from {o.mime_type!r} to {n.mime_type!r}",
                "older backends parse it the old way",
                at + ("mime_type",),
            )
        )
    if o.subscribe and not n.subscribe:
        out.append(
            _b(f"{base}.subscribe", "subscriptions dropped", "older backends subscribe to its updates", at)
        )
    elif n.subscribe and not o.subscribe:
        out.append(
            _c(
                f"{base}.subscribe",
                "subscriptions added",
                "older backends do not subscribe",
                at + ("subscribe",),
            )
        )
    if o.max_size != n.max_size:
        out.append(
            _c(
                f"{base}.max_size",
                f"max_size changed from {_show(o.max_size)} to {_show(n.max_size)}",
                "the device's own bound on what it writes; backends read any length",
                at + (("max_size",) if n.max_size is not None else ()),
            )
        )
    if o.description != n.description:
        out.append(_doc(f"{base}.description", at + ("description",)))
    _params(o.params, n.params, base, at, "tool", out)


def breaking(changes: list[Change]) -> list[Change]:
    return [c for c in changes if c.breaking]


__all__ = ["Change", "LocatedChange", "Verdict", "breaking", "diff_specs", "locate_changes"]

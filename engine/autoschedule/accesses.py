"""Which points of a Func each computed stage reads once inlined Funcs are substituted, so
that two reads of the same point count once: code generation reuses an equal subexpression
(llvm_expr memoizes them), so `det = Sxx*Syy - Sxy*Sxy` and `trace = Sxx + Syy` both
inlined into one stage read Sxx once per point, not twice.

Coordinates are compared in affine form (a sum of Vars times integers plus an integer);
coordinates that are not affine (data-dependent reads, divisions) are kept as distinct.
"""

from __future__ import annotations

from collections.abc import Callable

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Definition, Func

# An affine coordinate: ((var, coefficient), ...) sorted, and the constant; or an opaque key.
Affine = tuple[tuple[tuple[str, int], ...], int]
Access = tuple  # one coordinate (Affine or ("opaque", key)) per dimension of the Func read
MAX_TRACKED = 256  # distinct points followed per stage (deep pyramids multiply them)
StageAccesses = dict[tuple[int, int], tuple[Func, Definition, set[Access]]]  # (stage, definition) ->


def affine(e: E.Expr) -> dict[str, int] | None:
    """e as {var: coefficient, "": constant}, or None if it is not an integer affine form."""
    if isinstance(e, E.Const):
        return {"": int(e.value)} if not e.type().is_float() else None
    if isinstance(e, E.Variable):
        return {e.name: 1} if e.kind in ("var", "rvar") else None
    if isinstance(e, (E.Add, E.Sub)):
        a, b = affine(e.a), affine(e.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e, E.Add) else -1
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, 0) + sign * v
        return out
    if isinstance(e, E.Mul):
        a, b = affine(e.a), affine(e.b)
        if a is None or b is None:
            return None
        if set(b) <= {""}:
            a, b = b, a
        if not set(a) <= {""}:
            return None  # a product of two variables
        scale = a.get("", 0)
        return {k: v * scale for k, v in b.items()}
    return None


def _frozen(form: dict[str, int]) -> Affine:
    return tuple(sorted((k, v) for k, v in form.items() if k and v)), form.get("", 0)


def direct_access(call: E.Call) -> Access:
    """The coordinates of a call, in the calling stage's own Vars."""
    out = []
    for a in call.args:
        form = affine(a)
        out.append(_frozen(form) if form is not None else ("opaque", a.key()))
    return tuple(out)


def composed_access(call: E.Call, caller_vars: list[str], caller_access: Access) -> Access:
    """The coordinates of a call made inside an inlined caller, in the Vars of the stage the
    caller is inlined into (the caller being read there at caller_access); a coordinate
    that is not affine there is opaque, distinct from every other."""
    at = dict(zip(caller_vars, caller_access, strict=True))
    out: list = []
    for a in call.args:
        form = affine(a)
        if form is None or any(k and (k not in at or _opaque(at[k])) for k in form):
            out.append(("opaque", a.key(), caller_access))
            continue
        total: dict[str, int] = {"": form.get("", 0)}
        for k, coeff in form.items():
            if not k:
                continue
            terms, const = at[k]
            total[""] += coeff * const
            for var, c in terms:
                total[var] = total.get(var, 0) + coeff * c
        out.append(_frozen(total))
    return tuple(out)


def _opaque(coordinate: object) -> bool:
    return isinstance(coordinate, tuple) and len(coordinate) > 0 and coordinate[0] == "opaque"


def stage_accesses(
    f: Func,
    sites: list,
    is_inlined: Callable[[Func], bool],
    known: dict[int, StageAccesses],
) -> StageAccesses:
    """The distinct points of f read per point of each computed stage (a Func not inlined,
    per definition), following reads through the inlined consumers (whose own accesses are
    in `known`)."""
    result: StageAccesses = {}
    for s in sites:
        c = s.consumer
        if not is_inlined(c):
            key = (id(c), id(s.definition))
            result.setdefault(key, (c, s.definition, set()))[2].add(direct_access(s.call))
            continue
        caller_vars = [a.name for a in c.args()]
        for key, (stage, definition, accesses) in known.get(id(c), {}).items():
            target = result.setdefault(key, (stage, definition, set()))[2]
            for acc in accesses:
                if len(target) >= MAX_TRACKED:
                    break  # read this often, it is computed, not inlined, whatever the exact count
                target.add(composed_access(s.call, caller_vars, acc))
    return result


def translation_calls(f: Func) -> int | None:
    """The number of distinct points f's value reads if it reads each Func or image at one
    point, its own shifted by constants (an element-wise Func, possibly translated, possibly
    reading several fixed channels); None otherwise (a stencil reads one at several points)."""
    own = [a.name for a in f.args()]
    calls: set[tuple] = set()
    point_of: dict[int, tuple] = {}  # per Func or image: its coordinates that involve Vars
    stack = [f.value()]
    while stack:
        e = stack.pop()
        if isinstance(e, E.Call) and e.call_kind in ("func", "image"):
            used, varying = [], []
            for i, a in enumerate(e.args):
                form = affine(a)
                if form is None:
                    return None
                vars_ = [k for k in form if k and form[k]]
                if len(vars_) > 1 or (vars_ and (form[vars_[0]] != 1 or vars_[0] not in own)):
                    return None
                used += vars_
                if vars_:
                    varying.append((i, vars_[0], form.get("", 0)))
            if len(used) != len(set(used)) or point_of.setdefault(id(e.target), tuple(varying)) != tuple(varying):
                return None
            calls.add(e.key())
            continue
        stack.extend(e.children())
    return len(calls)

"""Last pass: simplify every expression, substitute trivial lets, bind each value once,
and drop statements that cannot matter (asserts that always hold, loops that never run)."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Type
from pixelweave.engine.ir.visit import rebuild
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.lower.variable_names import VariableNames
from pixelweave.engine.stmt import (
    AssertStmt,
    Broadcast,
    For,
    IfThenElse,
    LetStmt,
    ProducerConsumer,
    Ramp,
    Stmt,
    make_block,
    no_op,
)
from pixelweave.engine.stmt_visit import StmtMutator, reads_memory


def simplify_stmt(stmt: Stmt) -> Stmt:
    return _Simplify().mutate(stmt)


class _Simplify(StmtMutator):
    """Trivial lets (constants, variables, vector shapes) are carried down in `env` and
    substituted as each expression is simplified: one pass over the statement, where
    substituting each let through its whole body separately was quadratic in the number of
    lets (thousands in a deep pyramid)."""

    def __init__(self) -> None:
        self.env: dict[str, E.Expr] = {}
        self._names_in = VariableNames()  # (most subexpressions mention no trivial let)
        # Substituted subexpressions by (identity, state of env): the statements under one
        # set of trivial lets share subexpressions, and each is rebuilt once for all of them.
        self._state = 0
        self._states = 0
        self._substituted: dict[tuple[int, int], tuple[E.Expr, E.Expr]] = {}
        # The values of the non-trivial lets in scope (structural key -> the let's name), and
        # the names they depend on: a let whose value is already bound becomes an alias of
        # the first one. The members of a compute_with group get equal bounds under
        # different names, and only as aliases can their guards be seen to be the same.
        self._bound: dict[object, tuple[str, int]] = {}  # key -> (name, c): the value is name + c
        self._bound_uses: dict[str, int] = {}
        # Names that substituted aliases and offsets read (`let b = a + 1` substituted as
        # `a + 1`): binding one of them again below would change what the substitution reads.
        self._pinned: dict[str, int] = {}
        self._rebound: set[str] = set()  # names found bound again inside such a substitution

    def mutate_expr(self, e: E.Expr) -> E.Expr:
        return simplify(self._substitute(e) if self.env else e)

    def _substitute(self, e: E.Expr) -> E.Expr:
        """e with the trivial lets of env substituted."""
        if isinstance(e, E.Variable):
            return self.env.get(e.name, e)
        children = e.children()
        if not children:
            return e  # (leaves are answered without the memo: as cheap as a lookup)
        key = (id(e), self._state)
        hit = self._substituted.get(key)
        if hit is not None and hit[0] is e:
            return hit[1]
        if self.env.keys().isdisjoint(self._names_in(e)):
            result = e
        else:
            result = rebuild(e, tuple([self._substitute(c) for c in children]))
        self._substituted[key] = (e, result)
        return result

    def _enter_state(self) -> int:
        """A new state of env (it is about to change); returns the one to restore after."""
        outer = self._state
        self._states += 1
        self._state = self._states
        return outer

    def _with(self, name: str, value: E.Expr, body: Stmt) -> Stmt:
        """body mutated with name replaced by value."""
        bound = self._forget_values_of(name)
        missing = object()
        saved = self.env.get(name, missing)
        self.env[name] = value
        outer = self._enter_state()
        try:
            return self.mutate(body)
        finally:
            self._state = outer
            self._bound = bound
            if saved is missing:
                del self.env[name]
            else:
                self.env[name] = saved  # type: ignore[assignment]

    def _forget_values_of(self, name: str) -> dict[object, tuple[str, int]]:
        """Rebinding name invalidates every remembered value that uses it (or is bound to
        it); returns the table to restore when the rebinding's scope ends."""
        if self._pinned.get(name):
            raise _Captured(name)
        bound = self._bound
        if bound and self._bound_uses.get(name):
            self._bound = {}
        return bound

    def _let_with_value(self, name: str, value: E.Expr, body: Stmt) -> Stmt:
        """let name = value in body, with value remembered while body is mutated (and, for
        `inner + c`, inner as `name - c`)."""
        uses = (*self._names_in(value), name)
        bound = self._forget_values_of(name)
        # In place, undone on the way out (a nested rebinding swaps the table and puts this
        # one back): a copy per let was quadratic in a long chain of lets.
        entries = [(value.key(), (name, 0))]
        split = _split_offset(value)
        if split is not None:
            entries.append((split[0].key(), (name, -split[1])))
        previous = [(key, self._bound.get(key)) for key, _ in entries]  # (a value read from memory is bound again)
        for key, entry in entries:
            self._bound[key] = entry
        for n in uses:
            self._bound_uses[n] = self._bound_uses.get(n, 0) + 1
        try:
            return LetStmt(name, value, self._without(name, body, forget=False))
        finally:
            for n in uses:
                self._bound_uses[n] -= 1
            for key, entry in reversed(previous):
                if entry is None:
                    self._bound.pop(key, None)
                else:
                    self._bound[key] = entry
            self._bound = bound

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        value = self.mutate_expr(s.value)
        if isinstance(value, (Ramp, Broadcast)):
            # Keep the scalar part in a let and the vector shape visible at every use.
            scalar = value.base if isinstance(value, Ramp) else value.value
            if _trivial(scalar):
                base = scalar
            else:
                base = E.Variable(f"{s.name}.base", scalar.type())
            shaped = Ramp(base, value.stride, value.lanes) if isinstance(value, Ramp) else Broadcast(base, value.lanes)
            body = self._with(s.name, shaped, s.body)
            return body if base is scalar else LetStmt(base.name, scalar, body)
        if _trivial(value):
            return self._with(s.name, value, s.body)
        replacement = self._in_terms_of_bound(value)
        if replacement is not None and self._rebound.isdisjoint(self._names_in(replacement)):
            try:
                return self._with_pinned(s.name, replacement, s.body)
            except _Captured as captured:
                if captured.name not in self._names_in(replacement):
                    raise
                # The body binds a name the replacement reads again: it would read the new
                # binding. That name is not substituted for again in this pass, so nested
                # substitutions through it fail once each, not once per enclosing attempt.
                self._rebound.add(captured.name)
        return self._let_with_value(s.name, value, s.body)

    def _with_pinned(self, name: str, replacement: E.Expr, body: Stmt) -> Stmt:
        """body mutated with name replaced by replacement, an expression of names bound
        outside: a binding of one of them in body raises _Captured (the caller keeps the let)."""
        names = self._names_in(replacement)
        for n in names:
            self._pinned[n] = self._pinned.get(n, 0) + 1
        try:
            return self._with(name, replacement, body)
        finally:
            for n in names:
                self._pinned[n] -= 1

    def _in_terms_of_bound(self, value: E.Expr) -> E.Expr | None:
        """value as a let in scope (an alias) or a variable plus a constant, where it is one:
        the let is then substituted as that. Equal values under two names become one name,
        and lets with one base and different offsets (a tile's `x.min` and `x.max`) have a
        constant difference, which decides the tile's loops and their partitions."""
        hit = self._bound.get(value.key())
        if hit is not None:
            return None if reads_memory(value) else _plus(hit[0], hit[1], value.type())
        split = _split_offset(value)
        if split is None:
            return None
        inner, offset = split
        if isinstance(inner, E.Variable):
            return value
        hit = self._bound.get(inner.key())
        if hit is None or reads_memory(inner):
            return None
        return _plus(hit[0], hit[1] + offset, value.type())

    def _without(self, name: str, body: Stmt, forget: bool = True) -> Stmt:
        """body mutated where name is bound by a let of its own (shadowing any outer value);
        forget=False where the caller has already forgotten the values that use name."""
        bound = self._forget_values_of(name) if forget else self._bound
        try:
            if name not in self.env:
                return self.mutate(body)
            saved = self.env.pop(name)
            outer = self._enter_state()
            try:
                return self.mutate(body)
            finally:
                self._state = outer
                self.env[name] = saved
        finally:
            self._bound = bound

    def visit_AssertStmt(self, s: AssertStmt) -> Stmt:  # noqa: N802
        cond = self.mutate_expr(s.condition)
        if isinstance(cond, E.Const) and cond.value:
            return no_op()
        return AssertStmt(cond, s.message, tuple(self.mutate_expr(a) for a in s.args))

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        extent = self.mutate_expr(s.extent)
        if isinstance(extent, E.Const) and extent.value <= 0:
            return no_op()
        if isinstance(extent, E.Const) and extent.value == 1:
            return self.visit_LetStmt(LetStmt(s.name, s.min, s.body))
        return For(s.name, self.mutate_expr(s.min), extent, s.for_type, self._without(s.name, s.body))

    def visit_IfThenElse(self, s: IfThenElse) -> Stmt:  # noqa: N802
        cond = self.mutate_expr(s.condition)
        if isinstance(cond, E.Const):
            chosen = s.then_case if cond.value else s.else_case
            return self.mutate(chosen) if chosen is not None else no_op()
        return IfThenElse(cond, self.mutate(s.then_case), self.mutate(s.else_case))

    def visit_ProducerConsumer(self, s: ProducerConsumer) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        if _is_no_op(body) and not s.is_producer:
            return no_op()
        return ProducerConsumer(s.name, s.is_producer, body)

    def visit_Block(self, s) -> Stmt:  # noqa: N802
        kept = [self.mutate(c) for c in s.stmts]
        return make_block([c for c in kept if not _is_no_op(c)]) if kept else s


def _split_offset(value: E.Expr) -> tuple[E.Expr, int] | None:
    """(inner, c) where value is `inner + c` or `inner - c` of a scalar signed integer type
    (where a sum of offsets is exact: no rounding, and it wraps as the original does)."""
    if isinstance(value, (E.Add, E.Sub)) and isinstance(value.b, E.Const):
        t = value.type()
        if t.is_int() and not t.is_vector():
            return value.a, int(value.b.value) if isinstance(value, E.Add) else -int(value.b.value)
    return None


def _plus(name: str, offset: int, t: Type) -> E.Expr:
    """The variable name plus a constant offset."""
    variable = E.Variable(name, t)
    if offset == 0:
        return variable
    return E.Add(variable, E.Const(t, offset)) if offset > 0 else E.Sub(variable, E.Const(t, -offset))


class _Captured(Exception):
    """A name that a substituted let's replacement reads is bound again inside its scope."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _trivial(value: E.Expr) -> bool:
    return isinstance(value, (E.Const, E.Variable)) and not value.type().is_vector()


def _is_no_op(s: Stmt) -> bool:
    from pixelweave.engine.stmt import Evaluate

    return isinstance(s, Evaluate) and isinstance(s.value, E.Const)

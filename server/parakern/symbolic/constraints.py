"""Polynomial constraint systems over machine, program and data parameters, decided by z3.

A `System` is a conjunction of sympy relations (`8*B*s + 8 <= Z`, `9 <= R`)
plus the schedule's facts, kept apart because they hold everywhere and are
not printed. Every symbol obeys hypothesis (H1) of the paper: integer
symbols are non-negative, 0 <= P_occ <= 1 (other real symbols >= 0).

Every z3 check is bounded by work, not time: a resource limit (z3's `rlimit`, which counts
the solver's steps), so that the same question gets the same answer on an idle and on a
loaded machine, and what is printed never depends on the load. `unknown` is never read as
a proof: `implies` says "proved" only on an unsat answer. Relations that cannot be
translated (a function z3 does not know) are dropped from the hypotheses,
which only weakens them; a satisfying model is then checked against the
dropped relations by substitution before it is reported.
"""
from __future__ import annotations

import collections
import functools
import itertools
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Iterable, Mapping, Sequence, Union

import sympy
import z3

from parakern.symbolic import exact
from parakern.symbolic.cinteger import cdiv, cmod
from parakern.symbolic.printing import to_c, to_text
from parakern.symbolic.relations import integral_sides, relation_of
from parakern.symbolic.symbols import P_OCC

# z3's resource units (`rlimit`) per question. One unit is a step of z3's solver; the questions
# of a case tree take a few thousand each (jacobi1d to transpose: 98 % under 20 000, the most a
# decided one took 85 000, bench/z3_answers.py); this machine does 1 000 to 6 000 a millisecond.
DEFAULT_WORK = 5_000_000
# A wall-clock net under the resource limit, for a z3 procedure that would not count its steps:
# far above what any limit here takes, so reached only by a check that would otherwise hang.
SAFETY_MS = 60_000
MACHINE_NAMES = ("R_B", "Z", "T", "P_occ", "R")
_MAX_POWER = 16          # x**n is expanded into products up to this exponent

Number = Union[int, float]


# ------------------------------------------------------------------ systems

@dataclass(frozen=True)
class System:
    """A conjunction of relations, with the facts that hold wherever it is used."""
    relations: tuple = ()
    facts: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "relations", _unique(relation_of(r) for r in self.relations))
        object.__setattr__(self, "facts", _unique(relation_of(f) for f in self.facts))

    def add(self, relation) -> "System":
        return replace(self, relations=self.relations + (relation,))

    def with_facts(self, facts: Iterable) -> "System":
        return replace(self, facts=self.facts + tuple(facts))

    def all(self) -> tuple:
        """Relations then facts: everything that holds."""
        return self.relations + self.facts

    def symbols(self) -> tuple[str, ...]:
        """Names of the symbols of the relations (not the facts), sorted."""
        return tuple(sorted({s.name for r in self.relations for s in r.free_symbols}))

    def __str__(self) -> str:
        return " && ".join(f"({to_c(r)})" if isinstance(r, sympy.Or) else to_c(r) for r in self.relations) or "1"


def _unique(items) -> tuple:
    """Without duplicates or `true`, first occurrence kept."""
    return tuple(r for r in dict.fromkeys(items) if r is not sympy.true)


@dataclass(frozen=True)
class Verdict:
    """status: "sat" / "unsat" / "unknown" (consistency) or "proved" / "refuted" / "unknown"
    (coverage); witness: a model (sat) or a counterexample (refuted), by symbol name."""
    status: str
    witness: "dict[str, Number] | None" = None
    reason: str = ""


# ------------------------------------------------------------------ sympy -> z3

class Untranslatable(ValueError):
    """A sympy construct with no z3 counterpart here."""


@dataclass
class Env:
    """What a translation collects besides the term: the symbols it met and the side
    conditions that define the quotients of floor, ceiling and Mod.

    `rename` maps symbol names to z3 terms (copies of loop variables); `renamed()`
    gives an environment sharing the symbols, side conditions and quotients.
    """
    rename: dict = field(default_factory=dict)
    symbols: dict = field(default_factory=dict)     # name -> z3 constant (H1 applies to these)
    side: list = field(default_factory=list)
    quotients: dict = field(default_factory=dict)   # (num id, den id) -> (num, den, q)
    fresh_names: list = field(default_factory=list)

    def renamed(self, mapping: Mapping[str, z3.ExprRef]) -> "Env":
        return Env(dict(mapping), self.symbols, self.side, self.quotients, self.fresh_names)

    def fresh(self, make, prefix: str) -> z3.ExprRef:
        """A new z3 constant; `?` keeps it apart from every C name."""
        self.fresh_names.append(f"?{prefix}{len(self.fresh_names)}")
        return make(self.fresh_names[-1])

    def variable(self, symbol: sympy.Symbol) -> z3.ExprRef:
        if symbol.name in self.rename:
            return self.rename[symbol.name]
        if symbol.name not in self.symbols:
            real = symbol.is_integer is not True and symbol.is_real is True
            self.symbols[symbol.name] = z3.Real(symbol.name) if real else z3.Int(symbol.name)
        return self.symbols[symbol.name]

    def quotient(self, num: z3.ExprRef, den: z3.ExprRef) -> z3.ExprRef:
        """floor(num/den) as a fresh integer pinned by side conditions (none when den = 0,
        where C is undefined anyway)."""
        key = (num.get_id(), den.get_id())
        if key not in self.quotients:
            q = self.quotient_constant(num, den)
            positive = z3.And(den * q <= num, num < den * q + den)
            negative = z3.And(den * q >= num, num > den * q + den)
            if z3.is_int_value(den):  # the usual `/ 2`: one case, no implication
                self.side.append(positive if den.as_long() > 0 else negative if den.as_long() < 0
                                 else z3.BoolVal(True))
            else:
                self.side.append(z3.Implies(den > 0, positive))
                self.side.append(z3.Implies(den < 0, negative))
            self.quotients[key] = (num, den, q)
        return self.quotients[key][2]

    def quotient_constant(self, num: z3.ExprRef, den: z3.ExprRef) -> z3.ExprRef:
        return self.fresh(z3.Int, "q")

    def truncated(self, num: z3.ExprRef, den: z3.ExprRef) -> z3.ExprRef:
        """C's num / den (truncated toward zero) as a fresh integer q pinned by side conditions:
        the remainder num - den*q has the sign of num and is smaller than |den| (none when
        den = 0, where C is undefined)."""
        key = ("trunc", num.get_id(), den.get_id())
        if key not in self.quotients:
            q = self.truncated_constant(num, den)
            r = num - den * q
            if z3.is_int_value(den):
                size = abs(den.as_long())
                bounded = z3.And(r < size, -size < r) if size else z3.BoolVal(True)
                nonzero = z3.BoolVal(size != 0)
            else:
                size = z3.If(den >= 0, den, -den)
                bounded = z3.And(r < size, -size < r)
                nonzero = den != 0
            self.side.append(z3.Implies(nonzero, z3.And(bounded, z3.Implies(num >= 0, r >= 0),
                                                        z3.Implies(num < 0, r <= 0))))
            self.quotients[key] = (num, den, q)
        return self.quotients[key][2]

    def truncated_constant(self, num: z3.ExprRef, den: z3.ExprRef) -> z3.ExprRef:
        return self.fresh(z3.Int, "t")

    def quotient_of(self, num: sympy.Expr, den: sympy.Expr) -> z3.ExprRef:
        """floor(num/den) for integer num and den: the operands translated, then `quotient`.
        An environment may pin its quotients another way (analysis/prover.py does)."""
        return self.quotient(_term(num, self), _term(den, self))

    def hypotheses(self) -> list:
        """(H1) for every symbol met, then the side conditions."""
        return _h1(self.symbols) + list(self.side)


def _h1(symbols: Mapping[str, z3.ExprRef]) -> list:
    """Hypothesis (H1): every symbol >= 0, and P_occ <= 1."""
    h1 = []
    for name, var in sorted(symbols.items()):
        h1 += _h1_of(name, var)
    return h1


_H1_MADE: "collections.OrderedDict[tuple, tuple]" = collections.OrderedDict()


def _h1_of(name: str, var: z3.ExprRef) -> tuple:
    """H1 for one constant, made once: every question asks it again of the same constants, and
    z3's Python operators cost more than a question's check where there are many of them."""
    key = (name, var.sort_kind())
    made = _H1_MADE.get(key)
    if made is None or not made[0].eq(var):
        made = (var, (var >= 0, var <= 1) if name == P_OCC.name else (var >= 0,))
        _H1_MADE[key] = made
        if len(_H1_MADE) > 4096:
            _H1_MADE.popitem(last=False)
    return made[1]


def to_z3(expr, env: "Env | None" = None) -> z3.ExprRef:
    """A sympy term or boolean as z3; side conditions of quotients go to `env.side`."""
    env = Env() if env is None else env
    expr = sympy.sympify(expr)
    if _is_formula(expr):
        return _boolean(expr, env)
    return _term(expr, env)


def _is_formula(e) -> bool:
    """A truth value (sympy's Symbol is a Boolean too: it counts as a term here)."""
    if isinstance(e, sympy.Piecewise):
        return _is_formula(e.args[0].expr)
    return isinstance(e, (sympy.Rel, sympy.logic.boolalg.BooleanFunction,
                          sympy.logic.boolalg.BooleanAtom))


def _term(e, env: Env) -> z3.ExprRef:
    if e.is_Integer:
        return z3.IntVal(int(e))
    if e.is_Rational:
        return z3.Q(int(e.p), int(e.q))
    if e.is_Float:
        f = Fraction(float(e))
        return z3.Q(f.numerator, f.denominator)
    if e.is_Symbol:
        return env.variable(e)
    if e.is_Add:
        return z3.Sum([_term(a, env) for a in e.args])
    if e.is_Mul:
        return functools.reduce(lambda x, y: x * y, [_term(a, env) for a in e.args])
    if e.is_Pow and e.exp.is_Integer and 0 <= int(e.exp) <= _MAX_POWER:
        base = _term(e.base, env)
        return functools.reduce(lambda x, y: x * y, [base] * int(e.exp), z3.IntVal(1))
    if isinstance(e, sympy.floor):
        return _floor(e.args[0], env)
    if isinstance(e, sympy.ceiling):
        return -_floor(-e.args[0], env)
    if isinstance(e, sympy.Mod):
        a, b = e.args
        return _term(a, env) - _term(b, env) * _floor(a / b, env)
    if isinstance(e, (cdiv, cmod)):   # C's truncating / and %
        num, den = _term(e.args[0], env), _term(e.args[1], env)
        q = env.truncated(num, den)
        return q if isinstance(e, cdiv) else num - den * q
    if isinstance(e, (sympy.Max, sympy.Min)):
        pick = (lambda x, y: z3.If(x >= y, x, y)) if isinstance(e, sympy.Max) else \
            (lambda x, y: z3.If(x <= y, x, y))
        return functools.reduce(pick, [_term(a, env) for a in e.args])
    if isinstance(e, sympy.Abs):
        x = _term(e.args[0], env)
        return z3.If(x >= 0, x, -x)
    if isinstance(e, sympy.Piecewise):
        return _piecewise(e, env, _term)
    raise Untranslatable(f"no z3 term for {e}")


def _floor(x, env: Env) -> z3.ExprRef:
    num, den, integral = _fraction(x)
    if integral:
        if den == 1:
            return _term(num, env)
        return env.quotient_of(num, den)
    return z3.ToInt(_term(x, env))  # a real argument: z3's ToInt is floor


@functools.lru_cache(maxsize=16384)
def _fraction(x) -> tuple:
    """(numerator, denominator, both integers?) of x over one denominator: sympy's `together`
    is slow, and the dependence tests and the footprint prover translate the same floors
    again for every variant of a schedule."""
    num, den = sympy.together(sympy.sympify(x)).as_numer_denom()
    return num, den, bool(num.is_integer and den.is_integer)


def _piecewise(e: sympy.Piecewise, env: Env, translate) -> z3.ExprRef:
    """Nested If; without a final `True` branch the value elsewhere is a fresh unknown."""
    pieces = list(e.args)
    if pieces[-1].cond is sympy.true:
        result = translate(pieces.pop().expr, env)
    else:
        kind = z3.Bool if _is_formula(pieces[-1].expr) else z3.Int
        result = env.fresh(kind, "undefined")
    for piece in reversed(pieces):
        result = z3.If(_boolean(piece.cond, env), translate(piece.expr, env), result)
    return result


_COMPARE = {
    sympy.Eq: lambda a, b: a == b, sympy.Ne: lambda a, b: a != b,
    sympy.Le: lambda a, b: a <= b, sympy.Lt: lambda a, b: a < b,
    sympy.Ge: lambda a, b: a >= b, sympy.Gt: lambda a, b: a > b,
}


def _boolean(r, env: Env) -> z3.ExprRef:
    if r is sympy.true:
        return z3.BoolVal(True)
    if r is sympy.false:
        return z3.BoolVal(False)
    if isinstance(r, sympy.Rel):
        return _relational(r, env)
    if isinstance(r, sympy.And):
        return z3.And([_boolean(a, env) for a in r.args])
    if isinstance(r, sympy.Or):
        return z3.Or([_boolean(a, env) for a in r.args])
    if isinstance(r, sympy.Not):
        return z3.Not(_boolean(r.args[0], env))
    if isinstance(r, sympy.Implies):
        return z3.Implies(_boolean(r.args[0], env), _boolean(r.args[1], env))
    if isinstance(r, sympy.Piecewise):
        return _piecewise(r, env, _boolean)
    raise Untranslatable(f"no z3 formula for {r}")


def _relational(r: sympy.Rel, env: Env) -> z3.ExprRef:
    op = next((_COMPARE[k] for k in _COMPARE if isinstance(r, k)), None)
    if op is None:
        raise Untranslatable(f"no z3 formula for {r}")
    if r.has(sympy.oo, -sympy.oo, sympy.zoo):
        return _with_infinity(r, env)
    lhs, rhs = integral_sides(r.lhs, r.rhs)
    return op(_term(lhs, env), _term(rhs, env))


def _with_infinity(r: sympy.Rel, env: Env) -> z3.ExprRef:
    """A counter of oo means "never fits": compare extended values by hand."""
    folded = sympy.piecewise_fold(r)
    if folded != r:
        return _boolean(folded, env)
    sides = [r.lhs, r.rhs]
    infinite = [1 if s == sympy.oo else -1 if s == -sympy.oo else 0 for s in sides]
    if any(s.has(sympy.oo, -sympy.oo, sympy.zoo) for s, i in zip(sides, infinite) if i == 0) \
            or r.has(sympy.zoo):
        raise Untranslatable(f"infinity inside an expression: {r}")
    # -oo < every finite value < oo: compare the signs of infinity (0 for finite)
    return z3.BoolVal(bool(_COMPARE[type(r)](infinite[0], infinite[1])))


class _Canonical(Env):
    """An environment whose constants mean the same in every translation: a quotient is
    named after its operands (floor(N/B0) is one z3 constant wherever it occurs, as inside
    one Env) and other fresh unknowns are numbered process-wide (never shared by chance).
    So each relation is translated once (`_translated`) and serves every question."""

    def fresh(self, make, prefix: str) -> z3.ExprRef:
        return make(f"?{prefix}#{next(_FRESH)}")

    def quotient_constant(self, num: z3.ExprRef, den: z3.ExprRef) -> z3.ExprRef:
        return z3.Int(f"?floor({num.sexpr()} / {den.sexpr()})")

    def truncated_constant(self, num: z3.ExprRef, den: z3.ExprRef) -> z3.ExprRef:
        return z3.Int(f"?trunc({num.sexpr()} / {den.sexpr()})")


_FRESH = itertools.count()


@dataclass(frozen=True)
class _Translated:
    formula: z3.ExprRef
    symbols: tuple              # ((name, z3 constant), ...)
    side: tuple                 # side conditions of its quotients


@functools.lru_cache(maxsize=16384)
def _translated(relation) -> "_Translated | str":
    """A relation (or goal) in z3 with what it needs, or why it cannot be translated."""
    env = _Canonical()
    try:
        formula = to_z3(relation, env)
    except (Untranslatable, z3.Z3Exception, TypeError) as exc:
        return str(exc)
    return _Translated(formula, tuple(env.symbols.items()), tuple(env.side))


# ------------------------------------------------------------------ solving

def z3_check(formulas, work: int = DEFAULT_WORK):
    """(answer, model or None, reason, work done) for a conjunction of z3 formulas, in at
    most `work` of z3's resource units.

    Equations first (solve-eqs eliminates `dim == q0`-style definitions, which makes
    the nonlinear problems of subscripts and floors several times faster than z3's
    default strategy); z3's default solver only where that one gives up early.
    """
    work = max(int(work), 1)
    ctx = formulas[0].ctx if formulas else None     # the formulas' z3 context, the global one usually
    solver = limited(z3.Then("simplify", "solve-eqs", "smt", ctx=ctx).solver(), work)
    solver.add(*formulas)
    start = _count(solver)
    answer = solver.check()
    done = _count(solver) - start
    if answer == z3.unknown and solver.reason_unknown() not in _OUT_OF_WORK and done < work:
        solver = limited(z3.Solver(ctx=ctx), work - done)
        solver.add(*formulas)
        answer = solver.check()
        done = _count(solver) - start
    model = solver.model() if answer == z3.sat else None
    reason = solver.reason_unknown() if answer == z3.unknown else ""
    return answer, model, reason, done


_OUT_OF_WORK = ("canceled", "max. resource limit exceeded", "timeout")


def limited(solver: z3.Solver, work: int) -> z3.Solver:
    """The solver with a resource limit of `work` units per check (z3 counts from where the
    context is at the check), and the wall-clock net."""
    solver.set("rlimit", max(int(work), 1))
    solver.set("timeout", SAFETY_MS)
    return solver


def _count(solver: z3.Solver) -> int:
    """The resource units the solver's context has used so far (z3 leaves a zero count out)."""
    try:
        return solver.statistics().get_key_value("rlimit count")
    except z3.Z3Exception:
        return 0


@dataclass(frozen=True)
class _Outcome:
    status: str                      # z3's answer: "sat" / "unsat" / "unknown"
    witness: "dict[str, Number] | None"
    reason: str
    work: int = field(default=0, compare=False)   # z3's resource units it took


def _solve(premises: Iterable, goals: Iterable = (), work: int = DEFAULT_WORK,
           names: Iterable[str] = ()) -> _Outcome:
    """Satisfiability of premises ∧ goals ∧ H1 (memoised: the case tree asks the same
    questions of many branches, and every input is an immutable sympy object)."""
    return _solve_cached(tuple(premises), tuple(goals), work, tuple(names))


# Most questions take z3 a few thousand units; the rest are nonlinear problems where it often
# gives up only at the limit, and nearly always because of facts like N % (B1*s) == 0 that tie
# a data parameter to products of program parameters. Those get staged answers. QUICK_WORK is
# above what every question of the samples that z3 decides whole takes (17 500 at most, 97 % under
# 10 000: bench/z3_answers.py), and below what those it does not decide ran to under the former
# time limit of 30 ms (up to 230 000): 5 to 25 ms here, depending on the question.
QUICK_WORK = 25_000
EXTENSIONS = 8           # models of the easy part tried for an extension to the whole
SMALL_PINNED = 64        # the bound on divisors and factors of the first model tried


@functools.lru_cache(maxsize=8192)
def _solve_cached(premises: tuple, goals: tuple, work: int, names: tuple) -> _Outcome:
    """Satisfiability of premises ∧ goals ∧ H1 in at most `work` resource units, in stages
    (each answer is exact):

    1. the whole question, for QUICK_WORK;
    2. without the premises that divide by a parameter or floor a product: "unsat" there is
       unsat here too (fewer premises); a model there is extended to every premise with
       the divisors and factors of those premises fixed to its values (what is left is
       then linear: N, given B0, B1 and s); the first model asked for has those divisors and
       factors at most SMALL_PINNED; where values cannot be extended, the easy part is asked
       for other ones, EXTENSIONS times and half the work at most;
    3. the whole question again, for the rest of the work.
    """
    outcome = _attempt(premises, goals, min(work, QUICK_WORK), names)
    if outcome.status != "unknown" or work <= QUICK_WORK:
        return outcome
    budget = _Budget(work - outcome.work)
    staged = _staged(premises, goals, work, budget, names)
    if staged is not None:
        return staged
    rest = budget.left(work)
    return _attempt(premises, goals, rest, names) if rest > QUICK_WORK else outcome


class _Budget:
    """The resource units a question has left, spent by its attempts."""

    def __init__(self, units: int):
        self.units = units

    def left(self, at_most: int) -> int:
        return max(0, min(at_most, self.units))

    def spend(self, outcome: _Outcome) -> _Outcome:
        self.units -= outcome.work
        return outcome


def _staged(premises: tuple, goals: tuple, work: int, budget: _Budget,
            names: tuple) -> "_Outcome | None":
    """Stage 2 of _solve_cached: an exact answer from the premises without the hard ones
    and an extension of a model of them, or None."""
    hard = {p: _nonlinear_divisions(relation_of(p)) for p in premises}
    easy = tuple(p for p in premises if not hard[p])
    if len(easy) == len(premises):
        return None

    each = max(QUICK_WORK, work // 4)
    stage_end = budget.units - max(QUICK_WORK, work // 2)     # half the work at most
    symbols = sorted(set().union(*hard.values()), key=str)
    pinned = {s.name for s in symbols}
    tried: list = []

    def attempt(*args, **kwargs) -> _Outcome:
        return budget.spend(_attempt(*args, **kwargs))

    # First with the divisors and factors small: z3's model of the easy part often has them
    # huge (s = 2**31 - 1), which no N within int's range is a multiple of.
    small = tuple(sympy.Le(s, SMALL_PINNED) for s in symbols)
    guided = attempt(easy + small, goals, budget.left(each), names)
    fixed = {n: v for n, v in (guided.witness or {}).items() if n in pinned and isinstance(v, int)}
    if guided.status == "sat" and fixed and budget.left(each) > 0:
        extended = attempt(premises, goals, budget.left(each), names, fixed=fixed)
        if extended.status == "sat":
            return extended
        tried.append(fixed)
    first = True
    while len(tried) < EXTENSIONS and budget.units > stage_end and budget.left(each) > 0:
        sliced = attempt(easy, goals, budget.left(each), names, avoid=() if first else tuple(tried))
        if sliced.status == "unsat" and first:
            return sliced
        first = False
        # the witness's integers: a divisor or a factor is an integer parameter
        fixed = {n: v for n, v in (sliced.witness or {}).items() if n in pinned and isinstance(v, int)}
        if sliced.status != "sat" or not fixed or budget.left(each) <= 0:
            break
        if fixed in tried:
            continue                  # the guided values again: the next asks for others
        extended = attempt(premises, goals, budget.left(each), names, fixed=fixed)
        if extended.status == "sat":
            return extended
        tried.append(fixed)           # those values cannot be extended: ask for others
    return None


@functools.lru_cache(maxsize=16384)
def _nonlinear_divisions(relation) -> frozenset:
    """The symbols that make a floor, ceiling or Mod of the relation nonlinear: those of a
    divisor, and those of a dividend that is a product (empty: none is)."""
    found = set()
    for node in sympy.preorder_traversal(relation):
        if isinstance(node, (sympy.floor, sympy.ceiling)):
            quotient = node.args[0]
        elif isinstance(node, (sympy.Mod, cdiv, cmod)):
            quotient = node.args[0] / node.args[1]
        else:
            continue
        num, den = sympy.fraction(sympy.together(quotient))
        found |= den.free_symbols | (set() if _linear(num) else num.free_symbols)
    return frozenset(found)


def _linear(expr) -> bool:
    if not expr.free_symbols:
        return True
    try:
        return sympy.Poly(expr, *expr.free_symbols).total_degree() <= 1
    except sympy.PolynomialError:
        return False


def _attempt(premises: tuple, goals: tuple, work: int, names: tuple,
             fixed: "Mapping[str, int] | None" = None, avoid: tuple = ()) -> _Outcome:
    """One z3 question: premises ∧ goals ∧ H1, with some symbols `fixed` to values and
    none of the assignments in `avoid`.

    Premises that cannot be translated are dropped (a weaker hypothesis): a model
    is then reported only if it satisfies them by substitution. Goals must translate.
    """
    symbols, side, formulas, dropped = {}, {}, [], []
    for relation, is_goal in [(relation_of(p), False) for p in premises] + [(g, True) for g in goals]:
        done = _translated(relation)
        if isinstance(done, str):
            if is_goal:
                return _Outcome("unknown", None, done)
            dropped.append((relation, done))
            continue
        for name, var in done.symbols:
            if not symbols.setdefault(name, var).eq(var):
                return _Outcome("unknown", None, f"'{name}' is both an integer and a real")
        side.update((c.get_id(), c) for c in done.side)
        formulas.append(done.formula)
    for name, value in (fixed or {}).items():
        if name in symbols:
            formulas.append(symbols[name] == value)
    for assignment in avoid:
        differ = [symbols[n] != v for n, v in assignment.items() if n in symbols]
        if differ:
            formulas.append(z3.Or(differ))
    answer, model, reason, used = z3_check(formulas + _h1(symbols) + list(side.values()), work)
    if answer == z3.unsat:
        return _Outcome("unsat", None, "", used)
    if answer != z3.sat:
        return _Outcome("unknown", None, reason, used)
    wanted = set(names) | set(symbols) | {s.name for r, _ in dropped for s in r.free_symbols}
    witness = _witness(model, symbols, sorted(wanted))
    for relation, why in dropped:
        if not _holds(relation, witness):
            return _Outcome("unknown", None, f"could not use {relation} ({why})", used)
    _remember_point(witness)
    return _Outcome("sat", witness, "", used)


def _witness(model: z3.ModelRef, symbols: Mapping[str, z3.ExprRef], names: list[str]) -> dict[str, Number]:
    values = {}
    for name in names:
        var = symbols.get(name)
        if var is None:
            values[name] = 0  # met only in a dropped premise: any value allowed by H1
            continue
        value = model.eval(var, model_completion=True)
        if z3.is_int_value(value):
            values[name] = value.as_long()
        elif z3.is_rational_value(value):
            values[name] = float(Fraction(value.numerator_as_long(), value.denominator_as_long()))
        else:  # an algebraic number
            values[name] = float(value.approx(20).as_fraction())
    return values


def _holds(relation, witness: Mapping[str, Number]) -> bool:
    """Does a relation evaluate to True at the witness (by exact substitution)?"""
    values = {s: sympy.nsimplify(witness.get(s.name, 0), rational=True) for s in relation.free_symbols}
    try:
        return bool(relation.xreplace(values) == sympy.true)
    except TypeError:
        return False


def consistent(system: System, work: int = DEFAULT_WORK) -> Verdict:
    """Is there a point satisfying the relations, the facts and H1? The witness gives
    every symbol of the relations (and of the facts). Where z3 gives up (products of
    parameters inside floors and ceilings: threads per block in registers per block), a
    few small parameter values are tried (`_sampled`): any that z3 then satisfies is a
    witness, so "unknown" is left for systems that are truly hard."""
    quick = max(1, work // 4)   # a hard system is rarely decided by waiting longer
    outcome = _solve(system.all(), (), quick, system.symbols())
    if outcome.status == "unknown":
        outcome = _sampled(system.all(), system.symbols(), quick) or _solve(
            system.all(), (), work, system.symbols())
    return Verdict(outcome.status, outcome.witness, outcome.reason)


# Witnesses: the point shown beside a case. z3's own model of a system is any point, often at
# the edge of int's range (N = 2147450882) where small values exist, and it changes with the
# state of z3's context (the order its terms were made in): the same file printed other
# witnesses from one run to the next. A witness is asked of a z3 context of its own, the
# parameters bounded small first: the same system gets the same, small witness every time.
WITNESS_BOUNDS = ((64, 2**20), (2**16, 2**24), (None, None))  # (parameters, machine values) per try
WITNESS_RLIMIT = 1_500_000     # z3's resource units per try (a question takes a few thousand)


class Witnesses:
    """Small witnesses of systems, each the same whatever was asked of z3 before in this process
    (`find`). One per run of questions (a case tree): the context of their own is made once (10 ms)
    and each question's answer depends on the questions before it in the run only."""

    def __init__(self):
        self._context: "z3.Context | None" = None

    def find(self, system: System, work: int = DEFAULT_WORK) -> Verdict:
        """consistent(system), its witness the first model with every integer parameter at most
        64, then 65536, then any; machine values (MACHINE_NAMES) at most 2^20, then 2^24, then any.
        Where none of those is found within z3's resource limit (or a relation has no z3
        form), `consistent` answers instead."""
        premises = system.all()
        done = [_translated(relation_of(p)) for p in premises]
        if any(isinstance(d, str) for d in done):
            return consistent(system, work)
        symbols, side, formulas = {}, {}, []
        for d in done:
            for name, var in d.symbols:
                if not symbols.setdefault(name, var).eq(var):
                    return consistent(system, work)
            side.update((c.get_id(), c) for c in d.side)
            formulas.append(d.formula)
        if self._context is None:
            self._context = z3.Context()
        ctx = self._context
        base = [f.translate(ctx) for f in formulas + _h1(symbols) + list(side.values())]
        mine = {name: var.translate(ctx) for name, var in sorted(symbols.items())}
        for parameters, machine in WITNESS_BOUNDS:
            solver = limited(z3.Then("simplify", "solve-eqs", "smt", ctx=ctx).solver(), WITNESS_RLIMIT)
            solver.add(*base)
            for name, var in mine.items():
                bound = machine if name in MACHINE_NAMES else parameters
                if bound is not None and var.is_int():
                    solver.add(var <= bound)
            answer = solver.check()
            if answer == z3.sat:
                return Verdict("sat", _witness(solver.model(), mine, sorted(set(system.symbols()) | set(mine))))
            if answer == z3.unsat and parameters is None:
                return Verdict("unsat")
        return consistent(system, work)


def possible(system: System, work: int = DEFAULT_WORK) -> bool:
    """Not proved inconsistent: consistent(system).status != "unsat", answered by a point
    remembered from an earlier question where one satisfies the system (no witness wanted)."""
    relations = system.all()
    if relations and _known_point(relations[1:], relations[0]):
        return True
    return consistent(system, work).status != "unsat"


_SAMPLE_VALUES = (1, 2, 4, 8, 16, 32, 3, 64, 128, 6)


def _sampled(premises: tuple, names: tuple, work: int) -> "_Outcome | None":
    """A witness with the integer parameters that appear in products fixed to small values
    (deterministic), the rest (machine values, derived scalars) left to z3; None if none found."""
    relations = [relation_of(p) for p in premises]
    nonlinear = sorted({s.name for r in relations for t in sympy.preorder_traversal(r)
                        if isinstance(t, sympy.Mul) for s in t.free_symbols
                        if s.is_integer and s.name not in MACHINE_NAMES}
                       - {r.lhs.name for r in relations if isinstance(r, sympy.Eq) and r.lhs.is_Symbol})
    if not nonlinear or len(nonlinear) > 6:
        return None
    for attempt in range(12):
        values = {n: _SAMPLE_VALUES[(attempt * (i + 3) + i) % len(_SAMPLE_VALUES)]
                  for i, n in enumerate(nonlinear)}
        # unevaluated: the same relation, without sympy's assumptions asked of each
        fixed = tuple(sympy.Eq(sympy.Symbol(n, integer=True), sympy.Integer(v), evaluate=False)
                      for n, v in values.items())
        outcome = _solve(tuple(premises) + fixed, (), work, names)
        if outcome.status == "sat":
            return outcome
    return None


def implies(system: System, relation, work: int = DEFAULT_WORK) -> str:
    """"proved" when relations ∧ facts ∧ H1 entail `relation`, "refuted" when a point
    satisfies them and not it, "unknown" otherwise (out of work, untranslatable).
    An inconsistent system implies everything."""
    return implication(system, relation, work).status


def implication(system: System, relation, work: int = DEFAULT_WORK) -> Verdict:
    """implies(), with the point that refutes it where z3 gave one (the witness)."""
    goal = sympy.Not(relation_of(relation))
    if _known_point(system.all(), goal):
        return Verdict("refuted")
    outcome = _solve(system.all(), (goal,), work)
    status = {"unsat": "proved", "sat": "refuted"}.get(outcome.status, "unknown")
    return Verdict(status, outcome.witness if status == "refuted" else None, outcome.reason)


# Integer models z3 gave lately. A case tree asks about siblings: the point that put a
# branch on the refuse side of `need <= R_B` is the counterexample to that relation being
# implied by the accept side's others, which `simplify` asks next. Checking such points
# exactly (parakern.symbolic.exact) answers most "is it implied?" questions without z3.
_POINTS: "collections.deque[dict]" = collections.deque(maxlen=64)


def _remember_point(witness: Mapping[str, Number]) -> None:
    if witness and all(isinstance(v, int) for v in witness.values()):
        _POINTS.append(dict(witness))


def _known_point(premises: Iterable, goal) -> bool:
    """Does a remembered point satisfy every premise and the goal (and H1: z3 gave it under
    H1)? False when there is none or a relation cannot be evaluated exactly."""
    if not _POINTS:
        return False
    compiled = _tests([goal] + [relation_of(p) for p in premises])   # the goal rejects most points
    if compiled is None:
        return False
    tests, symbols = compiled
    needed = {s.name for s in symbols}
    for point in reversed(_POINTS):
        if not needed <= point.keys():
            continue
        env = {s: point[s.name] for s in symbols}
        try:
            if all(test(env) for test in tests):
                return True
        except (ZeroDivisionError, TypeError):
            continue
    return False


def separates(point: Mapping[str, Number], inside: tuple, outside: tuple) -> bool:
    """True where the point, a z3 model of some system under the same facts (it values every
    symbol that system names), satisfies every relation of `inside` and fails one of `outside`,
    in exact arithmetic: proof that the region of `inside` is not within that of `outside`. A
    symbol the point lacks is free there: it is tried at both ends H1 allows (0, and 2^40 for
    an integer, 1 for P_occ). False where nothing is proved."""
    compiled = _separation(tuple(inside), tuple(outside))
    if compiled is None:
        return False
    holds, fails, symbols = compiled
    free = [s for s in symbols if s.name not in point]
    known = {s: point[s.name] for s in symbols if s.name in point}
    ends = ({s: 0 for s in free}, {s: (2**40 if s.is_integer else 1) for s in free}) if free else ({},)
    for end in ends:
        values = {**known, **end} if end else known
        try:
            if holds(values) and fails(values):
                return True
        except (ZeroDivisionError, TypeError):
            continue
    return False


@functools.lru_cache(maxsize=4096)
def _separation(inside: tuple, outside: tuple):
    """(all of inside hold, one of outside fails, their symbols) as functions of {symbol: value};
    None where a relation is not compiled."""
    held, failed = _tests(relation_of(r) for r in inside), _tests(relation_of(r) for r in outside)
    if held is None or failed is None:
        return None
    (holds, ins), (fails, outs) = held, failed
    return (lambda values: all(t(values) for t in holds)), (lambda values: not all(t(values) for t in fails)), \
        tuple(ins | outs)


def _tests(relations) -> "tuple[list, set] | None":
    """(each relation compiled to exact arithmetic, the symbols they name); None where one is
    not compiled (_point_test)."""
    tests, symbols = [], set()
    for relation in relations:
        test = _point_test(relation)
        if test is None:
            return None
        tests.append(test[0])
        symbols |= test[1]
    return tests, symbols


@functools.lru_cache(maxsize=16384)
def _point_test(relation) -> "tuple | None":
    """(the relation compiled to exact arithmetic, its symbols); None for a relation that
    is not a comparison of terms parakern.symbolic.exact evaluates."""
    compiled = exact.compiled(relation) if isinstance(relation, sympy.Rel) else None
    return None if compiled is None else (compiled, frozenset(relation.free_symbols))


def covers(facts, systems: Iterable, uncovered: Iterable = (),
           work: int = DEFAULT_WORK) -> Verdict:
    """Proves facts ∧ H1 ⇒ OR(systems) ∨ OR(uncovered): every point is in some case or
    in a region declared uncovered. `facts` is a System or relations; the facts of the
    systems are premises too. "refuted" comes with a point that no case covers."""
    premises = list(facts.all() if isinstance(facts, System) else facts)
    alternatives = []
    for item in list(systems) + list(uncovered):
        if isinstance(item, System):
            premises.extend(item.facts)
            alternatives.append(sympy.And(*item.relations))
        elif isinstance(item, (list, tuple)):
            alternatives.append(sympy.And(*(relation_of(r) for r in item)))
        else:
            alternatives.append(relation_of(item))
    goal = sympy.Not(sympy.Or(*alternatives))
    names = sorted({s.name for a in alternatives for s in a.free_symbols})
    outcome = _solve(_unique(premises), (goal,), work, names)
    status = {"unsat": "proved", "sat": "refuted"}.get(outcome.status, "unknown")
    return Verdict(status, outcome.witness if status == "refuted" else None, outcome.reason)


def union(systems: Sequence[System]) -> System:
    """The points of any of the systems (which share their facts) as one system: the relations
    they all have, then what is left of each as a conjunction of clauses (the disjunction in
    conjunctive form, each clause a relation, one relation or an `∨` of several). A relation
    and its negation are one atom of that formula (`R_B < n` is ¬`n <= R_B`), so two paths of
    a tree that differ in one branch become the relations they share: (R_B < n) ∨ (n <= R_B ∧
    Z < m) is `R_B < n ∨ Z < m`."""
    systems = list(systems)
    first = systems[0]
    shared = [r for r in first.relations if all(r in s.relations for s in systems[1:])]
    rests = [[r for r in s.relations if r not in shared] for s in systems]
    if any(not rest for rest in rests):      # one system is the shared part: the union is that part
        return replace(first, relations=tuple(shared))
    atoms: dict = {}                          # canonical relation -> its boolean symbol

    def atom(relation) -> sympy.Basic:
        relation = canonical(relation)
        negation = canonical(sympy.Not(relation))
        if relation not in atoms and negation in atoms:
            return sympy.Not(atoms[negation])
        return atoms.setdefault(relation, sympy.Symbol(f"_atom{len(atoms)}"))

    formula = sympy.Or(*(sympy.And(*(atom(r) for r in rest)) for rest in rests))
    meaning = {symbol: relation for relation, symbol in atoms.items()}
    clauses = sympy.And.make_args(sympy.simplify_logic(formula, form="cnf", force=True))
    if clauses == (sympy.true,):
        return replace(first, relations=tuple(shared))
    relations = [sympy.Or(*(canonical(literal.xreplace(meaning)) for literal in sympy.Or.make_args(clause)))
                 for clause in clauses]
    return replace(first, relations=tuple(shared) + tuple(relations))


# ------------------------------------------------------------------ simplification

def canonical(relation) -> sympy.Basic:
    """`a >= b` as `b <= a`, `a > b` as `b < a`, and `c < x` with an integer constant c
    as `c + 1 <= x` (integers): every inequality reads small to large."""
    r = relation_of(relation)
    if isinstance(r, sympy.Ge):
        r = sympy.Le(r.rhs, r.lhs, evaluate=False)
    elif isinstance(r, sympy.Gt):
        r = sympy.Lt(r.rhs, r.lhs, evaluate=False)
    if isinstance(r, sympy.Lt) and r.lhs.is_Integer and r.rhs.is_integer:
        r = sympy.Le(r.lhs + 1, r.rhs, evaluate=False)
    return r


def _order_key(relation) -> tuple:
    """Machine-parameter relations by symbol (R, Z, T, P_occ), then by text."""
    names = {s.name for s in relation.free_symbols}
    machine = tuple(m not in names for m in ("R", "Z", "T", "P_occ"))
    return (machine, to_text(relation))


# Dropping an implied relation only tidies what is printed (the system means the same with
# it), so a proof z3 does not find quickly is not waited for: transpose's tree spent 2 s of
# its 4 in one such question that timed out (then a time limit of 300 ms).
SIMPLIFY_WORK = 1_500_000


def simplify(system: System, work: int = SIMPLIFY_WORK) -> System:
    """The same system without the relations that the others, the facts and H1 imply;
    relations in canonical form and order. Only "proved" implications drop a relation."""
    relations = sorted(_unique(canonical(r) for r in system.relations), key=_order_key)
    if sympy.false in relations:
        return replace(system, relations=(sympy.false,))
    kept = list(relations)
    # Try the longest first: a derived, wordier relation goes before a plain one.
    facts = System((), system.facts)
    for relation in sorted(relations, key=lambda r: (-len(to_text(r)), _order_key(r))):
        others = [r for r in kept if r is not relation]
        # what the facts alone imply (a launch limit within the facts' bounds) is asked once
        # for every system of a tree that holds it
        if (facts.facts and implies(facts, relation, work) == "proved") \
                or implies(System(others, system.facts), relation, work) == "proved":
            kept = others
    return replace(system, relations=tuple(kept))

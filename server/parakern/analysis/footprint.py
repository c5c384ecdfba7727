"""The data footprint of one thread block: which elements of an array it touches.

Used by the shared-memory counter (how many bytes a block stages) and by the
staging plan (which regions to copy in and out), so the regions are exposed
(analysis/regions.py), not just their size.

Every subscript is split into a fixed and a varying part (subscripts.py);
accesses whose fixed parts agree in every dimension form one cluster
(clusters.py). Counting rules (each a sound upper bound; `exact` says when it
is the count):
- Clusters with a symbolic key difference (a[p] and a[N + p]) are counted
  separately: exact when provably disjoint.
- Guards that read parameters only (`t % 2`) are the same for a whole launch:
  the footprint is the MAX over their choices, and the regions of each choice
  are kept. Other guards (bounds checks) are ignored: the count is for a
  block whose bounds checks all hold.
- Opaque subscripts (a[b[i]], a[j*j]) make the whole array the footprint, or
  an unbounded one (sympy.oo) when its size is not visible.

Assumptions (paper hypothesis H1): parameters are non-negative, every loop of
the block runs at least once, and a symbolic coefficient whose sign cannot be
decided is positive. Comparisons use the schedule's facts through z3 (prover.py).
"""
from __future__ import annotations

import functools
import itertools

import sympy

from parakern.analysis.clusters import Clusters
from parakern.analysis.prover import prover_for
from parakern.analysis.regions import Choice, Cluster, DimRegion, Footprint, Notes
from parakern.analysis.subscripts import Subscripts
from parakern.model import Array, Schedule

MAX_UNIFORM_CONDITIONS = 6   # beyond 2**6 choices, take the union of all paths


def footprint(schedule: Schedule, array: str) -> Footprint:
    return footprints(schedule, (array,))[0]


def footprints(schedule: Schedule, arrays=None) -> tuple[Footprint, ...]:
    """Footprints of the named arrays (default: every array), sharing one prover."""
    names = tuple(a.name for a in schedule.arrays) if arrays is None else tuple(arrays)
    return _cached(Shape(schedule), names)


class Shape:
    """A schedule seen only through what footprints read: loops, accesses, arrays,
    parameters and facts. Variants that differ elsewhere (CSE temporaries in the
    body, the register level) share one analysis. `extra` adds what another
    memoised consumer also reads."""

    def __init__(self, schedule: Schedule, extra: tuple = ()):
        self.schedule = schedule
        s = schedule
        self.key = (s.grid, s.block, s.between, s.serial, s.accesses, s.arrays, s.params,
                    s.derived, s.facts) + extra

    def __eq__(self, other) -> bool:
        return isinstance(other, Shape) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


@functools.lru_cache(maxsize=512)
def _cached(shape: Shape, names: tuple[str, ...]) -> tuple[Footprint, ...]:
    # The counters, the staging and the strategies ask for the same footprints many
    # times while a case tree is built.
    analysis = _Analysis(shape.schedule)
    return tuple(analysis.footprint(n) for n in names)


class _Analysis:
    def __init__(self, schedule: Schedule):
        self.s = schedule
        # the prover is shared with the schedule's variants that assume the same (prover_for);
        # no reference back to this object, which is freed once the footprints are made
        prover = prover_for(schedule)
        self.notes = Notes()
        self.subscripts = Subscripts(schedule, prover, self.notes)
        self.clusters = Clusters(prover, self.notes)

    def footprint(self, name: str) -> Footprint:
        self.notes.clear()
        array = next((a for a in self.s.arrays if a.name == name), None)
        if array is None:
            return Footprint(name, sympy.S.Zero, (), False, f"'{name}' is not an array of this schedule")
        accesses = [(i, a) for i, a in enumerate(self.s.accesses) if a.array == name]
        try:
            return self._footprint(array, accesses)
        except Exception as exc:  # an analysis bug must not cost the user a result: over-approximate
            self.notes[:] = [f"internal error in the footprint analysis ({type(exc).__name__}: {exc})"]
            choice = self._whole_choice(array, (), accesses)
            return self._result(array, (choice,))

    def _footprint(self, array: Array, accesses) -> Footprint:
        conditions = list(dict.fromkeys(g.condition for _, a in accesses for g in a.guards if g.uniform))
        if any(not g.uniform for _, a in accesses for g in a.guards):
            self.notes.add("guards that depend on the thread (bounds checks) are ignored: "
                      "counted for a block where they all hold")
        if len(conditions) > MAX_UNIFORM_CONDITIONS:
            self.notes.add(f"more than {MAX_UNIFORM_CONDITIONS} uniform conditions: all paths counted together")
            return self._result(array, (self._choice(array, (), accesses),))
        choices = []
        for taken in itertools.product((True, False), repeat=len(conditions)):
            when = tuple(zip(conditions, taken))
            chosen = dict(when)
            on_path = [(i, a) for i, a in accesses
                       if all(chosen[g.condition] == g.taken for g in a.guards if g.uniform)]
            choices.append(self._choice(array, when, on_path))
        return self._result(array, tuple(choices))

    def _result(self, array: Array, choices: tuple[Choice, ...]) -> Footprint:
        values = [c.elements for c in choices]
        elements = sympy.oo if any(v is sympy.oo for v in values) else self.clusters.maximum(values)
        exact = all(c.exact for c in choices) and elements is not sympy.oo
        return Footprint(array.name, elements, choices, exact, "; ".join(self.notes))

    def _choice(self, array: Array, when, accesses) -> Choice:
        analysed = []
        for i, a in accesses:
            dims = self.subscripts.split(a, array)
            if dims is None:
                return self._whole_choice(array, when, accesses)
            analysed.append((i, dims))
        groups: dict = {}
        for i, dims in analysed:
            groups.setdefault(tuple(d.key for d in dims), []).append((i, dims))
        clusters = tuple(self.clusters.cluster(members) for members in groups.values())
        exact = all(c.exact for c in clusters)
        for a, b in itertools.combinations(clusters, 2):
            if not self.clusters.disjoint(a, b):
                exact = False
                self.notes.add("clusters with a symbolic distance are assumed disjoint "
                          "(exact when they do not overlap)")
        elements = sympy.expand(sum((c.elements for c in clusters), sympy.S.Zero))
        return Choice(when, clusters, elements, exact)

    def _whole_choice(self, array: Array, when, accesses) -> Choice:
        """Over-approximation for subscripts that are not affine in the block's variables."""
        ids = tuple(i for i, _ in accesses)
        if array.dims and len(array.dims) == array.rank:
            self.notes.add(f"a subscript of '{array.name}' is not affine in the block's loop variables "
                      "with parameter coefficients: the whole array is counted")
            dims = tuple(DimRegion(sympy.S.Zero, sympy.sympify(d)) for d in array.dims)
            cluster = Cluster(dims, ids, False)
            return Choice(when, (cluster,), cluster.elements, False, whole=True)
        self.notes.add(f"a subscript of '{array.name}' is not affine in the block's loop variables and its size "
                  "is not visible: the footprint is unbounded (declare it with its size, "
                  "e.g. `float a[N]`, or do not cache it)")
        return Choice(when, (), sympy.oo, False)

"""Accesses whose fixed parts agree, counted together as one region.

Per dimension a cluster is a run of `extent` consecutive elements from
`lower`, repeated `count` times every `stride` for the strided parts of a
linearized subscript (A[i*n + j]); several dimensions make a box. Each count
is a sound upper bound, `exact` when it is the number of distinct elements:
- a multi-dimensional cluster is a box: the 5-point stencil counts the corners
  of its (By+2)*(Bx+2) tile;
- a strided dimension counts extent * product(counts): exact when the runs
  provably do not overlap (row stride >= run length).
"""
from __future__ import annotations

import functools

import sympy

from parakern.symbolic.printing import to_c
from parakern.analysis.prover import Prover
from parakern.analysis.regions import Cluster, DimRegion, Notes


class Clusters:
    def __init__(self, prover: Prover, notes: Notes):
        self.prover = prover
        self.notes = notes

    def cluster(self, members) -> Cluster:
        """members: (access position, its Subscripts) with equal keys in every dimension."""
        ids = tuple(i for i, _ in members)
        rank = len(members[0][1])
        regions, exact = [], all(d.exact for _, dims in members for d in dims)
        for k in range(rank):
            col = [dims[k] for _, dims in members]
            offsets = sorted(set(d.offset for d in col))
            lower = col[0].key + offsets[0]
            if all(d.terms == col[0].terms for d in col):
                run, repeats = self._radix(col[0].terms)
                extent = sympy.expand(run + offsets[-1] - offsets[0])
                # Runs as long as their stride, the offsets having filled the gaps (a thread's
                # rows 4*v + c, c < 4: thread coarsening), are one run.
                while repeats and sympy.expand(repeats[0][0] - extent) == 0:
                    extent = sympy.expand(extent * repeats[0][1])
                    repeats = repeats[1:]
                if not all(self.prover.le(b - a, run) for a, b in zip(offsets, offsets[1:])):
                    exact = False  # gaps between the runs of different offsets
                exact = self._no_overlap(extent, repeats) and exact
            else:  # differently shaped accesses in one place: their hull
                last = self.maximum([d.offset + sum((c * (n - 1) for c, n in d.terms), sympy.S.Zero)
                                     for d in col])
                extent, repeats, exact = sympy.expand(last - offsets[0] + 1), (), False
            regions.append(DimRegion(sympy.expand(lower), extent, tuple(repeats)))
        if rank > 1:
            tuples = {tuple(d.offset for d in dims) for _, dims in members}
            per_dim = [len({t[k] for t in tuples}) for k in range(rank)]
            if len(tuples) != sympy.prod(per_dim):
                exact = False
                self.notes.add("accesses at different offsets in several dimensions are counted "
                          "as their bounding box")
        return Cluster(tuple(regions), ids, exact)

    def disjoint(self, a: Cluster, b: Cluster) -> bool:
        for ra, rb in zip(a.dims, b.dims):
            if self.prover.le(ra.lower + ra.span, rb.lower) or self.prover.le(rb.lower + rb.span, ra.lower):
                return True
        return False

    def maximum(self, values):
        values = list(dict.fromkeys(sympy.expand(v) for v in values))
        if not values:
            return sympy.S.Zero
        for v in values:
            if all(self.prover.le(w, v) for w in values if w is not v):
                return v
        self.notes.add("the larger of " + ", ".join(map(str, values)) + " cannot be decided: Max is kept")
        return sympy.Max(*values)

    def _radix(self, terms):
        """The set {sum coef*m} as a run [0, run) repeated at strides (mixed radix)."""
        run, repeats = sympy.S.One, []
        for coef, count in self._ascending(terms):
            if not repeats and self.prover.le(coef, run):
                run = sympy.expand(run + coef * (count - 1))  # contiguous: the runs touch or overlap
            elif repeats and sympy.expand(coef - repeats[-1][0] * repeats[-1][1]) == 0:
                stride, n = repeats[-1]
                repeats[-1] = (stride, sympy.expand(n * count))
            else:
                repeats.append((coef, count))
        return run, repeats

    def _ascending(self, terms):
        def cmp(a, b):
            if sympy.expand(a[0] - b[0]) == 0:
                return 0
            if self.prover.le(a[0], b[0]):
                return -1
            if self.prover.le(b[0], a[0]):
                return 1
            return 0
        return sorted(terms, key=functools.cmp_to_key(cmp))

    def _no_overlap(self, extent, repeats) -> bool:
        inner = extent
        for stride, count in repeats:
            if not self.prover.le(inner, stride):
                self.notes.add(f"strided runs counted as disjoint: exact when {to_c(stride)} >= {to_c(inner)}")
                return False
            inner = sympy.expand(inner + stride * (count - 1))
        return True

"""What a block footprint is made of: runs of elements per dimension, clusters, choices.

Shared by the footprint analysis that builds them, the shared-memory counter
that sizes them and the staging plan that lays them out.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy


class Notes(list):
    """What the analysis of one footprint assumed, each once and in order (Footprint.note)."""

    def add(self, text: str) -> None:
        if text not in self:
            self.append(text)


@dataclass(frozen=True)
class DimRegion:
    """Values lower + r + sum(stride_i * m_i), r in [0, extent), m_i in [0, count_i)."""
    lower: sympy.Expr        # in grid/between variables and parameters
    extent: sympy.Expr       # length of one contiguous run, parameters only
    repeats: tuple[tuple[sympy.Expr, sympy.Expr], ...] = ()  # (stride, count), inner first

    @property
    def elements(self) -> sympy.Expr:
        return sympy.expand(sympy.Mul(self.extent, *(c for _, c in self.repeats)))

    @property
    def span(self) -> sympy.Expr:
        """Length of the interval [lower, last element]."""
        return sympy.expand(self.extent + sum((s * (c - 1) for s, c in self.repeats), sympy.S.Zero))

    def position(self, relative: int, value, pitch=None) -> int:
        """Local position (0 .. elements - 1) of the element `relative` past `lower`, at a point
        (`value` turns a size into an integer): r + extent * (m1 + count1 * (m2 + ...)), the
        layout the staging copies fill (ir/staged_copies.py and codegen/memory.py print it);
        runs `pitch` elements apart instead of `extent` where the rows are padded (staging.Region)."""
        if not self.repeats:
            return relative
        ms, rest = [], relative
        for stride, _ in reversed(self.repeats):
            step = value(stride)
            ms.insert(0, rest // step)
            rest = rest % step
        position = None
        for m, (_, count) in zip(reversed(ms), reversed(self.repeats)):
            position = m if position is None else position * value(count) + m
        return position * value(self.extent if pitch is None else pitch) + rest


@dataclass(frozen=True)
class Cluster:
    dims: tuple[DimRegion, ...]
    accesses: tuple[int, ...]   # positions in schedule.accesses
    exact: bool

    @property
    def elements(self) -> sympy.Expr:
        return sympy.expand(sympy.Mul(*(d.elements for d in self.dims)))


@dataclass(frozen=True)
class Choice:
    """One outcome of the uniform guards and the clusters accessed on it."""
    when: tuple[tuple[sympy.Basic, bool], ...]  # (condition, branch taken)
    clusters: tuple[Cluster, ...]
    elements: sympy.Expr
    exact: bool
    whole: bool = False   # a subscript not affine in the block's variables: the whole array counted


@dataclass(frozen=True)
class Footprint:
    array: str
    elements: sympy.Expr               # max over regions; sympy.oo when unbounded
    regions: tuple[Choice, ...]        # one per choice of the uniform guards
    exact: bool
    note: str

    @property
    def bounded(self) -> bool:
        return self.elements.is_finite is not False

"""Resource and performance counters (paper section 3.2-3.3): r_i and f_i.

A counter names the machine symbol it is bounded by (R, Z, T, P_occ) and
evaluates a kernel variant to a number or a polynomial in the program and
data parameters. `measure` also says how the value was obtained and whether
it is exact or a sound upper bound, so a user can see why a case needs what
it needs.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Union

import sympy

from parakern.kernel import Kernel

Value = Union[int, sympy.Expr]


def normalize(value) -> Value:
    """Plain int for numbers (callers compare them with ints), expanded sympy otherwise."""
    value = sympy.sympify(value)
    if value.is_Integer:
        return int(value)
    return sympy.expand(value) if value.is_finite is not False else value


@dataclass(frozen=True)
class Measure:
    value: Value
    exact: bool    # False: a sound upper bound (resources) or an estimate
    method: str    # how it was computed, e.g. "block footprint"
    note: str = ""


class Counter(ABC):
    name: ClassVar[str]
    symbol: ClassVar[sympy.Symbol]  # the machine parameter it must not exceed
    unit: ClassVar[str]             # "registers", "bytes", "threads", "ratio"
    kind: ClassVar[str]             # "resource" or "performance"

    @abstractmethod
    def measure(self, kernel: Kernel) -> Measure: ...

    def evaluate(self, kernel: Kernel) -> Value:
        return self.measure(kernel).value

    def prefetch(self, kernel: Kernel) -> None:
        """Starts in the background what `measure(kernel)` will wait for (an external tool),
        for a kernel that is certain to be measured later; nothing by default."""
        return None

    def requirement(self, kernel: Kernel, value: Value) -> Value:
        """What the kernel asks of the machine parameter `symbol`, given the counter's value:
        the value itself, except for registers (counted per thread, allocated per block)."""
        return value

"""P_occ as a counter of a variant: numbers and expressions agree with the calculator."""
from fractions import Fraction

import sympy

from conftest import SAMPLES
from parakern.counters import default_counters
from parakern.counters.occupancy import occupancy
from parakern.counters.performance import OccupancyCounter
from parakern.frontend import analyze_file
from parakern.kernel import Kernel
from parakern.machine.devices import get_profile
from parakern.symbolic.symbols import P_OCC, sym


def kernel(name):
    return Kernel.initial(analyze_file(SAMPLES / f"{name}.c").schedules[0])


def test_default_counters_and_their_symbols():
    names = [(c.name, str(c.symbol), c.kind) for c in default_counters("sm_80", get_profile("h100"))]
    assert names == [("registers", "R_B", "resource"), ("shared_memory", "Z", "resource"),
                     ("threads", "T", "resource"), ("occupancy", "P_occ", "performance")]
    assert len(default_counters()) == 3


def test_occupancy_of_jacobi_matches_the_calculator_at_points():
    device = get_profile("a100")
    counter = OccupancyCounter(device)
    k = kernel("jacobi1d")
    assert counter.symbol == P_OCC
    value = counter.evaluate(k)
    registers = counter.registers.evaluate(k)
    for B, s in [(32, 1), (128, 4), (256, 8), (1024, 2), (64, 64)]:
        at = value.xreplace({sym("B"): sympy.Integer(B), sym("s"): sympy.Integer(s)})
        assert Fraction(str(sympy.nsimplify(at))) == occupancy(registers, 8 * B * s + 8, B, device)

"""Subscripts with `>>` and a low-bits mask `&` by constants have values for the analysis: a
race through `out[i >> 1]` is an error (PK020) as through `out[i / 2]`, where it was only
PK021 and emit and tune went ahead (found by a trial)."""
from __future__ import annotations

import sympy

from parakern import syntax
from parakern.analysis import dependence
from parakern.frontend import analyze_source


def _program(body: str) -> str:
    return f"""#include "metafork.h"
void f(int n, int B, float in[n], float out[n])
{{
    int g = (n + B - 1) / B;
    meta_schedule {{
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {{
                int i = b * B + t;
                if (i < n) {body}
            }}
    }}
}}
"""


def _codes(body: str) -> list:
    (s,) = analyze_source(_program(body), "p.c").schedules
    return [(d.code, d.span.line, d.span.col) for d in dependence.check(s)]


def test_a_shift_that_makes_two_iterations_meet_is_an_error():
    assert _codes("out[i >> 1] = in[i];") == [("PK020", 6, 9)]


def test_a_shift_and_a_mask_that_keep_iterations_apart_are_proved():
    assert _codes("out[(i >> 1) * 2 + (i & 1)] = in[i];") == []


def test_their_values():
    x = syntax.Var("x", "int", None)
    def binary(op, k):
        return syntax.Binary(op, x, syntax.Const(k, "int", None, str(k)), "int", None)
    shift, mask = syntax.to_sympy(binary(">>", 3)), syntax.to_sympy(binary("&", 7))
    assert shift == sympy.floor(syntax.sym("x") / 8) and mask == sympy.Mod(syntax.sym("x"), 8)
    assert syntax.to_sympy(binary("&", 6)).subs(syntax.sym("x"), 13) == 4   # bits 1 and 2 of 0b1101
    # two's complement, as gcc and nvcc: -5 >> 3 is -1 and -5 & 7 is 3 (the floor, the remainder)
    assert shift.subs(syntax.sym("x"), -5) == -1 and mask.subs(syntax.sym("x"), -5) == 3


def test_xor_pairs_elements_and_an_in_place_butterfly_is_an_error():
    # b[i] = a[i] - a[i ^ 1] reads its neighbour: independent; a[i] = a[i] - a[i ^ 1] races
    assert _codes("out[i] = in[i] - in[i ^ 1];") == []
    assert _codes("out[i ^ 1] = in[i];") == []              # a permutation of the elements
    assert _codes("out[i] = out[i] - out[i ^ 1];") == [("PK020", 6, 9)]
    assert _codes("out[i | 1] = in[i];") == [("PK020", 6, 9)]   # 2k and 2k + 1 both write 2k + 1


def test_bitwise_operations_with_any_constant_have_gcc_values():
    x = syntax.Var("x", "int", None)
    for op, compute in (("&", int.__and__), ("^", int.__xor__), ("|", int.__or__)):
        for c in (1, 2, 5, 6, 12, 255, 256, -1, -2, -3, -8, -256):
            e = syntax.to_sympy(syntax.Binary(op, x, syntax.Const(c, "int", None, str(c)), "int", None))
            for v in range(-40, 41):   # two's complement on negative values too
                assert e.subs(syntax.sym("x"), v) == compute(v, c), (op, c, v)


def test_xor_with_minus_one_reverses_and_is_proved():
    # n + (i ^ -1) is n - 1 - i: a reversal, one element per iteration
    assert _codes("out[n + (i ^ -1)] = in[i];") == []

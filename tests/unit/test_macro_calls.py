"""A function-like macro is refused once, at its #define (PK002), which names where it is used;
its calls are not also refused as calls of a function (PK007: 'call to IDX cannot be offloaded'),
which a new user's trial (idx_macro.c) read as the cause."""
from parakern.frontend import analyze_source

IDX = """\
/* Flattened 2D indexing through the usual IDX macro. */
#include "metafork.h"
#define IDX(i, j, ld) ((i) * (ld) + (j))

void add2d(int m, int n, int B, float *a, float *b, float *c)
{
    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int i = 0; i < m; i++)
            meta_for (int bj = 0; bj < g; bj++)
                meta_for (int t = 0; t < B; t++) {
                    int j = bj * B + t;
                    if (j < n)
                        c[IDX(i, j, n)] = a[IDX(i, j, n)] + b[IDX(i, j, n)];
                }
    }
}
"""


def test_a_function_like_macro_is_one_error_at_its_define_naming_its_uses():
    found = analyze_source(IDX, "idx.c").diagnostics
    assert [(d.code, d.span.line, d.span.col) for d in found] == [("PK002", 3, 1)]
    assert "function-like macro IDX(...)" in found[0].message
    assert "used inside meta_schedule at 14:27, 14:45, 14:63" in found[0].message


def test_a_call_of_a_function_is_still_refused_beside_a_macro():
    text = IDX.replace("b[IDX(i, j, n)];", "b[IDX(i, j, n)] + f(j);")
    found = analyze_source(text, "idx.c").diagnostics
    assert [(d.code, d.span.line, d.span.col) for d in found] == [("PK002", 3, 1), ("PK007", 14, 79)]
    assert "call to 'f' cannot be offloaded" in found[1].message

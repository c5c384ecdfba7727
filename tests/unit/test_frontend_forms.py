"""Array and type forms the front-end accepts, and constructs it rejects."""
from conftest import same
from parakern import syntax
from parakern.frontend import analyze_source

FIXED = """
#define SIZE 1024
#define REAL double
float global_in[SIZE];
typedef unsigned count_t;

void f(int B, long scale)
{
    REAL out[2 * SIZE];
    count_t hits[SIZE];
    int blocks = SIZE / B;
    meta_schedule {
        meta_for (int i = 0; i < blocks; i++)
            meta_for (int j = 0; j < B; j++) {
                long g = (long) i * B + j;
                out[g] = global_in[g] * scale;
                hits[g] += 1u;
            }
    }
}
"""


def test_fixed_size_global_and_define_sized_arrays():
    result = analyze_source(FIXED, "fixed.c")
    assert result.diagnostics == ()
    (s,) = result.schedules
    arrays = {a.name: a for a in s.arrays}
    assert arrays["out"].ctype == "double" and same(arrays["out"].dims[0], "2048")
    assert arrays["global_in"].ctype == "float" and same(arrays["global_in"].dims[0], "1024")
    assert arrays["hits"].ctype == "unsigned" and arrays["hits"].read and arrays["hits"].written
    assert [p.name for p in s.program_params] == ["B", "scale"]
    assert s.data_params == ()
    assert {p.name: p.ctype for p in s.params} == {"B": "int", "scale": "long"}
    (blocks,) = s.derived
    assert same(blocks.value, "floor(1024/B)")
    assert s.locals[0].ctype == "long"


def test_scalar_written_in_host_code_is_a_parameter_not_derived():
    source = """void f(int n, int B, float a[n]) {
    int m = n / 2;
    m = m + 1;
    meta_schedule {
        meta_for (int i = 0; i < m; i++)
            meta_for (int j = 0; j < B; j++)
                a[i] = 0.0f;
    }
}"""
    (s,) = analyze_source(source, "x.c").schedules
    assert s.derived == ()
    assert "m" in [p.name for p in s.program_params]


def test_definition_invalidated_by_a_loop_around_the_schedule():
    source = """void f(int n, int B, float a[n]) {
    int half = n / 2;
    for (int r = 0; r < 3; r++) {
        meta_schedule {
            meta_for (int i = 0; i < half; i++)
                meta_for (int j = 0; j < B; j++)
                    a[i] = 0.0f;
        }
        n = n - 1;
    }
}"""
    (s,) = analyze_source(source, "x.c").schedules
    # n changes inside the loop while half keeps its first value: half = n/2 no longer
    # holds from the second iteration on, so half is a parameter of its own.
    assert s.derived == ()
    assert [p.name for p in s.program_params] == ["B", "half"]  # declaration order
    assert s.host_loops == ("r",)


def test_goto_is_rejected_at_its_statement():
    source = """void f(int n, float a[n]) {
    meta_schedule {
        meta_for (int i = 0; i < n; i++)
            meta_for (int j = 0; j < 2; j++) {
                goto done;
            }
    }
done:
    return;
}"""
    (d,) = analyze_source(source, "g.c").diagnostics
    assert d.code == "PK008" and "'goto' is not allowed" in d.message
    assert (d.span.line, d.span.col, d.span.end_col) == (5, 17, 27)


def test_serial_loop_forms():
    source = """void f(int n, float a[n]) {
    meta_schedule {
        meta_for (int i = 0; i < n; i++)
            meta_for (int j = 0; j < 2; j++)
                for (int k = 0; k <= 4; k += 2)
                    a[i] += k;
    }
}"""
    (s,) = analyze_source(source, "k.c").schedules
    (k,) = s.serial
    assert same(k.hi, "5") and same(k.step, "2") and same(k.trip_count, "3")
    bad = source.replace("k <= 4", "k != 4")
    (d,) = analyze_source(bad, "k.c").diagnostics
    assert d.code == "PK015" and d.span.line == 5


def test_a_serial_loop_counting_down_runs_its_values_in_its_order():
    """`for (int k = 6; k >= 0; k -= 3)` (back substitution, Horner) was PK015: it is the count-up
    loop of its trips with k = 6 - 3*k_down declared first in the body; an unsigned variable,
    whose `>= 0` never fails, and a write to k stay refused."""
    source = """void f(int n, float a[n]) {
    meta_schedule {
        meta_for (int i = 0; i < n; i++)
            meta_for (int j = 0; j < 2; j++)
                for (int k = 6; k >= 0; k -= 3)
                    a[i] += k;
    }
}"""
    (s,) = analyze_source(source, "k.c").schedules
    (k,) = s.serial
    assert k.var == "k_down" and same(k.lo, "0") and same(k.step, "1") and same(k.trip_count, "3")
    loop = next(n for n in syntax.walk(s.nest) if isinstance(n, syntax.Loop) and not n.parallel)
    first = loop.body.stmts[0]
    assert isinstance(first, syntax.Decl) and first.name == "k"
    from parakern.symbolic.symbols import sym
    assert [int(syntax.to_sympy(first.init, {}).subs(sym("k_down"), t)) for t in range(3)] == [6, 3, 0]
    (d,) = analyze_source(source.replace("int k = 6", "unsigned k = 6"), "k.c").diagnostics
    assert d.code == "PK015" and "signed variable" in d.message and d.span.line == 5
    (d,) = analyze_source(source.replace("a[i] += k;", "k -= 1;"), "k.c").diagnostics
    assert d.code == "PK017"


def test_empty_file_and_file_without_schedules():
    assert analyze_source("", "e.c").schedules == ()
    assert analyze_source("int main(void) { return 0; }\n", "m.c").diagnostics == ()


def test_parameter_named_like_a_machine_parameter_is_rejected():
    source = """void f(int n, int T, float a[n]) {
    meta_schedule {
        meta_for (int i = 0; i < n / T; i++)
            meta_for (int j = 0; j < T; j++)
                a[i * T + j] = 0.0f;
    }
}"""
    (d,) = analyze_source(source, "t.c").diagnostics
    assert d.code == "PK018" and "threads per block" in d.message
    assert (d.span.line, d.span.col, d.span.end_col) == (3, 38, 39)
    assert d.related[0].span.line == 1


def test_inserted_dispatcher_regions_are_ignored():
    """After "Insert comprehensive dispatcher" the file holds CUDA between markers; the
    front-end skips it and every position stays the same."""
    from conftest import SAMPLES
    from parakern.frontend import analyze_file
    original = (SAMPLES / "jacobi1d.c").read_text()
    inserted = original + ("// parakern:begin jacobi1d:0\n#ifndef PARAKERN_CPU\n#include <cuda_runtime.h>\n"
                           "#endif\n__global__ void k(int *a) { a[threadIdx.x] = 0; }\n"
                           "// parakern:end jacobi1d:0\n")
    before = analyze_file(SAMPLES / "jacobi1d.c")
    after = analyze_source(inserted, str(SAMPLES / "jacobi1d.c"))
    assert after.diagnostics == () and after.schedules == before.schedules


DIVIDES = """
void f(int n, int B, int d, float alpha, int a[n], float x[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++) {
                a[i * B + j] = a[i * B + j] / d + j % (d + 1) + j / 2;
                x[i * B + j] = x[i * B + j] / alpha + x[i * B + j] / i;
            }
    }
}
"""


def test_an_integer_division_by_a_parameter_in_the_body_is_a_fact():
    """`x / d` and `j % (d + 1)` on integers: d != 0 and d + 1 != 0 (no witness, verify point or
    tuned value may divide by zero), each at its division; a constant or a loop variable
    divisor and a float division give none."""
    import sympy

    from parakern.symbolic.symbols import sym
    (s,) = analyze_source(DIVIDES, "d.c").schedules
    divisors = {f.relation: (f.span.line, f.span.col) for f in s.facts if f.origin == "divisor"}
    d = sym("d")
    assert divisors == {sympy.Ne(sym("B"), 0): (5, 9), sympy.Ne(d, 0): (7, 32), sympy.Ne(d + 1, 0): (7, 51)}


BITAND = """#include <assert.h>
void f(int n, int B, float a[n], float b[n])
{
    assert((B & (B - 1)) == 0 && B > 16 && a != 0);
    meta_schedule {
        meta_for (int g = 0; g < n / B; g++)
            meta_for (int t = 0; t < B; t++)
                b[g * B + t] = 2.0f * a[g * B + t];
    }
}
"""


def test_an_assertion_keeps_the_conditions_it_can_read_and_says_which_it_cannot():
    """`(B & (B - 1)) == 0 && B > 16`: the bitwise condition made the whole assertion vanish
    (tune then offered B = 8); now B > 16 is a fact and a PK023 warning marks the condition
    the analysis cannot use. `a != 0` reads no parameter: no warning."""
    import sympy

    from parakern.symbolic.symbols import sym
    result = analyze_source(BITAND, "f.c")
    (s,) = result.schedules
    assert sympy.Gt(sym("B"), 16) in [f.relation for f in s.facts if f.origin == "assert"]
    (d,) = result.diagnostics
    assert d.code == "PK023" and d.severity.value == "warning" and (d.span.line, d.span.col) == (4, 12)
    assert "reads B but the analysis cannot use it" in d.message


ENUM_AND_REFUSED_LOCALS = """enum { K3 = 3, K4, KS = K4 << 1 };
void f(int n, int B, float a[n], float b[n])
{
    meta_schedule {
        meta_for (int g = 0; g < n / B; g++)
            meta_for (int t = 0; t < B; t++) {
                int i = g * B + t;
                LOCAL
                b[i] = a[i] * K3 * KS + USE;
            }
    }
}
"""


def test_enum_constants_are_constants_and_a_refused_local_is_one_error():
    """`enum { K3 = 3, K4, KS = K4 << 1 }` read as constants (were PK010 "not declared"); a
    local of a refused type, or a local array, is one error where its uses added PK010 or
    PK012 on names that are declared."""
    s = analyze_source(ENUM_AND_REFUSED_LOCALS.replace("LOCAL", "").replace(" + USE", ""), "e.c")
    assert s.diagnostics == ()
    (sched,) = s.schedules
    consts = {n.value for n in syntax.walk(sched.body) if isinstance(n, syntax.Const)}
    assert {3, 8} <= consts            # K3, and KS = K4 << 1 with K4 = 4
    for local, use, code in [("char c = 1;", "c", "PK011"), ("float w[4];", "w[t % 4]", "PK013")]:
        result = analyze_source(ENUM_AND_REFUSED_LOCALS.replace("LOCAL", local).replace("USE", use), "e.c")
        assert [d.code for d in result.diagnostics] == [code], [d.format() for d in result.diagnostics]


def test_a_shift_by_a_parameter_keeps_it_within_the_type():
    """`a >> k` with k a parameter: 0 <= k < 32 for an int (nvcc warned of `--fix k=40`, whose
    shift C leaves undefined); `long` operands get 64."""
    import sympy

    from parakern.symbolic.symbols import sym
    (s,) = analyze_source("""void f(int n, int B, int k, int a[n], long b[n])
{
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                b[i * B + j] = (a[i * B + j] >> k) + (b[i * B + j] << (k + 1));
    }
}
""", "s.c").schedules
    shifts = {f.relation for f in s.facts if f.origin == "shift"}
    k = sym("k")
    assert shifts == {sympy.Ge(k, 0), sympy.Lt(k, 32), sympy.Ge(k + 1, 0), sympy.Lt(k + 1, 64)}


def test_designated_initializers_in_host_code_are_read():
    """`{ [1] = 3 }` and `{ .a = 1 }` outside the schedule: pycparser gives their designators no
    position, and the whole function's schedule was lost to PK099 ('NoneType' ... 'line')."""
    text = """struct P { int a, b; };
void f(int n, int B, float x[n], float y[n])
{
    struct P p = { .a = 1, .b = 2 };
    int w[2] = { [1] = 3 };
    meta_schedule {
        meta_for (int b = 0; b < n / B; b++)
            meta_for (int t = 0; t < B; t++)
                y[b * B + t] = 2.0f * x[b * B + t];
    }
}
"""
    result = analyze_source(text, "d.c")
    assert result.diagnostics == () and len(result.schedules) == 1


def test_a_line_of_code_continued_with_a_backslash_is_one_line():
    """C joins a line that ends with a backslash to the next; pycparser refused it ("Illegal
    character '\\\\'", no schedule analysed). A #define's continuation still continues it, and
    the positions after the splice stay where they are."""
    text = """#define TILE \\
    32
void f(int n, int B, float x[n], float y[n])
{
    int g = (n + B - 1) \\
            / B;
    int h = TILE;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++)
                if (b * B + t < n && h > 0)
                    y[b * B + t] = 2.0f * x[b * B + t];
    }
}
"""
    result = analyze_source(text, "c.c")
    assert result.diagnostics == () and len(result.schedules) == 1
    (s,) = result.schedules
    assert s.span.line == 8 and s.span.col == 5


STDINT = """#include <stdint.h>
#include <stdbool.h>
void f(size_t n, int B, bool twice, {element} a[n], int b[n])
{{
    meta_schedule {{
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                a[i * B + j] = twice ? b[i * B + j] * 2 : b[i * B + j];
    }}
}}
"""


def test_standard_integer_types_are_what_their_headers_say():
    """Every <stdint.h> name was read as int: an int64_t array was flattened in 4-byte elements
    and a uint32_t one compared as signed (verify mismatched, the CUDA was silently wrong)."""
    for element, ctype in [("int64_t", "long"), ("uint32_t", "unsigned"), ("uint64_t", "unsigned long"),
                           ("int32_t", "int"), ("ptrdiff_t", "long")]:
        result = analyze_source(STDINT.format(element=element), "s.c")
        assert result.diagnostics == (), (element, [d.format() for d in result.diagnostics])
        s = result.schedules[0]
        assert s.array("a").ctype == ctype, element
        assert {p.name: p.ctype for p in s.params}["n"] == "unsigned long"
        assert {p.name: p.ctype for p in s.params}["twice"] == "int"   # a flag's value passes as an int


def test_arrays_of_one_or_two_byte_elements_are_refused_at_their_use():
    """int8_t and bool arrays were read as int arrays."""
    for element, words in [("int8_t", "element type char"), ("uint16_t", "element type unsigned short"),
                           ("bool", "element type _Bool")]:
        text = STDINT.format(element=element)
        (d,) = analyze_source(text, "s.c").diagnostics
        assert d.code == "PK011" and words in d.message, (element, d.format())
        assert (d.span.line, d.span.col) == (8, text.split("\n")[7].index("a[") + 1)

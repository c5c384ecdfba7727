"""Every deliberately wrong input gets its diagnostic: code, message and exact range."""
import pytest

from conftest import WRONG, text_at, wrong_files
from parakern.frontend import analyze_file, analyze_source

# file: (code, (line, col, end_line, end_col), text under the range, words the message must hold)
EXPECTED = {
    "syntax_error.c": ("PK001", (6, 36, 6, 37), "", "expected ';' after '0.0f'"),
    "noncanonical_bound.c": ("PK003", (4, 30, 4, 40), "i <= n / B", "compare its variable 'i' with '<'"),
    "noncanonical_step.c": ("PK003", (4, 41, 4, 47), "i += 2", "increment its variable by one"),
    "write_param.c": ("PK004", (7, 17, 7, 18), "n", "cannot assign to 'n' inside meta_schedule"),
    "cache_scalar.c": ("PK005", (3, 28, 3, 29), "B", "'B' is a scalar; cache() takes arrays"),
    "cache_unused.c": ("PK005", (3, 25, 3, 26), "b", "array 'b' is not used in this meta_schedule"),
    "too_many_levels.c": ("PK006", (7, 9, 7, 17), "meta_for", "4 meta_for levels map to the grid"),
    "call_printf.c": ("PK007", (9, 17, 9, 34), 'printf("%d\\n", j)', "call to 'printf' cannot be offloaded"),
    "break_inside.c": ("PK008", (8, 25, 8, 31), "break;", "'break' is not allowed"),
    "return_inside.c": ("PK008", (7, 21, 7, 28), "return;", "'return' is not allowed"),
    "statement_beside_nest.c": ("PK009", (4, 9, 4, 19), "int x = 3;", "exactly one meta_for loop nest"),
    "no_meta_for.c": ("PK009", (3, 5, 3, 18), "meta_schedule", "contains no meta_for loop"),
    "meta_schedule_without_block.c": ("PK009", (3, 5, 3, 18), "meta_schedule", "contains no meta_for loop"),
    "imperfect_nest.c": ("PK009", (7, 17, 7, 25), "meta_for", "perfectly nested"),
    "undeclared.c": ("PK010", (6, 32, 6, 37), "scale", "'scale' is not declared"),
    "unsupported_type.c": ("PK011", (6, 17, 6, 18), "a", "element type short"),
    "pointer_two_subscripts.c": ("PK012", (6, 17, 6, 24), "a[i][j]", "'a' is a pointer"),
    "while_inside.c": ("PK013", (7, 17, 10, 18), None, "while loops are not supported"),
    "nested_schedule.c": ("PK014", (6, 17, 6, 30), "meta_schedule", "cannot be nested"),
    "ifdef.c": ("PK002", (1, 1, 1, 18), "#ifdef USE_DOUBLE", "#ifdef is not supported"),
    "function_macro.c": ("PK002", (1, 1, 1, 30), "#define SQUARE(x) ((x) * (x))", "function-like macro"),
    "loop_variable_write.c": ("PK017", (7, 17, 7, 18), "j", "'j' is a loop variable"),
    "one_bad_one_good.c": ("PK004", (7, 17, 7, 18), "B", "cannot assign to 'B'"),
    "broken_function_beside_good.c": ("PK001", (13, 18, 13, 19), ";", "expected an expression before ';'"),
    "knr_parameters.c": ("PK022", (2, 6, 2, 11), "scale", "declare them in the parentheses: scale(int n"),
    "size_before_parameter.c": ("PK010", (3, 27, 3, 28), "n",
                                "declare it first: scale(int B, int n, float a[n])"),
    "write_const_array.c": ("PK004", (7, 17, 7, 29), "a[i * B + j]", "'a' is declared const"),
    "float_bound.c": ("PK003", (4, 34, 4, 40), "blocks", "the bound of meta_for is a double expression"),
    "cxx_keyword.c": ("PK018", (5, 23, 5, 26), "new", "'new' is a C++ keyword"),
    "redeclared_loop_variable.c": ("PK024", (6, 27, 6, 29), "ty", "'ty' is already the variable of an enclosing loop"),
}


def test_every_wrong_input_has_an_expectation():
    assert {p.name for p in wrong_files()} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wrong_input_diagnostic(name):
    path = WRONG / name
    code, (line, col, end_line, end_col), text, words = EXPECTED[name]
    result = analyze_file(path)
    errors = [d for d in result.diagnostics if d.severity.value == "error"]
    assert len(errors) == 1, [d.format() for d in result.diagnostics]
    (d,) = errors
    assert d.code == code
    assert words in d.message
    assert (d.span.line, d.span.col, d.span.end_line, d.span.end_col) == (line, col, end_line, end_col)
    if text is not None:
        assert text_at(path, d.span) == text
    assert d.span.file == str(path)


def test_one_bad_schedule_does_not_hide_the_good_one():
    result = analyze_file(WRONG / "one_bad_one_good.c")
    assert [s.id for s in result.schedules] == ["f:1"]


def test_syntax_error_in_one_function_does_not_hide_another():
    result = analyze_file(WRONG / "broken_function_beside_good.c")
    assert [s.id for s in result.schedules] == ["f:0"]


def test_related_information_points_at_the_declaration():
    (d,) = analyze_file(WRONG / "write_param.c").diagnostics
    (related,) = d.related
    assert related.span.line == 1 and "declared here" in related.message


def test_all_errors_of_a_schedule_are_reported():
    source = """void f(int n, float a[n]) {
    meta_schedule {
        meta_for (int i = 0; i < n; i++)
            meta_for (int j = 0; j < 2; j++) {
                n = 1;
                a[i] = g(j);
            }
    }
}
"""
    codes = [d.code for d in analyze_source(source, "x.c").diagnostics]
    assert codes == ["PK004", "PK007"]


def test_single_level_warns_but_analyses():
    source = "void f(int n, float a[n]) {\n  meta_schedule {\n    meta_for (int i = 0; i < n; i++)\n      a[i] = 0.0f;\n  }\n}\n"
    result = analyze_source(source, "x.c")
    assert [d.code for d in result.diagnostics] == ["PK016"]
    assert result.diagnostics[0].severity.value == "warning"
    assert len(result.schedules) == 1 and result.schedules[0].block == ()


def test_non_ascii_text_keeps_columns_in_code_points():
    source = ("void f(int n, float a[n]) { /* é – ü */ meta_schedule {\n"
              "  meta_for (int i = 0; i < n; i++) meta_for (int j = 0; j < 2; j++) a[i] = x; } }\n")
    (d,) = analyze_source(source, "u.c").diagnostics
    assert d.code == "PK010"
    line = source.split("\n")[1]
    assert line[d.span.col - 1:d.span.end_col - 1] == "x"
    s = analyze_source(source.replace("= x;", "= 1.0f;"), "u.c").schedules[0]
    first = source.split("\n")[0]
    assert first[s.keyword_span.col - 1:s.keyword_span.end_col - 1] == "meta_schedule"


@pytest.mark.parametrize("statement, words", [
    ("if (t == 0) continue;", "put the rest of the loop's body under an if instead"),
    ("y[b * B + t] = sizeof(float);", "compute it before the schedule (int bytes = sizeof(float);)"),
    ("y[b * B + t] = *x;", "index the array instead"),
    ("switch (t) { default: y[b * B + t] = 0; }", "use if / else if")])
def test_an_unsupported_construct_says_what_to_write_instead(statement, words):
    text = f"""void f(int n, int B, float x[n], float y[n])
{{
    meta_schedule {{
        meta_for (int b = 0; b < n / B; b++)
            meta_for (int t = 0; t < B; t++) {{
                {statement}
            }}
    }}
}}
"""
    (d,) = [d for d in analyze_source(text, "u.c").diagnostics if d.severity.value == "error"]
    assert d.code == "PK013" and words in d.message and d.span.line == 6, d.format()


MATMUL_LINES = (WRONG.parent / "matmul.c").read_text().split("\n")


@pytest.mark.parametrize("statement, before, after", [
    ("int p = i * B0 + v;", "v", "int q"),             # a declaration, then the next one
    ("assert(B0 <= ub1 * s);", ")", "assert(n %"),    # a call, then the next statement
    ("int q = j * ub1 * s + u;", "u", "for (int z"),  # the last declaration before a loop
    ("int dim0 = n / B0, dim1 = n / (ub1 * s);", ")", "meta_schedule"),   # was 'meta_schedule must be followed...'
])
def test_a_missing_semicolon_is_reported_after_the_token_it_follows(statement, before, after):
    (number,) = [k for k, text in enumerate(MATMUL_LINES) if statement in text]
    lines = list(MATMUL_LINES)
    lines[number] = lines[number].replace(statement, statement[:-1])
    assert after in "\n".join(lines[number + 1:number + 3])
    (d,) = analyze_source("\n".join(lines), "m.c").diagnostics
    assert d.message == f"expected ';' after '{before}'"
    column = lines[number].index(statement[:-1]) + len(statement[:-1]) + 1
    assert (d.span.line, d.span.col, d.span.end_col) == (number + 1, column, column + 1)


@pytest.mark.parametrize("body", ["for (int i = 0; i < n; i++)\n        int x = 1;",
                                  "if (n > 2)\n        int x = 1;",
                                  "int\n        = 3;"])
def test_a_line_that_cannot_follow_a_loop_head_or_a_keyword_is_not_a_missing_semicolon(body):
    (d,) = analyze_source(f"void f(int n)\n{{\n    {body}\n}}\n", "x.c").diagnostics
    assert d.code == "PK001" and "expected ';'" not in d.message, d.format()


ROWS_UNKNOWN = """void blur(int n, int B, {declared}, float out[n][n])
{{
    meta_schedule {{
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                out[i][j] = in[i][j] + in[i][j + 1];
    }}
}}
"""


@pytest.mark.parametrize("declared", ["const float in[][n + 1]", "const float (*in)[n + 1]"])
def test_an_array_without_its_number_of_rows_is_told_to_declare_it_once(declared):
    """`float in[][n]` was an internal error (PK099), and `float (*in)[n]` 'element type pointer to
    pointer', at every access."""
    text = ROWS_UNKNOWN.format(declared=declared)
    (d,) = analyze_source(text, "r.c").diagnostics
    assert d.code == "PK012" and "declare it with every extent (float in[ROWS][n + 1])" in d.message
    line = text.split("\n")[5]
    assert (d.span.line, d.span.col) == (6, line.index("in[i]") + 1)
    assert d.related and d.related[0].span.line == 1


def test_an_array_parameter_without_its_size_is_a_pointer():
    """`float in[]` is a pointer in C: it was an internal error (PK099)."""
    text = ROWS_UNKNOWN.format(declared="const float in[]").replace("in[i][j] + in[i][j + 1]",
                                                                   "in[i * n + j] + in[i * n + j + 1]")
    result = analyze_source(text, "r.c")
    assert result.diagnostics == () and len(result.schedules) == 1
    (array,) = [a for a in result.schedules[0].arrays if a.name == "in"]
    assert array.is_pointer and array.rank == 1


@pytest.mark.parametrize("levels, var, outer, guard", [
    ("meta_for (int i = 0; i < n; i++)\n        meta_for (int j = 0; j < i + 1; j++)", "j", "i", "if (j < i + 1)"),
    ("meta_for (int i = 0; i < n; i++)\n        meta_for (int j = i; j < n; j++)", "j", "i", "if (j >= i)"),
    ("meta_for (int i = 0; i < n; i++)\n        for (int k = 0; k < 4; k++)\n"
     "        meta_for (int j = 0; j < k + 1; j++)", "j", "k", "if (j < k + 1)"),
])
def test_a_meta_for_range_that_reads_an_enclosing_loop_is_refused_at_it(levels, var, outer, guard):
    """`meta_for (j = 0; j < i + 1; j++)` was taken with i as a parameter: the dispatcher's
    `block_x = i + 1` named a variable the host does not have, and nvcc refused it."""
    text = f"void f(int n, float a[n][n])\n{{\n    meta_schedule {{\n    {levels}\n        a[i][j] = 0.0f;\n    }}\n}}\n"
    (d,) = analyze_source(text, "t.c").diagnostics
    assert d.code == "PK003" and f"meta_for '{var}' reads '{outer}'" in d.message and d.message.endswith(guard)
    assert d.span.line == text.count("\n", 0, text.rindex(f"meta_for (int {var}")) + 1
    assert d.related[0].span.line == text.count("\n", 0, text.index(f"(int {outer} = 0")) + 1


@pytest.mark.parametrize("name", ["blockIdx", "threadIdx", "blockDim", "gridDim", "warpSize"])
def test_a_cuda_built_in_name_is_refused_at_its_declaration(name):
    """`meta_for (int blockIdx = 0; ...)` gave `const int blockIdx = blockIdx.x;`, which nvcc refused."""
    text = (f"void f(int n, int B, float a[n])\n{{\n    meta_schedule {{\n"
            f"        meta_for (int {name} = 0; {name} < n / B; {name}++)\n"
            f"            meta_for (int j = 0; j < B; j++)\n                a[{name} * B + j] = 1.0f;\n    }}\n}}\n")
    (d,) = analyze_source(text, "c.c").diagnostics
    assert d.code == "PK018" and d.message.startswith(f"'{name}' is a CUDA built-in variable")
    assert (d.span.line, d.span.col, d.span.end_col) == (4, 23, 23 + len(name))


@pytest.mark.parametrize("declared, words", [
    ("float b[n][]", "extent 2 of 'b' is empty: C leaves only the first extent of an array parameter empty"),
    ("float b[n][-1]", "extent 2 of 'b' is -1: an array's extents are positive"),
    ("float b[*]", "'b[*]' has no size: [*] belongs in prototypes"),
])
def test_an_array_parameter_c_refuses_is_refused_at_its_declaration(declared, words):
    """`float b[n][]` (an editor's closed bracket while typing b[n][m]) was an internal error
    (PK099); b[n][-1] and b[*] were analysed as if valid."""
    text = (f"void f(int n, int B, {declared}, float d[n])\n{{\n    meta_schedule {{\n"
            "        meta_for (int i = 0; i < n / B; i++)\n            meta_for (int j = 0; j < B; j++)\n"
            f"                d[i * B + j] = b[{'i * B + j' if '*' in declared else 'i][j'}];\n    }}\n}}\n")
    (d,) = analyze_source(text, "e.c").diagnostics
    assert d.code == "PK012" and words in d.message, d.format()
    assert (d.span.line, d.span.col) == (1, text.index(declared) + 1)


HIDING = """void f(int n, int B, float x[n], float y[n])
{{
    int blocks = (n + B - 1) / B;
    int i, k;
    meta_schedule {{
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {{
{body}
            }}
    }}
}}
"""


@pytest.mark.parametrize("body, line, col, words, related_line", [
    # a serial loop's variable, a local, a local deeper down: an enclosing loop's variable
    ("                for (int t = 0; t < 2; t++)\n                    y[b * B] += x[t];",
     8, 26, "'t' is already the variable of an enclosing loop", 7),
    ("                int t = b * B;\n                if (t < n) y[t] = 2.0f * x[t];",
     8, 21, "'t' is already the variable of an enclosing loop", 7),
    ("                int i = b * B + t;\n                for (int s = 0; s < 2; s++)\n"
     "                    if (i < n) { float b = s; y[i] += b; }",
     10, 40, "'b' is already the variable of an enclosing loop", 6),
    ("                int i = b * B + t;\n                for (int j = 0; j < 2; j++)\n"
     "                    for (int t = 0; t < 2; t++)\n                        y[i] += x[j];",
     10, 30, "'t' is already the variable of an enclosing loop", 7),
    # a name the block reads from outside it: a parameter (n, read through blocks), an array, a derived scalar
    ("                int n = b * B + t;\n                if (n < 100) y[n] = 2.0f * x[n];",
     8, 21, "'n' is declared again inside meta_schedule", 1),
    ("                int i = b * B + t;\n                for (int n = 0; n < 2; n++)\n"
     "                    if (i < 100) y[i] += 1.0f;",
     9, 26, "'n' is declared again inside meta_schedule", 1),
    ("                int i = b * B + t;\n                if (i < n) y[i] = x[i];\n"
     "                if (i < n) { float x = 1.0f; y[i] += x; }",
     10, 36, "'x' is declared again inside meta_schedule", 1),
    ("                int i = b * B + t;\n                if (i < n) { int blocks = 3; y[i] = blocks; }",
     9, 34, "'blocks' is declared again inside meta_schedule", 3),
])
def test_a_declaration_that_hides_a_loop_variable_or_a_parameter_is_refused_at_it(body, line, col, words,
                                                                                  related_line):
    """Issue 34: a nested loop redeclaring an enclosing loop's variable crashed optimize (sympy:
    duplicate argument), and emit wrote CUDA nvcc refused ("ty" has already been declared); a
    local named like a parameter the block reads gave the same nvcc error, or analysed the wrong
    variable (a race PK020 that was not there). One PK024 at the name of the declaration, no
    schedule, whatever the depth."""
    text = HIDING.format(body=body)
    result = analyze_source(text, "h.c")
    (d,) = result.diagnostics
    name = words.split("'")[1]
    assert d.code == "PK024" and words in d.message and "rename this one" in d.message, d.format()
    assert (d.span.line, d.span.col, d.span.end_line, d.span.end_col) == (line, col, line, col + len(name))
    assert text.split("\n")[line - 1][col - 1:col - 1 + len(name)] == name
    assert d.related[0].span.line == related_line
    assert result.schedules == ()


@pytest.mark.parametrize("body", [
    # a host variable the block does not read (i, k declared before it)
    "                int i = b * B + t;\n                if (i < n) y[i] = 2.0f * x[i];",
    # loops one after the other, with one name
    "                int i = b * B + t;\n                for (int k = 0; k < 2; k++) y[i] += 1.0f;\n"
    "                for (int k = 0; k < 2; k++) y[i] += x[i];",
    # a local hiding a local of an enclosing block: C++ allows it, each keeps its own value
    "                int i = b * B + t;\n                if (i < n) { int i = 0; y[b * B + t] += (float)i; }",
])
def test_a_name_hidden_nowhere_or_only_from_a_local_is_analysed(body):
    result = analyze_source(HIDING.format(body=body), "h.c")
    assert result.diagnostics == () and len(result.schedules) == 1


@pytest.mark.parametrize("name, hint", [
    ("A", "; did you mean 'a'?"),                       # the case of a letter
    ("bb", "; did you mean 'b'?"),
    ("zz", " (the arrays of this meta_schedule: a, b, c)"),
])
def test_an_undeclared_array_in_cache_names_the_one_meant(name, hint):
    from conftest import SAMPLES
    text = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", f"meta_schedule cache({name}) {{")
    (d,) = analyze_source(text, "m.c").diagnostics
    assert d.code == "PK005" and d.message == f"cache({name}): '{name}' is not declared{hint}"
    assert (d.span.line, d.span.col) == (12, 25)

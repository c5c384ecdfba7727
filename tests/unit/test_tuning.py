"""The time model (hand-computed cases), `parakern tune` (every sample and PolyBench program:
every configuration it returns is feasible, checked against the tree and CUDA's launch
limits on their own), its messages for bad input, and --measure without a GPU."""
import functools
import json
import math

import pytest
import sympy

from conftest import ROOT, SAMPLES
from parakern import dispatch, search
from parakern.analysis.facts import check_facts, substitutions
from parakern.bench import tune_measure
from parakern.commands import cli
from parakern.launch import in_parameters
from parakern.machine import limits
from parakern.machine.devices import PROFILES, get_profile, machine_values
from parakern.pipeline import analyze
from parakern.symbolic.symbols import R_B, T, Z
from parakern.tuning import time_model
from parakern.tuning.space import tuned_parameters

H100 = time_model.modelled(get_profile("h100"))


@functools.lru_cache(maxsize=None)
def _results(path: str):
    text = (ROOT / path).read_text()
    return tuple(r for r in analyze(text, path).results if r.tree is not None and r.tree.cases)


def test_saxpy_time_by_hand():
    """n = 2^20, B = 256 on an H100: 4096 blocks of 256 threads, 10 registers: 8 blocks per SM
    (warps: 64 / 8), 1056 at once, 4 waves; 12 bytes per thread; 4 operations per thread.
    A block of one thread moves a 32-byte sector per element of x, y read and y written."""
    result = _results("samples/saxpy.c")[0]
    q = time_model.tree_quantities(result.tree)[0]
    (B,) = q.global_bytes.free_symbols
    assert [q.global_bytes.subs(B, b) for b in (1, 4, 8, 32, 256)] == [96, 96, 96, 12 * 32, 12 * 256]
    assert str(q.ops32) == "4" and q.ops64 == 0
    # x, y read and y written through L1: a sector per 8 lanes of a warp, 12 bytes a thread
    assert [q.l1_traffic.subs(B, b) for b in (1, 32, 256)] == [96, 12 * 32, 12 * 256]
    subs = substitutions(result.schedule, {"n": 1 << 20, "B": 256})
    p = time_model.predict(q, subs, H100)
    assert p.resident == 8 and p.step("waves") == 4 and p.step("active") == 1056 and p.step("efficiency") == 1
    # 4 waves of 1056 blocks ask L2 for 4 x 1056 x 3072 bytes; x and y (8 MiB) fit in its 50 MiB,
    # so DRAM moves each byte of them once: x and y read, y written
    assert p.step("requested") == 4 * 1056 * 3072 and p.step("dram_bytes") == (1 << 20) * 12
    t_global = (1 << 20) * 12 / 3350e9
    t_compute = 4 * 8 * 256 * (4 / 128) / 1.98e9
    assert math.isclose(p.step("t_global"), t_global, rel_tol=1e-12)
    assert math.isclose(p.step("t_compute"), t_compute, rel_tol=1e-12)
    assert math.isclose(p.time, 3e-6 + t_global, rel_tol=1e-12)
    assert p.limiting == "global" and p.bytes_moved == 4096 * 3072


def test_few_blocks_use_the_bandwidth_less():
    """One block of 128 threads on 132 SMs: efficiency 128 / (132 · 1024), the time that much longer."""
    inputs = {"blocks": 1, "threads": 128, "resident": 16, "global_bytes": 1e6, "unique_bytes": 1e6,
              "read_bytes": 1e6, "synchronised": 0, "ops32": 0, "ops64": 0, "l1_traffic": 0, "l2_lines": 0, **time_model.device_values(H100)}
    env = time_model.evaluate(inputs)
    assert env["waves"] == 1 and env["per_sm"] == 1
    assert math.isclose(env["efficiency"], 128 / (132 * 1024))
    assert math.isclose(env["t_global"], 1e6 / (3350e9 * 128 / (132 * 1024)))


COLUMN_SUMS = """void colsum(int m, int n, int B, int a[m][n], int c[m][n])
{
    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int j = b * B + t;
                if (j < n) {
                    int acc = 0;
                    for (int i = 0; i < m; i++) {
                        acc += a[i][j];
                        c[i][j] = acc;
                    }
                }
            }
    }
}
"""


def test_where_the_block_shapes_tie_the_pick_has_full_warps_on_every_sm():
    """A thread per column, 4096 columns: every B predicts the same time (latency: as many threads
    in any shape), and tune recommended B = 1, 1-thread blocks, the first candidate."""
    from parakern.pipeline import analyze
    (result,) = analyze(COLUMN_SUMS, "colsum.c").results
    tuning = search.tune(result, {"n": 4096, "m": 1024}, H100)
    times = {c.values: c.time for c in tuning.configurations}
    assert len({round(t, 12) for t in times.values()}) == 1   # the terms do tie
    assert dict(tuning.pick.values) == {"B": 32}   # 128 blocks of a warp: 128 of the 132 SMs


def test_formula_is_the_same_text_in_c():
    lines = time_model.formula_c()
    assert ("const double time = launch_overhead + fmax(fmax(fmax(t_global, t_compute), "
            "fmax(t_l1, t_latency)), fmax(t_l2, t_atomic));") in lines
    assert lines[-1] == "const double ranked = time * (1.0 + 1e-6 * (2.0 - lanes - spread));"
    assert len(lines) == len(time_model.FORMULA)


def test_spearman():
    assert tune_measure.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1
    assert tune_measure.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1
    assert math.isclose(tune_measure.spearman([1, 2, 3], [1, 3, 2]), 0.5)
    assert math.isnan(tune_measure.spearman([1, 2], [1, 2]))
    assert tune_measure.ranks([5, 1, 5]) == [2.5, 1, 2.5]


def _feasible(result, config, fixed: dict, profile) -> str:
    """'' when the configuration is feasible, checked without the search's own code: the facts,
    the case's constraints (first pass) and its kernel's needs with the GPU's values, CUDA's launch
    limits (machine/limits.py) and what holds on every device."""
    schedule, tree = result.schedule, result.tree
    values = {**fixed, **dict(config.values)}
    subs = substitutions(schedule, values)
    machine = machine_values(profile)
    env = {**subs, R_B: sympy.Integer(machine["R_B"]), Z: sympy.Integer(machine["Z"]), T: sympy.Integer(machine["T"])}
    for fact in schedule.facts:
        rel = sympy.sympify(fact.relation).xreplace(subs)
        if not rel.free_symbols and not bool(rel):
            return f"fact {fact.relation}"
    case = tree.cases[config.case - 1]
    relations = list(case.needs.relations)
    if config.by == dispatch.FIRST_PASS:
        relations += list(case.constraints.relations)
    relations += list(limits.launch_relations(case.kernel.schedule)) + list(limits.machine_facts(schedule))
    for rel in relations:
        value = in_parameters(rel, case.kernel.schedule).xreplace(env)
        if value.free_symbols or not bool(value):
            return f"case {config.case}: {rel}"
    if any(not 1 <= g <= top for g, top in zip(config.grid, limits.GRID_LIMITS)):
        return f"grid {config.grid}"
    if any(not 1 <= b <= top for b, top in zip(config.block, limits.BLOCK_LIMITS)) or \
            math.prod(config.block) > limits.MAX_THREADS_PER_BLOCK:
        return f"block {config.block}"
    if config.shared_bytes > profile.max_shared_memory_per_block or config.prediction.resident < 1:
        return "shared memory / residency"
    return ""


FILES = sorted(str(p.relative_to(ROOT)) for p in [*SAMPLES.glob("*.c"), *(SAMPLES / "polybench").glob("*.c")])


def test_cli_tune_json_on_a_file_without_a_tree_prints_the_document(capsys):
    """tune --json on a syntax error printed nothing on stdout (exit 2): a script reading it got
    no JSON to parse. The document has the diagnostics, at their positions."""
    import json
    assert cli.main(["tune", str(SAMPLES / "wrong" / "syntax_error.c"), "--profile", "h100", "--json"]) == 2
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["schedules"] == [] and doc["problems"][0].startswith("no schedule with a case tree in ")
    assert doc["problems"][0].endswith("the diagnostics in `diagnostics` say why")
    (diagnostic,) = doc["diagnostics"]
    assert diagnostic["code"] == "PK001" and diagnostic["range"]["start"] == {"line": 5, "character": 35}
    assert "PK001" in captured.err


@pytest.mark.parametrize("args, message", [
    (["--profile", "h900", "--data", "n=4"], "unknown GPU profile 'h900'"),
    (["--profile", "h100", "--data", "n=x"], "the value must be one integer"),
    (["--profile", "h100", "--data", "n=1000,B=32"], "one name per --data, repeated: --data n=1000 --data B=32"),
    (["--profile", "h100", "--data", "q=3"], "--data q: no schedule"),
    (["--profile", "h100"], "no value for n; give --data n=..."),
    (["--profile", "h100", "--data", "n=4", "--top", "0"], "--top and --repeat must be at least 1"),
])
def test_cli_tune_bad_input_is_one_line(capsys, args, message):
    """Exit 2 (usage), as README says: before, a value missing exited 1 after an empty line."""
    assert cli.main(["tune", str(SAMPLES / "saxpy.c"), *args]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert captured.out == ""


def test_a_block_size_of_zero_violates_its_fact(capsys):
    """B = 0 divides by zero in the grid's extent; the fact B >= 1 says what is wrong. Before,
    sympy compared the zoo it made: 'internal error (TypeError: Invalid comparison ...)'."""
    assert cli.main(["tune", str(SAMPLES / "saxpy.c"), "--profile", "a100", "--data", "n=1024", "--data", "B=0"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "parakern tune: saxpy:0: no feasible configuration (1 violates B >= 1)"
    schedule = _results("samples/saxpy.c")[0].schedule
    assert check_facts(schedule, substitutions(schedule, {"n": 1024, "B": 0})).startswith("violates B >= 1 (loop bound, line ")


def test_cli_measure_without_a_gpu_says_so(capsys, monkeypatch):
    monkeypatch.setattr("parakern.bench.runner.requirements", lambda: "parakern bench: pycuda is not installed; x")
    code = cli.main(["tune", str(SAMPLES / "saxpy.c"), "--profile", "h100", "--data", "n=4096", "--measure"])
    captured = capsys.readouterr()
    assert code == 3 and "--measure needs a GPU: pycuda is not installed" in captured.err
    assert "saxpy:0 on h100" in captured.out   # the predictions are still printed


def test_hover_shows_the_recommendation_per_profile():
    """The worker's summary carries, per GPU profile, tune's pick at the default data sizes; the
    hover renders it."""
    from parakern.lsp.summarize import summarize
    from parakern.lsp.texts import tuning_markdown
    summary = summarize(_results("samples/saxpy.c")[0], "k", 0, ("h100", "t4"))
    assert [t.key for t in summary.tuning] == ["h100", "t4"]
    assert all(t.data == "n=1024" and t.configuration.startswith("case 1: B=") and t.predicted for t in summary.tuning)
    text = tuning_markdown(summary)
    assert "**Recommended values**" in text and "- **H100** at n=1024: case 1: B=" in text and "predicted" in text


def test_sector_bytes_by_the_stride_between_lanes():
    """64 floats requested by warps of 32 lanes: contiguous 256 B; every other float 512 B;
    a row per lane (stride unknown) a sector each; one lane per warp a sector each."""
    from parakern.tuning.time_model import _sector_bytes
    assert _sector_bytes(64, 4, 0, 32) == 256
    assert _sector_bytes(64, 4, 1, 32) == 256
    assert _sector_bytes(64, 4, 2, 32) == 512
    assert _sector_bytes(64, 4, None, 32) == 64 * 32
    assert _sector_bytes(64, 4, 1, 1) == 64 * 32
    assert _sector_bytes(64, 8, 1, 32) == 512          # doubles: 8 sectors a request


def test_tiny_blocks_are_limited_by_starting_them():
    """saxpy at n = 2^26 with 64-thread blocks: 2^20 blocks, 7944 on the busiest of 132 SMs at
    80 ns each (what the H100 run measured: 634 us) outweigh the bytes (805 MB at 3.35 TB/s);
    the last block started still runs its thread's path (t_latency). With 256-thread blocks
    the bytes limit again."""
    result = _results("samples/saxpy.c")[0]
    q = time_model.tree_quantities(result.tree)[0]
    small = time_model.predict(q, substitutions(result.schedule, {"n": 1 << 26, "B": 64}), H100)
    assert small.limiting == "latency"
    assert math.isclose(small.step("t_blocks"), math.ceil((1 << 20) / 132) * 80e-9, rel_tol=1e-12)
    assert 0 < small.step("path") < small.step("t_blocks") / 100
    assert math.isclose(small.time, 3e-6 + small.step("t_blocks") + small.step("path"), rel_tol=1e-12)
    large = time_model.predict(q, substitutions(result.schedule, {"n": 1 << 26, "B": 256}), H100)
    assert large.limiting == "global" and large.time < small.time


def test_the_model_may_prefer_a_case_the_tree_does_not():
    """jacobi1d at N = 4194306 on an H100: the tree prefers the staged case 1 wherever its tile
    fits, the model the unstaged case 3 (staging copies cost more than the three neighbours
    they share); tune offers both at each candidate, marks the one the default dispatcher launches
    there (the model's), and every configuration's case fits there."""
    result = _results("samples/jacobi1d.c")[0]
    tuning = search.tune(result, {"N": 4194306, "t": 0}, H100)
    pick = tuning.pick
    assert pick.case == 3 and pick.by == dispatch.FASTEST
    machine = H100
    at_pick = [c for c in tuning.configurations if c.values == pick.values]
    assert {1, 3} <= {c.case for c in at_pick}   # the staged case is offered there too, slower
    for c in tuning.configurations:
        choice = dispatch.choose(result.tree, machine, substitutions(result.schedule, {"N": 4194306, **dict(c.values)}))
        assert c.case in (choice.case, *choice.fits)
        assert (c.by == search.ANOTHER) == (c.case != choice.case)
    at = substitutions(result.schedule, {"N": 4194306, **dict(pick.values)})
    assert dispatch.choose(result.tree, machine, at).tree == 1   # the tree's order launches the staged case


def _analysed(path: str, text: str):
    return tuple(r for r in analyze(text, path).results if r.tree is not None and r.tree.cases)


def test_blocks_that_wait_at_barriers_need_others_resident():
    """A staged block waits at its barriers: with r blocks resident per SM the others cover
    r / (r + 1) of it (2 blocks of 1024 threads: 2/3 of the bandwidth). An unstaged one has no
    barrier: the same launch keeps all of it."""
    base = {"blocks": 1e6, "threads": 1024, "resident": 2, "global_bytes": 1e4, "unique_bytes": 1e10,
            "read_bytes": 1e10, "ops32": 0, "ops64": 0, "l1_traffic": 0, "l2_lines": 0, **time_model.device_values(H100)}
    staged, unstaged = time_model.evaluate({**base, "synchronised": 1}), time_model.evaluate({**base, "synchronised": 0})
    assert math.isclose(staged["overlap"], 2 / 3) and unstaged["overlap"] == 1
    assert math.isclose(staged["t_global"], unstaged["t_global"] * 1.5)
    result = _results("samples/transpose.c")[0]
    assert [q.synchronised for q in time_model.tree_quantities(result.tree)] == [
        int(bool(c.kernel.cached)) for c in result.tree.cases]


def test_loops_that_are_not_unrolled_pay_for_each_iteration():
    """matmul's cases 2 and 3 reduce register pressure on the IR (levels 1 and 2: loops printed
    `#pragma unroll 1`); each iteration of their w loop (s) and of the z loop inside it (B0)
    costs 6 operations more than case 1's, at every k (n / B0 of them). On the H100's tune run
    they measured 1.7x slower than case 1 at the same launch."""
    result = _results("samples/matmul.c")[0]
    written = [k for k, c in enumerate(result.tree.cases) if "(6)" not in c.decisions]   # (6): test_coarsen
    assert [result.tree.cases[k].kernel.ir_level for k in written] == [0, 1, 2]
    one, two, three = (time_model.tree_quantities(result.tree)[k] for k in written)
    names = {x.name: x for x in one.ops32.free_symbols}
    n, B0, s = names["n"], names["B0"], names["s"]
    k = sympy.floor(n / B0)
    iterations = (s + s * B0) * k
    assert sympy.expand(two.ops32 - one.ops32 - time_model.NOT_UNROLLED_ITERATION_OPS * iterations) == 0
    assert sympy.expand(three.ops32 - two.ops32) == 0


PERIODIC = (SAMPLES / "polybench" / "periodic.c").read_text()   # a[(p + 1) % N], cache(a)
UPSAMPLE = (SAMPLES / "polybench" / "upsample.c").read_text()   # in[i / 2][j / 2]


def test_tune_judges_the_facts_with_the_functions_other_arguments(capsys, tmp_path):
    """assert(n % (s * B) == 0) with s no parameter of the schedule: --data s=2 is its value
    (before, the fact was never judged and B = 64 was offered at n = 96)."""
    source = tmp_path / "f.c"
    source.write_text("""#include <assert.h>
void f(int n, int B, int s, float x[n])
{
    assert(n % (s * B) == 0);
    meta_schedule {
        meta_for (int i = 0; i < n / B; i++)
            meta_for (int j = 0; j < B; j++)
                x[i * B + j] = 2.0f * x[i * B + j];
    }
}
""")
    assert cli.main(["tune", str(source), "--profile", "h100", "--data", "n=96", "--data", "s=2", "--json",
                     "--top", "20"]) == 0
    offered = {c["parameters"]["B"] for c in json.loads(capsys.readouterr().out)["schedules"][0]["configurations"]}
    assert offered and all(96 % (2 * b) == 0 for b in offered) and 16 in offered


@pytest.mark.parametrize("ctype", ["unsigned long", "unsigned long long", "long", "unsigned"])
def test_a_block_size_of_any_integer_type_is_tuned(ctype):
    """unsigned long block sizes were not tuned: tune asked for --data B=... (bug hunt)."""
    from parakern.pipeline import analyze
    text = f"""void scale({ctype} n, {ctype} B, float a[n], float b[n])
{{
    meta_schedule {{
        meta_for ({ctype} i = 0; i < n / B; i++)
            meta_for ({ctype} j = 0; j < B; j++)
                b[i * B + j] = 2.0f * a[i * B + j];
    }}
}}
"""
    result = analyze(text, "s.c").results[0]
    assert tuned_parameters(result.schedule) == ("B",)
    tuning = search.tune(result, {"n": 1 << 20}, time_model.modelled(PROFILES["h100"]))
    assert tuning.pick is not None and dict(tuning.pick.values)["B"] >= 32


def test_a_warp_issues_its_32_lanes_however_few_threads_a_block_has():
    """Compute-bound blocks of 4 threads were predicted as fast as blocks of 128 (the term
    counted threads, not the warps' lanes): at one block per SM the same arithmetic costs
    32 lanes for 4 threads as for 32."""
    inputs = {"blocks": 132, "threads": 4, "resident": 1, "global_bytes": 0, "unique_bytes": 0, "read_bytes": 0,
              "synchronised": 0, "ops32": 1000, "ops64": 0, "l1_traffic": 0, "l2_lines": 0}
    device = time_model.modelled(PROFILES["h100"])
    four = time_model.evaluate({**inputs, **time_model.device_values(device)})["t_compute"]
    warp = time_model.evaluate({**inputs, "threads": 32, **time_model.device_values(device)})["t_compute"]
    assert four == warp == 32 * 1000 / device.fp32_lanes_per_sm / device.clock


CSR = """void spmv(int m, int nnz, int B, int rowptr[m + 1], int col[nnz], float val[nnz], float x[m], float y[m])
{
    meta_schedule {
        meta_for (int i = 0; i < (m + B - 1) / B; i++)
            meta_for (int j = 0; j < B; j++) {
                int r = i * B + j;
                if (r < m) {
                    float acc = 0.0f;
                    BOUNDS
                        acc += val[k] * x[col[k]];
                    y[r] = acc;
                }
            }
    }
}
"""
CSR_DIRECT = CSR.replace("BOUNDS", "for (int k = rowptr[r]; k < rowptr[r + 1]; k++)")
CSR_LOCALS = CSR.replace("BOUNDS", "int lo = rowptr[r], hi = rowptr[r + 1];\n"
                                   "                    for (int k = lo; k < hi; k++)")


def test_a_definition_that_int_cannot_hold_is_infeasible(capsys):
    """saxpy at n = 2^31 - 1: `int blocks = (n + B - 1) / B` wraps in C for every B > 1, and
    tune called each feasible."""
    assert cli.main(["tune", str(SAMPLES / "saxpy.c"), "--profile", "h100", "--data", "n=2147483647"]) == 0
    out = capsys.readouterr().out
    assert "10 × B + n - 1 in the definition of blocks (line 6) is beyond the range of int" in out
    assert "compile it: parakern emit" in out and "--fix B=1\n" in out   # B = 1 alone: n + 0


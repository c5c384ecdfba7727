"""The time model (hand-computed cases), `parakern tune` (every sample and PolyBench program:
every configuration it returns is feasible, checked against the tree and CUDA's launch
limits on their own), its messages for bad input, and --measure without a GPU."""
import dataclasses
import json
import math
import re

import pytest
import sympy

from conftest import SAMPLES
from parakern import search
from parakern.analysis.facts import substitutions
from parakern.commands import cli
from parakern.launch import in_parameters
from parakern.machine.devices import PROFILES, get_profile
from parakern.pipeline import analyze
from parakern.tuning import copies, time_model
from parakern.tuning.space import tuned_parameters
from unit.test_tuning import CSR_DIRECT, CSR_LOCALS, FILES, H100, PERIODIC, UPSAMPLE, _analysed, _feasible, _results


def test_a_bound_that_reads_loop_variables_counts_the_average_threads_trips():
    """trmv: row i of L sums i + 1 terms (k <= i, i = b*B + t); the model is a formula in the
    parameters only (dispatch_auto prints it in C), so each loop variable stands at the mean
    of its range: (g*B - 1)/2 + 1 trips of the average thread, rounded up. Before, b and t
    stayed in the formula: nvcc could not compile dispatch_auto and tune found nothing."""
    first, second = _results("samples/polybench/trmv.c")
    for result in (first, second):
        params = {p.name for p in result.schedule.params}
        for q in time_model.tree_quantities(result.tree):
            for name, e in q.expressions().items():
                assert {x.name for x in sympy.sympify(e).free_symbols} <= params, (name, e)
    q = time_model.tree_quantities(first.tree)[0]
    names = {x.name: x for x in q.ops32.free_symbols}

    def ops(n, b):
        return int(q.ops32.subs({names["n"]: n, names["B"]: b}))

    def trips(n, b):   # the mean of i + 1 over the launch's g*B threads, rounded up
        return math.ceil(sympy.Rational(-(-n // b) * b - 1, 2) + 1)

    points = [(45, 8), (1000, 128), (7, 32), (300, 1)]
    per_trip = (ops(*points[1]) - ops(*points[0])) // (trips(*points[1]) - trips(*points[0]))
    assert per_trip > 0
    assert all(ops(*p) - per_trip * trips(*p) == ops(*points[0]) - per_trip * trips(*points[0]) for p in points)
    # the serial loop q < 4 around `for (j = q; j < m; j++)`: m - 3/2 trips on average, linear in m
    # where the average thread runs some, none (not fewer) where m is below the mean start
    q2 = time_model.tree_quantities(second.tree)[0]
    m = next(x for x in q2.ops32.free_symbols if x.name == "m")
    at = [int(q2.ops32.subs(m, v)) for v in (10, 20, 30, 40)]
    assert at[1] - at[0] == at[2] - at[1] == at[3] - at[2] > 0
    assert int(q2.ops32.subs(m, 0)) >= 0


def test_jacobi_quantities_by_hand():
    """Case 1 stages a: each block reads B·s + 2 and writes B·s ints; through L1/shared memory
    8 accesses (both branches of t % 2) per k, plus the copies (B·s + 2 loaded, B·s written
    back; global and shared side each); 16 operations per k, plus 16 per element the staging loops copy (one
    dimension: linear copies) and 50 per copy loop a thread runs (a load and a write-back: of
    the two choices of t % 2 a launch runs one). The global bytes are whole 32-byte sectors of
    each run of ints: B·s + 2 read, B·s written."""
    result = _results("samples/jacobi1d.c")[0]
    q = time_model.tree_quantities(result.tree)[0]
    names = {x.name: x for x in q.global_bytes.free_symbols}
    B, s = names["B"], names["s"]
    for b, k in ((1, 1), (3, 2), (8, 4), (64, 4)):
        sectors = 32 * (math.ceil((b * k + 2) * 4 / 32) + math.ceil(b * k * 4 / 32))
        assert q.global_bytes.subs({B: b, s: k}) == sectors
    # a[2N] of ints, read and written: 8N bytes read, 8N more written; the block waits at barriers
    assert (str(q.read_bytes), str(q.unique_bytes), q.synchronised) == ("8*N", "16*N", 1)
    # the copies: B·s + 2 ints loaded, B·s written back, each through L1 and shared memory
    assert sympy.expand(q.l1_traffic - (32 * B * s + 2 * 4 * ((B * s + 2) + B * s))) == 0
    for b, k in ((1, 1), (3, 2), (64, 4), (128, 1)):   # whole operations per thread
        copied = (b * k + 2) + b * k
        expected = 16 * k + math.ceil(sympy.Rational(copies.COPY_OPS_PER_ELEMENT["linear"] * copied, b)
                                      + 2 * copies.COPY_LOOP_OPS)
        assert q.ops32.subs({B: b, s: k}) == expected
    assert sympy.expand(q.shared_bytes - (8 * B * s + 8)) == 0


def test_tuned_parameters():
    assert tuned_parameters(_results("samples/matmul.c")[0].schedule) == ("B0", "ub1", "s")
    assert tuned_parameters(_results("samples/jacobi1d.c")[0].schedule) == ("s", "B")
    assert tuned_parameters(_results("samples/matvec.c")[0].schedule) == ("B",)   # m, n are sizes


@pytest.mark.parametrize("path", FILES)
def test_every_configuration_tune_returns_is_feasible(path):
    for result in _results(path):
        s = result.schedule
        tuned = tuned_parameters(s)
        fixed = {p.name: (0 if p.name in s.host_loops else 200) for p in s.params
                 if p.name not in tuned and p.ctype == "int"}
        for key in ("h100", "t4"):
            tuning = search.tune(result, fixed, time_model.modelled(get_profile(key)))
            assert tuning.pick is not None, (s.id, key, tuning.rejected)
            ranks = [c.per_point for c in tuning.configurations[1:]]   # time per point computed
            assert ranks == sorted(ranks)
            assert not tuning.pick.partial or all(c.partial for c in tuning.configurations)
            for config in tuning.configurations:
                why = _feasible(result, config, fixed, PROFILES[key])
                assert not why, f"{s.id} on {key}: {config.values}: {why}"


def test_cli_tune_text_and_json(capsys):
    assert cli.main(["tune", str(SAMPLES / "jacobi1d.c"), "--profile", "h100", "--data", "N=100002",
                     "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "jacobi1d:0 on h100" in out and "rank  case" in out and out.count("\n  ") >= 4
    import json
    assert cli.main(["tune", str(SAMPLES / "saxpy.c"), "--profile", "a100", "--data", "n=4096", "--json",
                     "--formula"]) == 0
    doc = json.loads(capsys.readouterr().out)
    entry = doc["schedules"][0]
    assert entry["tuned"] == ["B"] and entry["configurations"][0]["parameters"]["B"] >= 1
    assert {"predicted_s", "occupancy", "bytes_moved", "case"} <= set(entry["configurations"][0])
    assert "waves = ceil(blocks / concurrent)" in entry["formula"][0]


def test_no_common_values_of_a_function_one_of_whose_schedules_failed(capsys):
    """three_mm without nm: its second product failed, and the function's last line still said
    'call it with B0=... B1=...' from the other two."""
    assert cli.main(["tune", str(SAMPLES / "polybench" / "three_mm.c"), "--profile", "h100", "--data", "ni=100",
                     "--data", "nj=100", "--data", "nk=100", "--data", "nl=100"]) == 2
    captured = capsys.readouterr()
    assert "three_mm:0 on h100" in captured.out and "call it with" not in captured.out
    assert "three_mm:1: no value for nm" in captured.err


def test_a_launch_limit_that_every_case_exceeds_is_named(capsys):
    """doitgen at nr = nq = 1024 said only 'no case fits the device': its grid's y is nr*nq."""
    assert cli.main(["tune", str(SAMPLES / "polybench" / "doitgen.c"), "--profile", "h100", "--data", "nr=1024",
                     "--data", "nq=1024", "--data", "np=64"]) == 1
    assert "no case fits the device: grid y = 1048576 exceeds 65535" in capsys.readouterr().err


def test_cli_tune_nothing_feasible(capsys):
    """matmul at n = 3: no power of two divides it as the asserts ask (beyond 1, and B0 ≤ ub1·s)."""
    code = cli.main(["tune", str(SAMPLES / "matmul.c"), "--profile", "t4", "--data", "n=3", "--data", "B0=2"])
    err = capsys.readouterr().err
    assert code == 1 and "no feasible configuration" in err and "Traceback" not in err


def test_tune_takes_the_host_arguments_for_measure(capsys):
    """--data T=4 on jacobi1d: T is the function's step count, not a schedule parameter; the
    model ignores it, a name that is neither is refused with both lists."""
    assert cli.main(["tune", str(SAMPLES / "jacobi1d.c"), "--profile", "h100", "--data", "N=4098",
                     "--data", "T=4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["schedules"][0]["configurations"]
    assert cli.main(["tune", str(SAMPLES / "jacobi1d.c"), "--profile", "h100", "--data", "Q=4"]) == 2
    err = capsys.readouterr().err
    assert "--data Q: no schedule" in err and "the function's other arguments: T" in err


def test_what_blocks_read_again_comes_from_l2_where_the_arrays_fit():
    """matmul at n = 1024 (ub1 = 32, B0 = 8, s = 2): every block reads its panels of a and b, so
    the blocks ask for far more than the matrices hold; what c += a * b reads (a, b, c: 12 MiB)
    fits in an H100's 50 MiB L2, so DRAM moves a and b once and c in and out. A T4's L2 (4 MiB)
    holds less than the matrices, but a resident block reads, at each k, its tiles of a and b
    (8 x 8 and 8 x 64 floats) beside its tile of c (8 x 64): 4352 B, 160 blocks 680 KiB: DRAM moves the arrays once
    there too. An L2 of 512 KiB holds not even that: DRAM moves what the blocks ask for."""
    result = _results("samples/matmul.c")[0]
    q = time_model.tree_quantities(result.tree)[0]
    subs = substitutions(result.schedule, {"n": 1024, "ub1": 32, "B0": 8, "s": 2})
    n2 = 1024 * 1024 * 4
    assert (time_model.at(q, subs)["unique_bytes"], time_model.at(q, subs)["read_bytes"]) == (4 * n2, 3 * n2)
    h100 = time_model.predict(q, subs, H100)
    assert h100.step("requested") > 4 * n2 and h100.step("dram_bytes") == 4 * n2 == h100.bytes_moved
    t4 = time_model.predict(q, subs, time_model.modelled(get_profile("t4")))
    assert t4.step("window_bytes") == 4 * (8 * 8 + 2 * 8 * 64) and t4.step("active") == 160
    assert t4.step("read_bytes") > get_profile("t4").l2_cache_bytes and t4.step("dram_bytes") == 4 * n2
    small = dataclasses.replace(get_profile("t4"), l2_cache_bytes=512 * 1024)
    tiny = time_model.predict(q, subs, time_model.modelled(small))
    assert tiny.step("dram_bytes") == tiny.step("requested") > 4 * n2


def test_a_staged_tile_moves_whole_sectors_of_its_rows():
    """transpose's case 1 copies a's B0 x (B1·s) tile and writes back c's (B1·s) x B0 tile: c's
    rows are B0 floats, so at B0 = 4 each row fills half of a 32-byte sector and costs a whole
    one; from B0 = 8 on the sectors are full."""
    result = _results("samples/transpose.c")[0]
    q = time_model.tree_quantities(result.tree)[0]
    for b0, expected in ((4, 4 * 64 * 4 + 64 * 32), (8, 2 * 8 * 64 * 4), (16, 2 * 16 * 64 * 4)):
        subs = substitutions(result.schedule, {"N": 8192, "B0": b0, "B1": 32, "s": 2})
        assert time_model.at(q, subs)["global_bytes"] == expected


def test_staging_copies_are_the_plans_loops():
    """transpose's case 1: a is loaded and c only written back (nothing reads c), each a
    B0 x (B1·s) tile that a thread walks s elements of with stepped coordinates; its second
    case copies a B0 x B1 tile per block, an element per thread, dividing the index. matmul
    with cache(a, b) loads both tiles at every k (a between loop) and writes nothing back."""
    per, loop, division = copies.COPY_OPS_PER_ELEMENT, copies.COPY_LOOP_OPS, copies.INT_DIVISION_OPS
    result = _results("samples/transpose.c")[0]
    one, two = result.tree.cases[0], result.tree.cases[1]
    found = [(c.array, c.load, str(c.copied), c.per_element, c.per_loop) for c in copies.copy_loops(one)]
    # a stepped 2-D box divides tid and nthreads by its rows (a division and a remainder of each)
    # once per execution
    assert sorted(found) == [("a", True, "B0*B1*s", per["stepped"], loop + 4 * division),
                             ("c", False, "B0*B1*s", per["stepped"], loop + 4 * division)]
    # the other box divides each element's index: a division and a remainder per element
    assert [c.per_element for c in copies.copy_loops(two)] == [per["divided"] + 2 * division] * 2
    first, second = time_model.tree_quantities(result.tree)[:2]
    # per thread: the body's 6 operations per k; the copies 2 x s elements at 30 and 2 loops
    # (case 1), 2 elements and 2 loops (case 2: one k per block)
    (k,) = first.ops32.free_symbols
    assert sympy.expand(first.ops32 - (6 * k + 2 * per["stepped"] * k + 2 * (loop + 4 * division))) == 0
    assert second.ops32 == 6 + 2 * (per["divided"] + 2 * division) + 2 * loop
    text = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")
    (cached,) = _analysed("matmul_cache.c", text)
    staged = next(c for c in cached.tree.cases if c.kernel.cached)
    loads = copies.copy_loops(staged)
    assert sorted(c.array for c in loads) == ["a", "b"] and all(c.load for c in loads)
    point = {"n": 1024, "ub1": 32, "B0": 8, "s": 2}   # n / B0 = 128 tiles of each, B0 x B0 and B0 x ub1·s
    copied = {c.array: c.copied.subs({x: point[x.name] for x in c.copied.free_symbols}) for c in loads}
    assert copied == {"a": 128 * 8 * 8, "b": 128 * 8 * 64}


@pytest.mark.parametrize("text, data, point, per_block, arrays", [
    # a's two reads: 2 x 256 doubles, consecutive lanes one apart (the wrap aside): 4096 bytes;
    # b: 2048. The footprint of a % subscript is all of a (N doubles), not what one block reads.
    (PERIODIC, {"N": 1 << 24}, {"B": 256}, 2 * 256 * 8 + 256 * 8, 16 << 24),
    # in[i / 2][j / 2]: two lanes share a float, 16 of a warp's 32 lanes in 2 sectors (256
    # threads: 512 bytes); out: 1024. Arrays: in (n^2 floats) read, out (4 n^2) written.
    (UPSAMPLE, {"n": 8192}, {"Bx": 32, "By": 8}, 256 * 2 + 256 * 4, 20 * 8192 ** 2),
])
def test_a_block_moves_no_more_than_its_accesses_request(text, data, point, per_block, arrays):
    """A subscript with % or / is not affine: its footprint is the whole array, which every
    block counted (periodic at N = 2^24: 2.67 s and 8.8 TB predicted, upsample at n = 8192:
    168 s). A block moves no more than its accesses request: the launch then moves its arrays
    about once, and the time is near their bytes over the bandwidth."""
    (result,) = _analysed("mod.c", text)
    q = time_model.tree_quantities(result.tree)[-1]   # the unstaged case
    subs = substitutions(result.schedule, {**data, **point})
    assert time_model.at(q, subs)["global_bytes"] == per_block
    pick = search.tune(result, data, H100).pick
    assert arrays <= pick.prediction.bytes_moved <= 1.5 * arrays   # a's two reads of periodic: 1.5
    assert arrays / H100.bandwidth < pick.time < 2 * arrays / H100.bandwidth


def test_cli_tune_says_how_to_compile_its_pick(capsys, tmp_path):
    """The text ends each schedule with the emit command for its first configuration, whose
    output holds the instances at those values; a function whose schedules share parameters
    (3mm) gets one command, on its shared line."""
    assert cli.main(["tune", str(SAMPLES / "matmul.c"), "--profile", "h100", "--data", "n=2048"]) == 0
    out = capsys.readouterr().out
    (hint,) = [line.strip() for line in out.splitlines() if line.strip().startswith("compile it:")]
    first = next(line.replace("*", "").split() for line in out.splitlines() if line.startswith("  1 "))
    assert hint == f"compile it: parakern emit {SAMPLES / 'matmul.c'} --fix B0={first[2]},ub1={first[3]},s={first[4]}"
    target = tmp_path / "m.cu"
    assert cli.main([*hint.split()[3:], "-o", str(target)]) == 0
    assert f"matmul_0_case{first[1]}_B0_{first[2]}_ub1_{first[3]}_s_{first[4]}(" in target.read_text()
    three = SAMPLES / "polybench" / "three_mm.c"
    assert cli.main(["tune", str(three), "--profile", "h100", *[a for n in ("ni", "nj", "nk", "nl", "nm")
                                                                for a in ("--data", f"{n}=600")]]) == 0
    lines = capsys.readouterr().out.splitlines()
    hints = [k for k, line in enumerate(lines) if line.strip().startswith("compile it:")]
    assert len(hints) == 1 and lines[hints[0] - 1].startswith("three_mm: its schedules share B0, B1")


def test_the_rows_of_a_coarsened_thread_issue_their_shared_load_once():
    """Decision (6) gives a thread 4 rows of matmul; their reads of b are the same element
    (rows 2 to 4 under their row guard), which the compiler loads once: the model counts one
    load of b, 4 of a (4 rows), and its L1 bytes are 3 loads of b fewer per k and z."""
    text = (SAMPLES / "matmul.c").read_text().replace("meta_schedule {", "meta_schedule cache(a, b) {")
    tree = analyze(text, "matmul.c").results[0].tree
    (case,) = [c for c in tree.cases if "(6)" in c.decisions and c.kernel.cached]
    s = case.kernel.schedule
    issued = time_model.issued(s.accesses, s)
    assert [a.array for a in s.accesses if a.is_read].count("b") == 4
    assert [a.array for a in issued if a.is_read].count("b") == 1
    assert [a.array for a in issued if a.is_read].count("a") == 4
    (b,) = [a for a in issued if a.array == "b"]
    threads = time_model.launch_of(case).threads
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time_model, "issued", lambda accesses, schedule: tuple(accesses))
        counted_four_times = time_model.l1_traffic(case, copies.copy_loops(case))
    once = time_model.l1_traffic(case, copies.copy_loops(case))
    assert sympy.expand(counted_four_times - once - in_parameters(3 * time_model.executions(b, s) * threads * 4, s)) == 0


def test_l2_serves_a_warps_request_a_line_at_a_time():
    """matadd: a block of B0 rows of B1 ints reads a and b and writes c, twice (columns j and
    j + N/2). A warp's request touches one 128-byte line per row it covers (32 / B1 rows where
    B1 < 32): 6 * B0 lines per block where B1 <= 32, 6 * B0 * B1 / 32 where B1 > 32. At N = 8192 on an H200 the 8-column blocks are limited by L2 (Nsight Compute:
    96 % busy, 259 us), the 16-column ones by DRAM (206 us)."""
    result = _results("samples/matadd.c")[0]
    q = time_model.tree_quantities(result.tree)[0]
    names = {x.name: x for x in q.l2_lines.free_symbols}
    B0, B1 = names["B0"], names["B1"]
    assert sympy.simplify(q.l2_lines.subs(B1, 8) - 6 * B0) == 0
    assert sympy.simplify(q.l2_lines.subs(B1, 16) - 6 * B0) == 0            # 2 rows a warp, 2 sectors a line
    assert sympy.simplify(q.l2_lines.subs(B1, 64) - 6 * B0 * 2) == 0        # 2 warps a row, a line each
    h200 = time_model.modelled(get_profile("h200"))
    eight = time_model.predict(q, substitutions(result.schedule, {"N": 8192, "B0": 16, "B1": 8}), h200)
    sixteen = time_model.predict(q, substitutions(result.schedule, {"N": 8192, "B0": 16, "B1": 16}), h200)
    # 3 arrays of N^2 ints, a line per row of 8 of them: in whole waves of 132 x 16 blocks
    assert eight.step("blocks") * 6 * 16 == 3 * 8192 * 8192 / 8
    lines = eight.step("waves") * eight.step("active") * 6 * 16
    assert math.isclose(eight.step("t_l2"), lines / (time_model.L2_LINES_PER_CLOCK * 1980e6), rel_tol=1e-9)
    assert eight.limiting == "l2" and sixteen.limiting == "global"
    assert eight.time > 1.4 * sixteen.time


def test_the_average_thread_runs_no_fewer_than_zero_trips():
    """`for (k = i; k < m; k++)` where the launch has more threads than m: the average thread's
    m - mean(i) trips are below zero; tune printed "-2263304896512 B" moved and ranked by it."""
    text = """void suffix(int n, int m, int B, float x[m], float y[n])
{
    int g = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n) {
                    float acc = 0.0f;
                    for (int k = i; k < m; k++)
                        acc += x[k];
                    y[i] = acc;
                }
            }
    }
}
"""
    result = analyze(text, "suffix.c").results[0]
    (q,) = time_model.tree_quantities(result.tree)[:1]
    for n, m in ((1 << 20, 1024), (4096, 4096), (100, 0)):
        p = time_model.predict(q, substitutions(result.schedule, {"n": n, "m": m, "B": 256}), H100)
        assert p.bytes_moved >= 0 and p.step("ops32") >= 0 and p.time > 0, (n, m)


@pytest.mark.parametrize("text", [CSR_DIRECT, CSR_LOCALS], ids=["direct", "locals"])
def test_a_loop_bound_read_from_an_array_is_counted_once_and_named(tmp_path, capsys, text):
    """CSR's k < rowptr[r + 1]: tune rejected every B ('no block can be resident': the model had
    no number for the trip count), and with the bounds in locals dispatch_auto's C named `hi`."""
    source = tmp_path / "spmv.c"
    source.write_text(text)
    schedule = analyze(text, "spmv.c").results[0].schedule
    (loop,) = schedule.serial
    assert all("?" in v.name for v in sympy.sympify(loop.hi).free_symbols)
    assert time_model.counted_once(schedule) == (loop,)
    assert cli.main(["tune", str(source), "--profile", "h100", "--data", "m=10000", "--data", "nnz=100000"]) == 0
    out = capsys.readouterr().out
    assert f"note: loop k (line {loop.span.line}) ends at a value read from an array: the model counts one" in out
    assert re.search(r"^  1 +[12]\*? +\d+ ", out, re.M)

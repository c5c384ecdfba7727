"""z3 is bounded by work, not time (issue 39, point 9): a check's answer is the same on an idle
and on a loaded machine, and so is everything printed from the answers (the golden CUDA).

Before, z3 had time limits (30 ms for a question's first try, 300 ms for a simplification) and
the staged answers read the clock: under load the same file printed other relations."""
import contextlib
import itertools
import threading
import time
from pathlib import Path

import z3

from parakern.codegen.emit import emit_file
from parakern.pipeline import analyze
from parakern.symbolic import constraints

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def loaded(threads: int = 2):
    """The CPU busy beside the test: threads spinning while z3 runs (z3 releases the GIL)."""
    stop = threading.Event()

    def spin():
        n = 0
        while not stop.is_set():
            n = (n * 7 + 1) % 1000003

    workers = [threading.Thread(target=spin, daemon=True) for _ in range(threads)]
    for w in workers:
        w.start()
    try:
        yield
    finally:
        stop.set()
        for w in workers:
            w.join()


def _question(ctx: z3.Context) -> list:
    """x²y + 3z³ = 877 with x, y, z > 1: satisfiable, and z3 takes some 240 000 units (tens of
    milliseconds) to find it. A context of its own: the same history for every run."""
    x, y, z = z3.Ints("x y z", ctx=ctx)
    return [x * x * y + 3 * z * z * z == 877, x > 1, y > 1, z > 1]


def _answer(work: int) -> tuple:
    answer, model, _, used = constraints.z3_check(_question(z3.Context()), work)
    return str(answer), used, None if model is None else sorted((str(d), model[d].as_long()) for d in model)


def test_a_limit_of_work_answers_alike_idle_and_loaded():
    answer, needed, _ = _answer(constraints.DEFAULT_WORK)
    assert answer == "sat" and needed > 10_000
    limits = (needed + 1_000, needed // 2)           # just enough, and half of it
    idle = [_answer(w) for w in limits]
    assert [a for a, _, _ in idle] == ["sat", "unknown"]
    with loaded():
        start = time.perf_counter()
        busy = [_answer(w) for w in limits]
        slowed = time.perf_counter() - start
    assert busy == idle, f"under load ({slowed:.2f} s) z3 answered {busy}, idle {idle}"


def test_every_check_of_a_case_tree_is_bounded_by_work(monkeypatch):
    """No z3 check of a whole analysis (the tree, the dependence tests, the footprint prover,
    the witnesses) has a time limit that a loaded machine could reach: each has a resource
    limit, and the wall-clock net (SAFETY_MS) only."""
    limits: dict = {}
    checked = []
    real_set, real_check = z3.Solver.set, z3.Solver.check

    def set_(self, *args, **keys):
        if len(args) == 2:
            limits.setdefault(id(self), {})[args[0]] = args[1]
        for k, v in keys.items():
            limits.setdefault(id(self), {})[k] = v
        return real_set(self, *args, **keys)

    def check(self, *args):
        checked.append(dict(limits.get(id(self), {})))
        return real_check(self, *args)

    monkeypatch.setattr(z3.Solver, "set", set_)
    monkeypatch.setattr(z3.Solver, "check", check)
    constraints._solve_cached.cache_clear()
    analyze((ROOT / "samples" / "polydiv.c").read_text(), "samples/polydiv.c")
    assert len(checked) > 20
    unbounded = [c for c in checked if not 0 < c.get("rlimit", 0) <= 10 * constraints.DEFAULT_WORK]
    timed = [c for c in checked if c.get("timeout", constraints.SAFETY_MS) < constraints.SAFETY_MS]
    assert not unbounded and not timed, f"{len(unbounded)} checks without a resource limit, " \
                                         f"{len(timed)} with a time limit: {(unbounded + timed)[:3]}"


def test_golden_is_the_same_on_a_loaded_machine_whose_clock_races(monkeypatch):
    """transpose's golden CUDA (flaky under load with the time limits), made with the CPU busy
    and every reading of the clock 1000 s after the one before: what a deadline sees on a
    machine too loaded to finish anything in time. Nothing printed may change."""
    ticks = itertools.count()
    start = time.perf_counter()
    monkeypatch.setattr(time, "perf_counter", lambda: start + 1000 * next(ticks))
    monkeypatch.setattr(time, "monotonic", lambda: start + 1000 * next(ticks))
    constraints._solve_cached.cache_clear()
    constraints._POINTS.clear()
    with loaded():
        text = emit_file(analyze((ROOT / "samples" / "transpose.c").read_text(), "samples/transpose.c"))
    assert text == (ROOT / "tests" / "golden" / "transpose.cu").read_text()

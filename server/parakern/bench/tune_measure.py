"""`tune --measure`: the model's ranking against the bench's times on a GPU.

The top configurations and an even sample of the rest run through the bench (the same
session as `parakern bench`, each point launching the case the dispatcher picks there);
reported: Spearman's rank correlation of predicted and measured times, and the pick's
fraction of the best measured speed (best measured time / the pick's measured time, each per
point computed: a configuration that leaves points out does less work, coverage.py)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from parakern.bench import session


def ranks(values) -> list:
    """1-based ranks, ties given the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs, ys) -> float:
    """Spearman's rank correlation (Pearson's of the ranks); nan below 3 pairs or for a constant."""
    if len(xs) != len(ys) or len(xs) < 3:
        return math.nan
    a, b = ranks(list(xs)), ranks(list(ys))
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va, vb = sum((x - ma) ** 2 for x in a), sum((y - mb) ** 2 for y in b)
    return cov / math.sqrt(va * vb) if va and vb else math.nan


def selection(configurations, top: int, sample: int = 12) -> list:
    """The first `top` configurations and `sample` more spread evenly over the rest."""
    chosen = list(configurations[:top])
    rest = list(configurations[top:])
    if rest and sample > 0:
        step = max(1, len(rest) // sample)
        chosen += rest[::step][:sample]
    return chosen


@dataclass(frozen=True)
class Comparison:
    pairs: tuple                     # ((configuration, measured seconds or nan), ...)
    spearman: float
    pick_fraction: float             # best measured time / the pick's measured time, per point computed
    correct: bool

    def as_dict(self) -> dict:
        return {"spearman": self.spearman, "pick_fraction_of_best": self.pick_fraction, "correct": self.correct,
                "measured": [{**c.as_dict(), "measured_s": t} for c, t in self.pairs]}


def measure(text: str, file: str, result, tuning, configurations, fixed: dict, runner_factory,
            device: int = 0, repeat: int = 20, progress=None) -> Comparison:
    """Runs `configurations` (of `tuning`) through the bench; their measured kernel times.

    Each point runs the cases of the configurations there, not every case nor the dispatcher,
    and the serial C of every point (the baseline each result is checked against) runs first,
    on half the cores at a time: on an H100 machine a matmul at n = 2048
    spent 17 s of serial C per configuration, one after the other."""
    import os

    names = tuning.tuned

    def point(values: dict) -> tuple:
        return tuple(values.get(n) for n in names)

    wanted = {(point(dict(c.values)), c.case): c for c in configurations}
    cases = {}
    for key, k in wanted:
        cases.setdefault(key, set()).add(k)
    sweeps = {n: sorted({dict(c.values)[n] for c in configurations}) for n in names}
    data = {n: [v] for n, v in fixed.items()}
    jobs = max(1, (os.cpu_count() or 2) // 2)
    outcome = session.bench(text, file, result, data, sweeps, runner_factory, device, repeat,
                            progress=progress, only=lambda values: point(values) in cases,
                            cases_at=lambda values: cases.get(point(values), ()),
                            dispatcher=False, every_case=True,   # the model may pick any case
                            serial_jobs=jobs if len(cases) > 1 else 1)
    measured = {}
    for m in outcome.measurements:
        key = (point(m.values), m.case)
        if key in wanted and not math.isnan(m.gpu_s):
            measured[key] = m.gpu_s
    pairs = tuple((c, measured.get(key, math.nan)) for key, c in wanted.items())
    ok = [(c.time, t) for c, t in pairs if not math.isnan(t)]
    rho = spearman([p for p, _ in ok], [t for _, t in ok])
    pick = tuning.pick
    pick_time = (measured.get((point(dict(pick.values)), pick.case), math.nan) / pick.covered
                 if pick and pick.covered > 0 else math.nan)
    best = min((t / c.covered for c, t in pairs if not math.isnan(t) and c.covered > 0), default=math.nan)
    return Comparison(pairs, rho, best / pick_time if pick_time and not math.isnan(pick_time) else math.nan,
                      outcome.correct)

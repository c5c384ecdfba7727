"""tune's results as text: the ranked configurations of each schedule on a device profile
(`parakern tune` prints it; the editor shows it when the bench has no GPU)."""
from __future__ import annotations

import math
from parakern.tuning import time_model
from parakern.analysis.fixed import fixable
from parakern import search


def formulas(result) -> list:
    return ["\n".join(time_model.formula_text(q, k)) for k, q in enumerate(time_model.tree_quantities(result.tree), 1)]


def time_text(seconds: float) -> str:
    if math.isnan(seconds):
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def bytes_text(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def configuration_text(c) -> str:
    """`case 1: B0=256 ub1=4 s=64`, the one-line form of a configuration."""
    values = " ".join(f"{n}={v}" for n, v in c.values)
    return f"case {c.case}" + (f": {values}" if values else "")


def emit_hint(file: str, values) -> str:
    """The next step: the kernels with the chosen values as constants (emit --fix)."""
    import shlex
    return f"compile it: parakern emit {shlex.quote(file)} --fix " + ",".join(f"{n}={v}" for n, v in values)


def tuning_text(tunings, device, top: int, formula: bool, file: str = "FILE", in_shared=frozenset()) -> str:
    """in_shared: schedules whose tuned parameters a function shares (its line gives the values)."""
    lines = []
    for r, fixed, t in tunings:
        at = " ".join(f"{n}={v}" for n, v in sorted(fixed.items()))
        lines.append(f"{t.schedule} on {device.key} ({device.name})" + (f" at {at}" if at else "")
                     + f": tuned {', '.join(t.tuned) or 'nothing'}; {t.candidates} candidates, {t.feasible} feasible")
        shown = t.configurations[:top]
        partial = any(c.partial for c in shown)   # a column only where some configuration leaves points out
        rows = [("rank", "case", *t.tuned, "predicted", *(("computes",) if partial else ()), "occupancy",
                 "bytes moved", "limited by")]
        for i, c in enumerate(shown, 1):
            p = c.prediction
            case = f"{c.case}*" if c.by == search.ANOTHER else str(c.case)
            computes = (c.computes,) if partial else ()
            rows.append((str(i), case, *(str(v) for _, v in c.values), time_text(p.time), *computes,
                         f"{p.occupancy:.2f}", bytes_text(p.bytes_moved), p.limiting))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        if t.configurations:
            lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        if any(c.by == search.ANOTHER for c in t.configurations[:top]):
            stem = f"{r.schedule.function}_{r.schedule.index}"
            lines.append(f"  * not the case {stem}_dispatch launches at these values: it launches the one predicted "
                         "fastest there")
        if partial:
            lines += ["  " + line for line in _partial_note(r, t)]
        if t.rejected:
            lines.append("  infeasible: " + "; ".join(f"{n} × {why}" for why, n in t.rejected))
        for lp in time_model.counted_once(r.schedule):
            lines.append(f"  note: loop {lp.var} (line {lp.span.line}) ends at a value read from an array: the model "
                         "counts one iteration of it per thread, so its times and bytes are lower bounds")
        program = {q.name for q in fixable(r.schedule)}
        pick = [(n, v) for n, v in t.configurations[0].values if n in program] if t.configurations else []
        if pick and t.schedule not in in_shared:
            lines.append("  " + emit_hint(file, pick))
        if formula:
            lines += ["  " + line for f in formulas(r) for line in f.splitlines()]
    return "\n".join(lines)


def _partial_note(result, tuning) -> list:
    """What a configuration marked with a percentage is: the loops it runs short, at the first such."""
    first = next(c for c in tuning.configurations if c.partial)
    short = tuning.shortfall(result.schedule, first)
    at = " ".join(f"{n}={v}" for n, v in first.values)
    lines = [f"computes: the share of the serial program's iterations a configuration runs, where a tuned "
             f"parameter rounds a loop's extent down ({at}: {short}); the rest of the result is never computed. "
             "Ranked by time per point computed"]
    if tuning.pick is not None and tuning.pick.partial:
        lines[0] += ("; no feasible candidate computes every point: give values that divide the extents "
                     "(--data), or round them up with a bounds check (`(n + B - 1) / B` blocks, `if (p < n)`)")
    else:
        lines[0] += "; never first where a configuration computes every point"
    return lines

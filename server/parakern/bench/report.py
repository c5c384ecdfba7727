"""Results: paper-style tables (rows: block shape, columns: the remaining sweep
parameters), one per case and one for the dispatcher, JSON, CSV and a heat map per case.
The best speedup of a table is marked with `*` (and in **bold** in markdown)."""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from parakern.process import outputs


@dataclass
class Measurement:
    values: dict                     # parameter -> value
    case: "int | None"               # None: skipped
    skipped: str = ""                # why
    gpu_s: float = math.nan          # median kernel time (summed over the executions of the schedule)
    gpu_spread_s: float = math.nan   # max - min over the repeats
    serial_s: float = math.nan       # median serial C time
    bytes_moved: int = 0
    bandwidth_gbs: float = math.nan  # bytes moved / kernel time
    copy_gbs: float = math.nan       # device-to-device copy of the same bytes: the ceiling
    registers: "int | None" = None
    correct: "bool | None" = None
    mismatch: str = ""
    launch: dict = field(default_factory=dict)
    picked: "int | None" = None      # the case the dispatcher picks at this point
    calls: int = 1                   # executions of the schedule in one call of the function
    compile_time: bool = False       # the case's instance with the point's program parameters as constants

    @property
    def speedup(self) -> float:
        return _ratio(self.serial_s, self.gpu_s) if self.case is not None else math.nan

    @property
    def kernel(self) -> str:
        """`case 2`, or `case 2 at compile time` for its instance."""
        return f"case {self.case}" + (" at compile time" if self.compile_time else "")

    @property
    def copy_fraction(self) -> float:
        """Effective bandwidth as a fraction of a device-to-device copy of the same bytes."""
        return _ratio(self.bandwidth_gbs, self.copy_gbs)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["speedup"], d["copy_fraction"] = self.speedup, self.copy_fraction
        return _clean(d)


DEFAULT = "default dispatcher"        # `<function>_<index>_dispatch`: the time model's fastest case that fits
DISPATCHER = "tree dispatcher"        # `<function>_<index>_dispatch_tree`: the paper's rule (runs before the
                                      # default one existed timed it as `<function>_<index>_dispatch`)
TUNED = "tuned dispatcher"            # `<function>_<index>_dispatch_tuned`: the case measured fastest
DISPATCHERS = (DEFAULT, DISPATCHER, TUNED)
# the keys of the JSON (and the CSV's kinds)
_JSON_KEYS = {DEFAULT: "dispatcher_default", DISPATCHER: "dispatcher", TUNED: "dispatcher_tuned"}
WHICH = {DEFAULT: "default", DISPATCHER: "tree", TUNED: "tuned"}     # runner.GpuRunner.dispatch's names


@dataclass
class Dispatch:
    """A generated host dispatcher called at one point: the case it launched and its time."""
    values: dict
    picked: "int | None"             # the case the plan says this dispatcher picks (dispatch_tuned: the default's)
    case: "int | None" = None        # the case it returned (None: it failed)
    dispatch_s: float = math.nan     # median, choice + launch + kernel (dispatch_tuned: after its first call)
    serial_s: float = math.nan
    correct: "bool | None" = None
    mismatch: str = ""
    calls: int = 1
    cases: list = field(default_factory=list)   # every case it launched (host loops: one per execution)
    kind: str = DISPATCHER

    @property
    def speedup(self) -> float:
        return _ratio(self.serial_s, self.dispatch_s)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["speedup"] = self.speedup
        return _clean(d)


def _ratio(a: float, b: float) -> float:
    if not b or math.isnan(a) or math.isnan(b):
        return math.nan
    return a / b


def _clean(d: dict) -> dict:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


def _axes(items, rows: list, data: list):
    """(row names, column names) from the first item's parameters."""
    names = list(items[0].values) if items else []
    rows = [n for n in rows if n in names] or names[len(data):len(data) + 1]
    cols = [n for n in names if n not in rows and n not in data]
    return rows, cols


def _label(values: dict, names) -> str:
    if not names:
        return "-"
    return "x".join(str(values[n]) for n in names)


def _data_key(values: dict, data: list) -> tuple:
    return tuple((n, values[n]) for n in data if n in values)


def tables(measurements, rows: list, data: list, dispatches=()) -> list:
    """Per data point, one table per case and one for the dispatcher:
    (title, what, row name, column name, row labels, column labels, cells {(r, c): item})."""
    rows, cols = _axes(measurements, rows, data)
    groups: dict = {}
    for m in measurements:
        groups.setdefault(_data_key(m.values, data), []).append(m)
    out = []
    for key, group in groups.items():
        title = " ".join(f"{n}={v}" for n, v in key) or "all points"
        r_labels = list(dict.fromkeys(_label(m.values, rows) for m in group))
        c_labels = list(dict.fromkeys(_label(m.values, cols) for m in group))
        skipped = {(_label(m.values, rows), _label(m.values, cols)): m for m in group if m.case is None}
        for k, fixed in sorted({(m.case, m.compile_time) for m in group if m.case is not None}):
            cells = dict(skipped)
            cells.update({(_label(m.values, rows), _label(m.values, cols)): m for m in group
                          if (m.case, m.compile_time) == (k, fixed)})
            what = f"case {k}" + (" at compile time" if fixed else "")
            out.append((title, what, "x".join(rows), "x".join(cols) or "-", r_labels, c_labels, cells))
        for kind in DISPATCHERS:
            calls = [d for d in dispatches if _data_key(d.values, data) == key and d.kind == kind]
            if calls:
                cells = dict(skipped)
                cells.update({(_label(d.values, rows), _label(d.values, cols)): d for d in calls})
                out.append((title, kind, "x".join(rows), "x".join(cols) or "-", r_labels, c_labels, cells))
    return out


def _best(cells) -> "Measurement | Dispatch | None":
    ok = [m for m in cells.values() if not math.isnan(m.speedup) and m.correct is not False]
    return max(ok, key=lambda m: m.speedup) if ok else None


def fastest(measurements) -> dict:
    """{values key: the correct Measurement with the least kernel time at that point}."""
    best: dict = {}
    for m in measurements:
        if m.case is None or m.correct is False or math.isnan(m.gpu_s):
            continue
        key = tuple(m.values.items())
        if key not in best or m.gpu_s < best[key].gpu_s:
            best[key] = m
    return best


def timed(measurements) -> set:
    """{(values key, case)} of the cases timed at each point: a dispatcher's case is compared with
    the fastest only where it was timed too (without --every-case, only the tree's case is)."""
    return {(tuple(m.values.items()), m.case) for m in measurements
            if m.case is not None and not m.compile_time and m.correct is not False and not math.isnan(m.gpu_s)}


def _cell(item, best, markdown: bool, fastest_at: dict, timed_cases: "set | None" = None) -> str:
    if item is None:
        return "-"
    if item.case is None:
        return "skip" if isinstance(item, Measurement) else "FAILED"
    if math.isnan(item.speedup):
        return "-"
    text = f"{item.speedup:.2f}x" if item.speedup >= 0.1 else f"{item.speedup:.2g}x"
    if isinstance(item, Dispatch):
        text += f" c{item.case}"
        key = tuple(item.values.items())
        quickest = fastest_at.get(key)
        if quickest is not None and quickest.case != item.case:
            text += f" (c{quickest.case}{' fixed' if quickest.compile_time else ''} faster)" \
                if timed_cases is None or (key, item.case) in timed_cases else " (not timed alone)"
    if item.correct is False:
        text += " WRONG"
    if item is best:
        text = f"**{text}**" if markdown else f"{text} *"
    return text


def table_text(measurements, rows: list, data: list, markdown: bool = False, dispatches=()) -> str:
    fastest_at, timed_cases = fastest(measurements), timed(measurements)
    blocks = []
    for title, what, rname, cname, r_labels, c_labels, cells in tables(measurements, rows, data, dispatches):
        best = _best(cells)
        header = [f"{rname} \\ {cname}"] + c_labels if cname != "-" else [rname, "speedup"]
        body = [[r] + [_cell(cells.get((r, c)), best, markdown, fastest_at, timed_cases) for c in c_labels]
                for r in r_labels]
        caption = f"{what}, {title}: speedup over serial C" + \
            ("; the case it launched" if what in DISPATCHERS else "") + ("" if markdown else "; * best")
        if markdown:
            lines = [f"**{caption}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(row) + " |" for row in body]
        else:
            widths = [max(len(str(x[i])) for x in [header] + body) for i in range(len(header))]
            lines = [caption] + ["  ".join(str(x).rjust(w) for x, w in zip(row, widths)) for row in [header] + body]
        blocks.append("\n".join(lines))
    summary = summary_lines(measurements, dispatches)
    if summary:
        blocks.append("\n".join(summary))
    return "\n\n".join(blocks)


def summary_lines(measurements, dispatches=()) -> list:
    """Per case its best point (speedup, time, bandwidth, fraction of copy bandwidth); the dispatcher
    against the fastest case."""
    lines = []
    for k, fixed in sorted({(m.case, m.compile_time) for m in measurements if m.case is not None}):
        mine = [m for m in measurements if (m.case, m.compile_time) == (k, fixed)]
        ok = [m for m in mine if m.correct is not False and not math.isnan(m.gpu_s)]
        wrong = sum(1 for m in mine if m.correct is False)
        what = mine[0].kernel
        if ok:
            m = max(ok, key=lambda m: (m.speedup, -m.gpu_s))   # the table's best
            where = " ".join(f"{n}={v}" for n, v in m.values.items())
            lines.append(f"{what}: best at {where}: {m.speedup:.3g}x over serial C, {m.gpu_s * 1e3:.4g} ms, "
                         f"{m.bandwidth_gbs:.4g} GB/s"
                         f" = {m.copy_fraction:.0%} of a device copy ({m.copy_gbs:.4g} GB/s), "
                         f"{m.registers} registers" + (f"; {wrong} WRONG results" if wrong else ""))
        elif wrong:
            lines.append(f"{what}: {wrong} WRONG results")
    for m in measurements:
        if m.case is None and m.skipped:
            lines.append(f"skipped at {' '.join(f'{n}={v}' for n, v in m.values.items())}: {m.skipped}")
    fastest_at, timed_cases = fastest(measurements), timed(measurements)
    for kind in DISPATCHERS:
        calls = [d for d in dispatches if d.kind == kind]
        if not calls:
            continue
        ran = [d for d in calls if d.case is not None]
        failed = len(calls) - len(ran)
        # compared only where the case it launched was timed as well (--every-case times them all)
        untimed = [d for d in ran if (tuple(d.values.items()), d.case) not in timed_cases]
        ran_timed = [d for d in ran if d not in untimed]
        same = [d for d in ran_timed if (q := fastest_at.get(tuple(d.values.items()))) is not None
                and q.case == d.case]
        lines.append((f"{kind}: launched the fastest case at {len(same)} of {len(ran_timed)} points"
                      + (f" ({len(untimed)} more launched a case not timed alone: --every-case times them all)"
                         if untimed else "") if ran_timed else
                      f"{kind}: the case it launched at {len(untimed)} point{'s' * (len(untimed) != 1)} was not "
                      "timed alone (--every-case times them all)")
                     + (f", failed at {failed}" if failed else "")
                     + (f"; launched the case the plan expects at "
                        f"{sum(1 for d in ran if d.case == d.picked)} of {len(ran)}"
                        if ran and kind in (DEFAULT, DISPATCHER) else ""))
        slow = [fastest_at[tuple(d.values.items())].gpu_s / d.dispatch_s for d in ran_timed
                if d not in same and tuple(d.values.items()) in fastest_at and d.dispatch_s]
        if slow:
            lines.append(f"  elsewhere it ran at {min(slow):.0%}-{max(slow):.0%} of the fastest case's speed "
                         "(dispatch overhead included)")
    return lines


def dispatches_json(dispatches) -> dict:
    """The dispatcher calls of a bench as its JSON has them: the default dispatcher's under
    "dispatcher_default", the tree dispatcher's under "dispatcher" (as in every run before the
    default one existed), dispatch_tuned's under "dispatcher_tuned"."""
    out = {_JSON_KEYS[kind]: [d.as_dict() for d in dispatches if d.kind == kind] for kind in DISPATCHERS}
    return {key: calls for key, calls in out.items() if calls or key == _JSON_KEYS[DISPATCHER]}


def write_json(path, measurements, extra: "dict | None" = None, dispatches=()) -> None:
    document = {**(extra or {}), "results": [m.as_dict() for m in measurements], **dispatches_json(dispatches)}
    outputs.write_text(path, json.dumps(document, indent=2, default=str) + "\n")


COLUMNS = ["case", "picked", "skipped", "gpu_s", "gpu_spread_s", "serial_s", "speedup", "bytes_moved",
           "bandwidth_gbs", "copy_gbs", "copy_fraction", "registers", "correct", "mismatch"]


def write_csv(path, measurements, dispatches=()) -> None:
    """One row per (point, case) with kind "case" ("instance" for its compile-time instance), one
    per dispatcher call with kind "dispatcher_default", "dispatcher" (the tree's) or "dispatcher_tuned"
    (its time in gpu_s)."""
    names = list(dict.fromkeys(n for m in measurements for n in m.values))
    text = io.StringIO(newline="")
    w = csv.writer(text)
    w.writerow(names + ["kind"] + COLUMNS)
    for m in list(measurements) + list(dispatches):
        d = m.as_dict()
        kind = _JSON_KEYS[m.kind] if isinstance(m, Dispatch) else "instance" if m.compile_time else "case"
        if isinstance(m, Dispatch):
            d["gpu_s"] = d.pop("dispatch_s")
        w.writerow([m.values.get(n, "") for n in names] + [kind] +
                   ["" if d.get(c) is None else d[c] for c in COLUMNS])
    outputs.write_text(path, text.getvalue())


def write_heatmaps(path, measurements, rows: list, data: list) -> list:
    """A heat map of the speedups per case (and per data point): PATH itself when there is one,
    else PATH's stem with _case<k> (and the data values) added. Returns the files written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    path = Path(path)
    maps = list(tables(measurements, rows, data))
    written = []
    for title, what, rname, cname, r_labels, c_labels, cells in maps:
        grid = [[(cells[(r, c)].speedup if (r, c) in cells and cells[(r, c)].kernel == what else math.nan)
                 for c in c_labels] for r in r_labels]
        fig, ax = plt.subplots(figsize=(1.2 + 1.1 * len(c_labels), 1.0 + 0.5 * len(r_labels)))
        image = ax.imshow(grid, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(c_labels)), c_labels)
        ax.set_yticks(range(len(r_labels)), r_labels)
        ax.set_xlabel(cname)
        ax.set_ylabel(rname)
        ax.set_title(f"{what}, {title}: speedup", fontsize=9)
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if not math.isnan(v):
                    ax.text(j, i, f"{v:.1f}" if v >= 0.1 else f"{v:.2g}", ha="center", va="center", color="w",
                            fontsize=8)   # as the table shows it: 0.0065, not 0.0
        fig.colorbar(image, ax=ax)
        fig.tight_layout()
        if len(maps) == 1:
            target = path if path.suffix else path.with_suffix(".png")
        else:
            tag = "_".join(title.replace("=", "").split()) if len({m[0] for m in maps}) > 1 else ""
            k = what.split()[1] + ("_fixed" if what.endswith("at compile time") else "")
            target = path.with_name(f"{path.stem}_case{k}{'_' + tag if tag else ''}{path.suffix or '.png'}")
        fig.savefig(target, format="png")
        plt.close(fig)
        written.append(target)
    return written

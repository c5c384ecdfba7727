"""Results: the paper-style table (rows: block shape, columns: the remaining sweep
parameter), JSON, CSV and a heat map per case. The best speedup of a table is marked
with `*` (and in **bold** in markdown)."""
from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Measurement:
    values: dict                     # parameter -> value
    case: "int | None"               # None: skipped
    skipped: str = ""                # why
    gpu_s: float = math.nan          # median kernel time
    gpu_spread_s: float = math.nan   # max - min over the repeats
    serial_s: float = math.nan       # median serial C time
    bytes_moved: int = 0
    bandwidth_gbs: float = math.nan  # bytes moved / kernel time
    copy_gbs: float = math.nan       # device-to-device copy of the same bytes: the ceiling
    registers: "int | None" = None
    correct: "bool | None" = None
    mismatch: str = ""
    launch: dict = field(default_factory=dict)

    @property
    def speedup(self) -> float:
        if self.case is None or not self.gpu_s or math.isnan(self.gpu_s) or math.isnan(self.serial_s):
            return math.nan
        return self.serial_s / self.gpu_s

    def as_dict(self) -> dict:
        d = asdict(self)
        d["speedup"] = self.speedup
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


def _axes(measurements, rows: list, data: list):
    """(row names, column names, data names) from the first measurement's parameters."""
    names = list(measurements[0].values) if measurements else []
    rows = [n for n in rows if n in names] or names[len(data):len(data) + 1]
    cols = [n for n in names if n not in rows and n not in data]
    return rows, cols


def _label(values: dict, names) -> str:
    if not names:
        return "-"
    return "x".join(str(values[n]) for n in names)


def tables(measurements, rows: list, data: list) -> list:
    """One table per data point: (title, row labels, column labels, cells {(r, c): Measurement})."""
    rows, cols = _axes(measurements, rows, data)
    groups: dict = {}
    for m in measurements:
        groups.setdefault(tuple((n, m.values[n]) for n in data if n in m.values), []).append(m)
    out = []
    for key, group in groups.items():
        title = " ".join(f"{n}={v}" for n, v in key) or "all points"
        r_labels = list(dict.fromkeys(_label(m.values, rows) for m in group))
        c_labels = list(dict.fromkeys(_label(m.values, cols) for m in group))
        cells = {(_label(m.values, rows), _label(m.values, cols)): m for m in group}
        out.append((title, "x".join(rows), "x".join(cols) or "-", r_labels, c_labels, cells))
    return out


def _best(cells) -> "Measurement | None":
    ok = [m for m in cells.values() if not math.isnan(m.speedup) and m.correct is not False]
    return max(ok, key=lambda m: m.speedup) if ok else None


def table_text(measurements, rows: list, data: list, markdown: bool = False) -> str:
    blocks = []
    for title, rname, cname, r_labels, c_labels, cells in tables(measurements, rows, data):
        best = _best(cells)

        def cell(r, c):
            m = cells.get((r, c))
            if m is None:
                return ""
            if m.case is None:
                return "skip"
            if math.isnan(m.speedup):
                return "-"
            text = f"{m.speedup:.2f}x c{m.case}" + ("" if m.correct is not False else " WRONG")
            if m is best:
                text = f"**{text}**" if markdown else f"{text} *"
            return text

        header = [f"{rname} \\ {cname}"] + c_labels
        body = [[r] + [cell(r, c) for c in c_labels] for r in r_labels]
        if markdown:
            lines = [f"**{title}** (speedup over serial C, case number)", "",
                     "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(row) + " |" for row in body]
        else:
            widths = [max(len(str(x[i])) for x in [header] + body) for i in range(len(header))]
            lines = [f"{title} (speedup over serial C, case number; * best)"]
            lines += ["  ".join(str(x).rjust(w) for x, w in zip(row, widths)) for row in [header] + body]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def write_json(path, measurements, extra: "dict | None" = None) -> None:
    document = {**(extra or {}), "results": [m.as_dict() for m in measurements]}
    Path(path).write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")


COLUMNS = ["case", "skipped", "gpu_s", "gpu_spread_s", "serial_s", "speedup", "bytes_moved", "bandwidth_gbs",
           "copy_gbs", "registers", "correct", "mismatch"]


def write_csv(path, measurements) -> None:
    names = list(dict.fromkeys(n for m in measurements for n in m.values))
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(names + COLUMNS)
        for m in measurements:
            d = m.as_dict()
            w.writerow([m.values.get(n, "") for n in names] + ["" if d[c] is None else d[c] for c in COLUMNS])


def write_heatmaps(path, measurements, rows: list, data: list) -> list:
    """A heat map of the speedups per case (and per data point): PATH itself when there is one,
    else PATH's stem with _case<k> (and the data values) added. Returns the files written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    path = Path(path)
    maps = []
    for title, rname, cname, r_labels, c_labels, cells in tables(measurements, rows, data):
        for k in sorted({m.case for m in cells.values() if m.case is not None}):
            maps.append((title, k, rname, cname, r_labels, c_labels, cells))
    written = []
    for title, k, rname, cname, r_labels, c_labels, cells in maps:
        grid = [[(cells[(r, c)].speedup if (r, c) in cells and cells[(r, c)].case == k else math.nan)
                 for c in c_labels] for r in r_labels]
        fig, ax = plt.subplots(figsize=(1.2 + 1.1 * len(c_labels), 1.0 + 0.5 * len(r_labels)))
        image = ax.imshow(grid, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(c_labels)), c_labels)
        ax.set_yticks(range(len(r_labels)), r_labels)
        ax.set_xlabel(cname)
        ax.set_ylabel(rname)
        ax.set_title(f"case {k}, {title}: speedup", fontsize=9)
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if not math.isnan(v):
                    ax.text(j, i, f"{v:.1f}", ha="center", va="center", color="w", fontsize=8)
        fig.colorbar(image, ax=ax)
        fig.tight_layout()
        if len(maps) == 1:
            target = path
        else:
            tag = "_".join(title.replace("=", "").split()) if len({m[0] for m in maps}) > 1 else ""
            target = path.with_name(f"{path.stem}_case{k}{'_' + tag if tag else ''}{path.suffix or '.png'}")
        fig.savefig(target, format="png")
        plt.close(fig)
        written.append(target)
    return written

"""Bank conflicts of every staged tile, with its rows as the footprint lays them out and as
padded (analysis/padding.py), on every sample and PolyBench-style program; then PPCG's
transpose tiles beside ours. No GPU needed.

    .venv/bin/python bench/bank_conflicts.py [--emulate] [--verify] [--markdown] [FILE ...]

For each schedule: the staged tiles of every case of its case tree (the cache(...) written),
then, for each array no cache(...) names and that can be staged, the kernel as written with
cache(X) added (what PK040's advice makes). Per tile, at the schedule's profile point
(analysis/point.py; `--emulate`: the small point `parakern profile --emulate` takes): the
shared-memory requests of its accesses and copies per block, their mean wavefronts per request
and bank conflicts per request (wavefronts beyond the ideal), unpadded -> padded, the rows'
pitch and the bytes the tile takes. `--emulate` also counts both kernels on the CPU emulation
(verify/emulated_traffic.py) and prints its wavefronts beside the static ones (needs g++).
`--verify` writes each `cache(X) added` variant whose rows are padded into its source (a copy
in a temporary folder) and runs every case of it on the CPU emulation against the serial C
(`parakern verify`; the `as written` ones are the samples' own, which the tests verify).

PPCG (`../shared/peers/ppcg/out/transpose/`): its shared accesses are read from its kernel files
(the statements are checked to be there verbatim) and costed with the same bank arithmetic
(analysis/warps.py), as written (never padded) and with one more float per row.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PPCG = ROOT.parent.parent / "shared" / "peers" / "ppcg" / "out" / "transpose"


@dataclasses.dataclass
class Row:
    program: str
    variant: str
    cases: str
    array: str
    tile: str
    rows: str
    requests: float
    before: tuple       # (wavefronts per request, conflicts per request)
    after: tuple
    ideal: float
    bytes_before: int
    bytes_after: int
    emulated: "tuple | None" = None   # (wavefronts per request unpadded, padded) on the emulation
    path: "Path | None" = None
    schedule: "object | None" = None  # the model.Schedule of a `cache(X) added` variant


def _tile_rows(kernel, array: str, values: dict):
    """(tile sizes at the point, `8 -> 9 (2*floor(B0/2) + 1)` or `64 (unpadded)`, bytes unpadded,
    bytes padded) of the array's part."""
    import sympy

    from parakern.analysis.point import evaluate
    from parakern.analysis.staging import plan
    from parakern.symbolic.printing import to_text
    subs = evaluate(kernel.schedule, values)

    def at(e) -> int:
        return int(sympy.sympify(e).xreplace(subs))

    (st,) = [st for st in plan(kernel) if st.array.name == array]
    regions = [r for c in st.choices for r in c.regions]
    sizes = " + ".join(" x ".join(str(at(d.elements)) for d in r.dims) for r in regions)
    rows = "; ".join(dict.fromkeys(
        f"{at(r.row)} -> {at(r.pitch)} ({to_text(r.pitch)})" if r.pitch is not None else f"{at(r.row)}"
        for r in regions if len(r.dims) > 1 or r.dims[-1].repeats)) or "-"
    after = at(st.elements) * st.array.element_size
    before = sum(at(r.elements) for r in st.choices[0].regions) * st.array.element_size
    if len(st.choices) > 1:
        before = max(sum(at(r.elements) for r in c.regions) for c in st.choices) * st.array.element_size
    return sizes, rows, before, after


def _shared(t, array: str):
    """(requests per block, mean wavefronts, mean conflicts, mean ideal) of the array's shared requests."""
    mine = [r for r in t.requests if r.array == array and r.space == "shared"]
    n = sum(r.requests for r in mine)
    if not n:
        return 0.0, 0.0, 0.0, 0.0
    return (n, sum(r.requests * r.cost for r in mine) / n, sum(r.requests * r.conflicts for r in mine) / n,
            sum(r.requests * r.ideal for r in mine) / n)


def _emulated(measured, t, array: str) -> float:
    keys = [(r.key, r.kind) for r in t.requests if r.array == array and r.space == "shared"]
    found = [measured.requests[k] for k in keys if k in measured.requests]
    n = sum(c.requests for c in found)
    return sum(c.requests * c.cost for c in found) / n if n else 0.0


def _kernels(path: Path):
    """(schedule id, variant, [(case numbers, kernel)], result or None) per staged variant."""
    from parakern.analysis.staging import stageable
    from parakern.kernel import Kernel
    from parakern.pipeline import analyze
    analysis = analyze(path.read_text(), str(path.relative_to(ROOT)))
    for result in analysis.results:
        s = result.schedule
        if result.tree is not None and s.cache:
            seen: dict = {}
            for k, case in enumerate(result.tree.cases, 1):
                if case.kernel.cached:
                    seen.setdefault((case.kernel.schedule, case.kernel.cached), []).append((k, case.kernel))
            for found in seen.values():
                yield s.id, "as written", [(",".join(str(k) for k, _ in found), found[0][1])], result
        for array in s.arrays:
            if array.name in {c.name for c in s.cache}:
                continue
            kernel = Kernel(s, (array.name,))
            if stageable(kernel):
                yield s.id, f"cache({array.name}) added", [("-", kernel)], None


def corpus_rows(files, emulate: bool) -> list[Row]:
    from parakern.analysis.point import profile_point
    from parakern.analysis.staging import unpadded
    from parakern.analysis.traffic import traffic
    from parakern.verify.emulated_traffic import measure
    rows = []
    for path in files:
        for _, variant, kernels, result in _kernels(path):
            for cases, kernel in kernels:
                point = profile_point(kernel.schedule, small=emulate)
                if point is None:
                    continue
                twin = unpadded(kernel)
                try:
                    after = traffic(kernel, point)
                    before = traffic(twin, point) if twin is not None else after
                except (ValueError, TypeError, ZeroDivisionError, KeyError):
                    continue
                measured = None
                if emulate and result is not None:
                    first = int(cases.split(",")[0])
                    padded = measure(result, point, [first])[first]
                    plain = measure(result, point, [first], padding=False)[first] if twin is not None else padded
                    measured = (padded, plain)
                for array in kernel.cached:
                    n, waves, conflicts, ideal = _shared(after, array)
                    _, waves0, conflicts0, _ = _shared(before, array)
                    sizes, pitch, bytes0, bytes1 = _tile_rows(kernel, array, point)
                    emulated = None
                    if measured is not None:
                        emulated = (_emulated(measured[1], before, array), _emulated(measured[0], after, array))
                    rows.append(Row(path.stem, variant, cases, array, sizes, pitch, n, (waves0, conflicts0),
                                    (waves, conflicts), ideal, bytes0, bytes1, emulated, path,
                                    kernel.schedule if result is None else None))
    return rows


def verify_rows(rows: list[Row]) -> list[tuple[Row, str, bool]]:
    """(row, the verdict's first line and its failures, ok) for each padded `cache(X) added`
    variant: the source with `cache(X)` written after its schedule's `meta_schedule`, run on the
    CPU emulation against the serial C, every case at 3 points."""
    import shutil
    import tempfile

    from parakern.source.text import offset_at
    from parakern.verify import text as verify_text
    from parakern.verify import verify_source
    out = []
    with tempfile.TemporaryDirectory(prefix="bank_conflicts_") as tmp:
        shutil.copy(ROOT / "samples" / "metafork.h", Path(tmp) / "metafork.h")   # "../metafork.h" too
        for row in rows:
            if row.schedule is None or row.bytes_after == row.bytes_before:
                continue
            text = row.path.read_text()
            span = row.schedule.keyword_span
            if row.schedule.cache:   # a clause there: the variant stages X alone, not written here
                out.append((row, f"not rewritten: {row.schedule.id} already names cache(...)", True))
                continue
            at = offset_at(text, span.end_line - 1, span.end_col - 1)
            where = Path(tmp) / row.path.relative_to(ROOT / "samples")
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_text(text[:at] + f" cache({row.array})" + text[at:])
            result = verify_source(where.read_text(), str(where), points=3)
            lines = verify_text(result).splitlines()
            why = [line.strip() for line in lines if "race on" in line] or \
                [line.strip() for line in lines if "FAILED" in line or "error" in line] or lines[1:2]
            cases = sum(len(s.cases) for s in result.schedules)
            out.append((row, f"{'verified' if result.ok else 'NOT verified'}, {cases} cases"
                        + ("" if result.ok else ": " + why[0].replace(str(where), str(row.path.relative_to(ROOT)))),
                        result.ok))
    return out


# ------------------------------------------------------------------ PPCG's transpose

# (variant, block (x, y), statements of its kernel file, and per statement the shared index
# (row, column) of lane (t1 = threadIdx.x, t0 = threadIdx.y) at the first iteration of its loop)
PPCG_ACCESSES = {
    "default": ((16, 32), (32, 32), [
        ("shared_c[c3][t0] = a[(32 * b0 + t0) * 8192 + (32 * b1 + c3)];", lambda t1, t0: (t1, t0)),
        ("c[(32 * b1 + t0) * 8192 + (32 * b0 + c1)] = shared_c[t0][c1];", lambda t1, t0: (t0, t1))]),
    "pk": ((32, 8), (512, 8), [
        ("shared_c[c3][t0] = a[(8 * b0 + t0) * 8192 + (512 * b1 + c3)];", lambda t1, t0: (t1, t0)),
        ("c[(512 * b1 + c0) * 8192 + (8 * b0 + t1)] = shared_c[c0][t1];", lambda t1, t0: (t0, t1))]),
    "alt": ((32, 8), (32, 32), [
        ("shared_c[t1][c2] = a[(32 * b0 + c2) * 8192 + (32 * b1 + t1)];", lambda t1, t0: (t1, t0)),
        ("c[(32 * b1 + c0) * 8192 + (32 * b0 + t1)] = shared_c[c0][t1];", lambda t1, t0: (t0, t1))]),
}


def ppcg_rows():
    """(variant, tile, statement, wavefronts per request as written, with a padded row) for each
    shared access of PPCG's transpose kernels; None where they are not there."""
    from parakern.analysis import warps as W
    out = []
    for variant, ((bx, by), (rows, cols), accesses) in PPCG_ACCESSES.items():
        path = PPCG / variant / "transpose_kernel.cu"
        if not path.exists():
            return None
        text = path.read_text()
        if f"__shared__ float shared_c[{rows}][{cols}];" not in text:
            raise SystemExit(f"{path}: the tile is no longer shared_c[{rows}][{cols}]: update PPCG_ACCESSES")
        for statement, index in accesses:
            if statement not in text:
                raise SystemExit(f"{path}: `{statement}` is not there any more: update PPCG_ACCESSES")
            costs = []
            for pitch in (cols, cols + 1):
                waves = []
                for warp in W.warps((bx, by, 1)):
                    lanes = [index(x, y) for x, y, _ in warp]
                    if variant == "pk" and "shared_c[c0][t1]" in statement:   # `if (t1 <= 7)`: 8 lanes of 32
                        lanes = [(r, c) for r, c in lanes if c <= 7]
                    waves.append(W.wavefronts([(r * pitch + c) * 4 for r, c in lanes], 4))
                costs.append(sum(waves) / len(waves))
            out.append((variant, f"{rows} x {cols}, block {bx} x {by}", statement.strip(), costs[0], costs[1]))
    return out


def ours_at_ppcg_sizes():
    """Our transpose's staged cases at PPCG's tile sizes: (point, case, access, unpadded, padded)."""
    from parakern.analysis.staging import unpadded
    from parakern.analysis.traffic import traffic
    from parakern.pipeline import analyze
    (result,) = analyze((ROOT / "samples" / "transpose.c").read_text(), "samples/transpose.c").results
    out = []
    for point in ({"N": 8192, "B0": 8, "B1": 32, "s": 16}, {"N": 8192, "B0": 32, "B1": 32, "s": 1}):
        for k, case in enumerate(result.tree.cases, 1):
            if "(4a)" not in case.decisions or "(1')" in case.decisions:
                continue
            after = traffic(case.kernel, point)
            twin = unpadded(case.kernel)
            before = traffic(twin, point) if twin is not None else after
            for r in after.requests:
                if r.space == "shared" and r.array == "c":
                    b = next(x for x in before.requests if (x.key, x.kind) == (r.key, r.kind))
                    out.append((point, k, " ".join(case.decisions), r.text, b.cost, r.cost))
    return out


# ------------------------------------------------------------------ printing

def _table(head, rows, markdown: bool) -> list[str]:
    cells = [head] + [[str(c) for c in row] for row in rows]
    if markdown:
        return ["| " + " | ".join(r) + " |" for r in cells[:1]] + ["|" + "---|" * len(head)] + \
               ["| " + " | ".join(r) + " |" for r in cells[1:]]
    widths = [max(len(r[c]) for r in cells) for c in range(len(head))]
    lines = ["  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip() for r in cells]
    return lines[:1] + ["  ".join("-" * w for w in widths)] + lines[1:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="C files (default: samples/*.c and samples/polybench/*.c)")
    parser.add_argument("--emulate", action="store_true", help="count both kernels on the CPU emulation too")
    parser.add_argument("--verify", action="store_true",
                        help="run the padded `cache(X) added` variants on the CPU emulation against the serial C")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args(argv)
    files = [Path(f).resolve() for f in args.files] or \
        sorted((ROOT / "samples").glob("*.c")) + sorted((ROOT / "samples" / "polybench").glob("*.c"))
    rows = corpus_rows(files, args.emulate)
    head = ["program", "variant", "cases", "array", "tile", "rows -> pitch", "shared req/block",
            "wavefronts/req", "conflicts/req", "ideal", "bytes"]
    if args.emulate:
        head.append("emulated wavefronts/req")
    body = []
    for r in rows:
        line = [r.program, r.variant, r.cases, r.array, r.tile, r.rows, f"{r.requests:.0f}",
                _change(r.before[0], r.after[0]), _change(r.before[1], r.after[1]), f"{r.ideal:.2f}",
                _change(r.bytes_before, r.bytes_after, "{:.0f}")]
        if args.emulate:
            line.append("-" if r.emulated is None else _change(*r.emulated))
        body.append(line)
    print("\n".join(_table(head, body, args.markdown)))
    padded = [r for r in rows if r.bytes_after != r.bytes_before]
    conflicted = [r for r in rows if r.before[1] > 1e-9]
    print(f"\n{len(rows)} staged tiles; {len(conflicted)} with bank conflicts unpadded, {len(padded)} padded; "
          f"conflicts gone in {sum(1 for r in padded if r.after[1] <= 1e-9)}, fewer in "
          f"{sum(1 for r in padded if 1e-9 < r.after[1] < r.before[1] - 1e-9)}; "
          f"padded without conflicts unpadded: {sum(1 for r in padded if r.before[1] <= 1e-9)}; "
          f"conflicts left unpadded: {sum(1 for r in conflicted if r.bytes_after == r.bytes_before)}")
    if args.emulate:
        checked = [r for r in rows if r.emulated is not None]
        same = sum(1 for r in checked
                   if abs(r.emulated[0] - r.before[0]) < 1e-6 and abs(r.emulated[1] - r.after[0]) < 1e-6)
        print(f"emulation: {same} of {len(checked)} tiles of the case trees counted as the analysis, both layouts")
    if args.verify:
        verdicts = verify_rows(rows)
        print("\nThe padded `cache(X) added` variants on the CPU emulation against the serial C (parakern verify)")
        print("\n".join(_table(["program", "schedule", "variant", "verdict"],
                               [(r.program, r.schedule.id, r.variant, v) for r, v, _ in verdicts], args.markdown)))
        print(f"{sum(1 for *_, ok in verdicts if ok)} of {len(verdicts)} verified")
    ppcg = ppcg_rows()
    if ppcg is None:
        print(f"\nPPCG's transpose: not found at {PPCG}")
        return 0
    print("\nPPCG's transpose (shared_c never padded), wavefronts per request, as written -> one float more per row")
    print("\n".join(_table(["variant", "tile", "statement", "as written", "padded"],
                           [(v, t, f"`{s}`" if args.markdown else s, f"{a:.2f}", f"{b:.2f}") for v, t, s, a, b in ppcg],
                           args.markdown)))
    print("\nparakern's transpose at the same tiles (the shared requests of c; cases (1), the (1') ones alike)")
    print("\n".join(_table(["point", "case", "decisions", "access", "unpadded", "padded"],
                           [(" ".join(f"{k}={v}" for k, v in p.items()), k, d, a, f"{b:.2f}", f"{x:.2f}")
                            for p, k, d, a, b, x in ours_at_ppcg_sizes()], args.markdown)))
    return 0


def _change(before, after, fmt: str = "{:.2f}") -> str:
    return fmt.format(after) if abs(before - after) < 1e-9 else f"{fmt.format(before)} -> {fmt.format(after)}"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "server"))
    sys.exit(main())

"""`parakern profile FILE [--at N=V,...] [--emulate] [--json] [--target sm_XX]`: memory traffic
per case, a table per case.

Every request of every case at one parameter point (analysis/point.py chooses it unless
--at gives values): global sectors per warp request, shared-memory wavefronts, bytes per
block against the minimum. --emulate also runs each case once on the CPU emulation with
every element reference traced (verify/emulated_traffic.py) and shows its counts beside the static
figures; the point then prefers small data sizes (64) unless --at says otherwise.

Exit status: 0 (with --emulate: every static figure equal to the emulation's, within
1e-6, on requests whose warps had every lane), 1 a difference or a failure, 2 bad usage
(--at names no parameter of the file, or its values violate a schedule's facts), 3 g++
missing for --emulate.
"""
from __future__ import annotations

import json
import sys

from parakern.commands.source_file import read_source
from parakern.machine.targets import add_target_argument
from parakern.machine.limits import c_integer
from parakern.analysis.point import parameters
from parakern.pipeline import Options, analyze
from parakern.reports.traffic import ImpossiblePoint
from parakern.verify.build import ToolMissing
from parakern.analysis.point import describe
from parakern.reports.traffic import padding_note, schedule_traffic, table, traffic_json, unpadded_traffic
from parakern.verify.emulated_traffic import measure

EXIT_OK, EXIT_DIFFERS, EXIT_USAGE, EXIT_TOOL = 0, 1, 2, 3


def add_parser(sub):
    p = sub.add_parser("profile", help="memory traffic per case: sectors per warp request, bytes per block, "
                                       "bank conflicts (static; --emulate: checked on the CPU emulation)")
    p.add_argument("file", help="C source with meta_schedule / meta_for constructs")
    p.add_argument("--at", metavar="N=V,...", default="",
                   help="parameter values of the point (others are chosen), e.g. n=1024,B0=16")
    p.add_argument("--emulate", action="store_true",
                   help="count the requests on the CPU emulation too (needs g++)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_target_argument(p)
    return p


def parse_values(text: str) -> "dict | None":
    """`n=1024,B0=16` -> {"n": 1024, "B0": 16}; None when a value is not an integer or a name
    comes twice (`B=16,B=32` used to keep 32 without a word)."""
    out = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, _, value = item.partition("=")
        number = c_integer(value)
        if number is None or name.strip() in out:
            return None
        out[name.strip()] = number
    return out


def run(args) -> int:
    given = parse_values(args.at)
    if given is None:
        print("parakern profile: --at takes NAME=INTEGER pairs separated by commas, each name once",
              file=sys.stderr)
        return EXIT_USAGE
    source = read_source(args.file, "profile")
    if source is None:
        return EXIT_USAGE
    analysis = analyze(source, args.file, Options(target=args.target))
    for d in analysis.diagnostics:
        print(d.format(), file=sys.stderr)
    known = {r.schedule.id: parameters(r.schedule) for r in analysis.results}
    everything = sorted({n for names in known.values() for n in names})
    unknown = [n for n in given if n not in everything]
    if unknown:   # as tune's --data says it
        print(f"parakern profile: --at {unknown[0]}: no schedule of {args.file} has that parameter "
              f"(parameters: {', '.join(everything) or 'none'})", file=sys.stderr)
        return EXIT_USAGE
    status, lines, document = EXIT_OK, [], []
    for result in analysis.results:
        if result.tree is None:
            lines.append(f"{result.schedule.id}: no case tree (see the diagnostics)")
            continue
        mine = {n: v for n, v in given.items() if n in known[result.schedule.id]}
        try:
            found = _schedule(result, mine, args.emulate)
        except ImpossiblePoint as exc:   # the user's values: bad usage, the other schedules still shown
            print(f"parakern profile: {result.schedule.id}: {exc}", file=sys.stderr)
            document.append({"id": result.schedule.id, "error": str(exc)})
            status = EXIT_USAGE
            continue
        except Exception as exc:   # noqa: BLE001 - one line for the user, not a traceback
            if isinstance(exc, ToolMissing):
                print(f"parakern profile: {exc}", file=sys.stderr)
                return EXIT_TOOL
            lines.append(f"{result.schedule.id}: {type(exc).__name__}: {exc}")
            status = status if status == EXIT_USAGE else EXIT_DIFFERS
            continue
        text, record, same = found
        lines += text
        document.append(record)
        if not same and status != EXIT_USAGE:
            status = EXIT_DIFFERS
    if args.json:
        print(json.dumps({"file": args.file, "schedules": document}, indent=2, ensure_ascii=False))
    elif lines:
        print("\n".join(lines))
    return status


def _schedule(result, given: dict, emulate: bool):
    s = result.schedule
    point, per_case = schedule_traffic(result, given, small=emulate)
    if point is None:
        return [f"{s.id}: {per_case}"], {"id": s.id, "error": per_case}, True
    # each case whose plan pads a tile's rows, beside the same kernel unpadded (analysis/padding.py)
    befores = [None if isinstance(t, str) else unpadded_traffic(case.kernel, point)
               for case, t in zip(result.tree.cases, per_case)]
    measured = measured_before = None
    if emulate:
        measured = measure(result, point)
        twins = [k for k, b in enumerate(befores, 1) if b is not None]
        measured_before = measure(result, point, twins, padding=False) if twins else {}
    lines = ["", f"{s.id} at {describe(point)}"]
    record = {"id": s.id, "point": point, "cases": []}
    same = True
    n = len(per_case)
    for k, (case, t, before) in enumerate(zip(result.tree.cases, per_case, befores), 1):
        lines.append(f"  case {k}/{n}  {' '.join(case.decisions)}")
        if isinstance(t, str):
            lines.append(f"    {t}")
            record["cases"].append({"error": t})
            continue
        m = measured.get(k) if measured else None
        mb = measured_before.get(k) if measured_before else None
        padding = padding_note(case.kernel, point) if before is not None else ""
        lines.append(f"    block {' x '.join(map(str, t.block))}")
        lines += ["    " + line for line in table(t, m, before, mb, padding)]
        entry = traffic_json(t)
        if m is not None:
            differences = _differences(t, m)
            same = same and not differences
            entry["emulated"] = _emulated(m, differences)
            lines += [f"    differs: {d}" for d in differences]
        if before is not None:
            entry["unpadded"] = traffic_json(before) | {"padding": padding}
            if mb is not None:
                differences = _differences(before, mb)
                same = same and not differences
                entry["unpadded"]["emulated"] = _emulated(mb, differences)
                lines += [f"    differs (unpadded): {d}" for d in differences]
        record["cases"].append(entry)
    return lines, record, same


def _emulated(m, differences: list[str]) -> dict:
    return {"minimum_bytes_per_block": m.minimum_bytes, "requests": [
        {"key": list(map(str, key)), "kind": kind, "requests_per_block": c.requests, "cost": c.cost,
         "ideal": c.ideal, "full_requests_per_block": c.full, "full_cost": c.full_cost}
        for (key, kind), c in m.requests.items()], "differences": differences}


def _differences(t, m) -> list[str]:
    """Static figures the emulation contradicts: the cost of the requests of whole warps, where
    the emulation issued as many requests as the analysis counts (where guards stop lanes at
    the array's edge, the analysis' assumption that they hold does not apply)."""
    out = []
    for r in t.requests:
        c = m.requests.get((r.key, r.kind))
        if c is None:
            if not r.on_values:   # the emulation's data may never take a branch on array values
                out.append(f"{r.text} ({r.space} {r.kind}): not seen on the emulation")
        elif abs(c.requests - r.requests) > 1e-6:
            continue
        elif c.full and abs(c.full_cost - r.cost_of_full) > 1e-6 and r.exact:
            out.append(f"{r.text} ({r.space} {r.kind}): {r.cost_of_full:.6g} static, {c.full_cost:.6g} emulated")
    known = {(r.key, r.kind) for r in t.requests}
    for key, kind in m.requests:
        if (key, kind) not in known:
            where, space = _key_text(key)
            out.append(f"{where} ({space} {kind}): counted on the emulation only")
    return out


def _key_text(key: tuple) -> tuple[str, str]:
    """An emulated request's key (analysis/traffic.py access_key, copy_key) in words, and its space."""
    if key[0] == "access":
        (line, col, *_), space = key[2], key[3]
        return f"the access to '{key[1]}' at line {line}, column {col}", space
    return f"the copy of '{key[1]}'", key[4]

"""How memory traffic is shown: one line per case (optimize's text, the hover), the JSON of a
case (optimize --json), and the table per case of `parakern profile` (with the emulation's
counts beside the static figures when it ran)."""
from __future__ import annotations

import sympy

from parakern.analysis.point import describe, evaluate, profile_point, violation
from parakern.analysis.staging import plan, unpadded
from parakern.analysis.traffic import Traffic, traffic
from parakern.machine.limits import out_of_range
from parakern.symbolic.printing import to_c, to_text

NO_POINT = "no parameter point of the preferred sizes satisfies the facts: give one with --at"


class ImpossiblePoint(ValueError):
    """The values given for the point (--at) violate the schedule's facts: one line for the user."""


def schedule_traffic(result, given: "dict | None" = None, small: bool = False):
    """(point, [Traffic or the reason it has none, per case]) of a pipeline result, or
    (None, why) when no point satisfies the schedule's facts. Raises ImpossiblePoint when
    the given values are the reason."""
    beyond = out_of_range(result.schedule.params, given) if given else ""
    if beyond:   # n = 10**14 for an int n: C would wrap it (and the emulation ran for ever)
        raise ImpossiblePoint(f"--at {describe(given)}: {beyond}")
    point = profile_point(result.schedule, given, small)
    if point is None:
        why = violation(result.schedule, given, small) if given else ""
        if why:
            raise ImpossiblePoint(f"--at {describe(given)}: {why}")
        return None, NO_POINT
    out = []
    for case in result.tree.cases:
        try:
            out.append(traffic(case.kernel, point))
        except (ValueError, TypeError, ZeroDivisionError, KeyError) as exc:
            out.append(f"not computed at this point ({exc})")
    return point, out


def case_line(t: "Traffic | str") -> str:
    """`4.00 sectors/request · 165888 B/block = 1.00× the minimum · 0 bank conflicts`."""
    if isinstance(t, str):
        return t
    parts = []
    if t.global_requests:
        parts.append(f"{t.sectors_per_request:.2f} sectors/request")
    ratio = t.ratio
    moved = f"{_bytes(t.global_bytes)}/block"
    parts.append(moved + (f" = {ratio:.2f}× the minimum" if ratio is not None else ""))
    if t.shared_requests:
        parts.append(f"{t.conflicts_per_request:.2f} bank conflicts/request")
    return " · ".join(parts)


def _bytes(n: float) -> str:
    return f"{n:,.0f} B"


def traffic_json(t: "Traffic | str") -> dict:
    if isinstance(t, str):
        return {"error": t}
    return {
        "point": dict(t.point),
        "block": list(t.block),
        "global_bytes_per_block": t.global_bytes,
        "minimum_bytes_per_block": t.minimum_bytes,
        "sectors_per_request": t.sectors_per_request,
        "bank_conflicts_per_request": t.conflicts_per_request,
        "requests": [{
            "array": r.array, "what": r.text, "space": r.space, "kind": r.kind,
            "range": r.span.to_lsp() if r.span is not None else None,
            "stride": None if r.stride is None else to_text(r.stride),
            "requests_per_warp": r.per_warp, "requests_per_block": r.requests,
            ("sectors" if r.space == "global" else "wavefronts"): r.cost, "ideal": r.ideal,
            "bytes_per_block": r.requests * r.cost * 32 if r.space == "global" else None,
            "exact": r.exact} for r in t.requests],
        **({"note": t.note} if t.note else {}),
    }


def text_lines(point, per_case) -> list[str]:
    """optimize's text: the point, then one line per case."""
    if point is None:
        return [f"  memory traffic: {per_case}"]
    lines = [f"  memory traffic at {describe(point)} (global sectors per warp request, bytes per block):"]
    for k, t in enumerate(per_case, 1):
        lines.append(f"    case {k}: {case_line(t)}")
    return lines


def unpadded_traffic(kernel, point: dict) -> "Traffic | None":
    """The kernel's traffic with its tiles' rows unpadded (what padding saved), None where
    nothing is padded."""
    twin = unpadded(kernel)
    return None if twin is None else traffic(twin, point)


def table(t: Traffic, measured=None, before: "Traffic | None" = None, measured_before=None,
          padding: str = "") -> list[str]:
    """`parakern profile`: one row per request of a case (measured: verify.traffic.Measured);
    `before`: the traffic of the same kernel with its tiles' rows unpadded, its shared-memory
    wavefronts in a column of their own (and the emulation's, `measured_before`); `padding`
    says which rows were padded (padding_note)."""
    head = ["access", "space", "kind", "stride", "req/warp", "req/block", "sectors|wavefronts", "ideal"]
    if before is not None:
        head += ["unpadded"]
    head += ["bytes/block"]
    if measured is not None:
        head += ["emulated req/block", "emulated cost"]
    if measured is not None and before is not None:
        head += ["emulated unpadded"]
    unpadded_costs = {(r.key, r.kind): r.cost for r in before.requests} if before is not None else {}
    rows = [head]
    for r in t.requests:
        row = [r.text, r.space, r.kind, "?" if r.stride is None else to_c(r.stride), _n(r.per_warp),
               _n(r.requests), f"{r.cost:.2f}" + ("" if r.exact else " ~"), f"{r.ideal:.2f}"]
        if before is not None:
            cost = unpadded_costs.get((r.key, r.kind))
            row += [f"{cost:.2f}" if cost is not None and r.space == "shared" else ""]
        row += [_n(r.requests * r.cost * 32) if r.space == "global" else ""]
        if measured is not None:
            m = measured.requests.get((r.key, r.kind))
            row += ["-", "-"] if m is None else [_n(m.requests), f"{m.cost:.2f}"]
        if measured is not None and before is not None:
            m = measured_before.requests.get((r.key, r.kind)) if measured_before is not None else None
            row += [f"{m.cost:.2f}" if m is not None and r.space == "shared" else ""]
        rows.append(row)
    if measured is not None:   # what the emulation counted that the analysis did not
        known = {(r.key, r.kind) for r in t.requests}
        for (key, kind), m in measured.requests.items():
            if (key, kind) not in known:
                row = [str(key[1]), key[-1], kind] + [""] * (len(head) - 5) + [_n(m.requests), f"{m.cost:.2f}"]
                rows.append(row + ([""] if before is not None else []))
    widths = [max(len(row[c]) for row in rows) for c in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    summary = (f"global: {_bytes(t.global_bytes)} per block, minimum {_bytes(t.minimum_bytes or 0)}"
               + (f" ({t.ratio:.2f}×)" if t.ratio is not None else "")
               + f", {t.sectors_per_request:.2f} sectors per request")
    if measured is not None:
        summary += f"; the emulation touched {_bytes(measured.minimum_bytes)} of distinct elements"
    lines.append(summary)
    if t.shared_requests:
        lines.append(f"shared: {t.conflicts_per_request:.2f} bank conflicts per request"
                     + (f" ({before.conflicts_per_request:.2f} unpadded; {padding})" if before is not None else ""))
    if t.note:
        lines.append(f"note: {t.note}")
    return lines


def padding_note(kernel, point: dict) -> str:
    """`rows of c's tile 9 elements apart (2*floor(B0/2) + 1) where 8 hold them`: each padded
    tile of the kernel's plan at the point ('' where none is)."""
    subs = evaluate(kernel.schedule, point)
    notes = []
    for st in plan(kernel) if kernel.cached else ():
        for choice in st.choices:
            for region in choice.regions:
                if region.pitch is not None:
                    pitch, row = (sympy.sympify(e).xreplace(subs) for e in (region.pitch, region.row))
                    notes.append(f"rows of {st.array.name}'s tile {pitch} elements apart ({to_c(region.pitch)}) "
                                 f"where {row} hold them")
    return "; ".join(dict.fromkeys(notes))


def _n(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}"

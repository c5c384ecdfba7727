"""The texts the editor shows, built from a summary: the one-line case messages (and
their information diagnostics), lens titles, hover markdown and the case-tree page.
Pure: no pygls, no z3."""
from __future__ import annotations

import re

from parakern.lsp.ranges import Range
from parakern.lsp.summary import CASE_CODE, CaseInfo, DiagInfo, ScheduleSummary
from parakern.lsp.views import ScheduleView
from parakern.strategies.decisions import editor_words, legend, plain_codes

DECISIONS = editor_words()    # decision code -> the editor's words
# Decisions that mean "nothing was done": left out of the one-line case message.
_PLAIN = plain_codes()


def case_message(summary: ScheduleSummary, case: CaseInfo) -> str:
    notes = [f"{DECISIONS.get(d, d)} {d}" for d in case.decisions if d not in _PLAIN]
    text = f"case {case.index}/{len(summary.cases)}: {case.condition}"
    return text + (" — " + ", ".join(notes) if notes else " — kernel as written")


def case_diagnostics(summary: ScheduleSummary, keyword: Range) -> list[DiagInfo]:
    return [DiagInfo("information", CASE_CODE, case_message(summary, c), keyword)
            for c in summary.cases]


def _smem(shared: str) -> str:
    return "no smem" if shared == "0" else f"smem {shared} B"


def lens_title(summary: "ScheduleSummary | None", case_trees: bool = True) -> str:
    if not case_trees:
        return "parakern: case trees off"
    if summary is None:
        return "analysing…"
    if summary.status == "ok":
        n = len(summary.cases)
        if n == 0:
            return "no case: nothing fits (see hover)"
        count = f"{n} case{'s' * (n != 1)}"
        running = [r for r in summary.runs if r.case is not None]
        if running:   # what runs on the GPUs the user configured: the default dispatcher's case
            cases = list(dict.fromkeys(r.case for r in running))
            where = "; ".join(f"case {k} on {', '.join(r.key for r in running if r.case == k)}" for k in cases)
            first = next(c for c in summary.cases if c.index == cases[0])
            return f"runs {where} · {first.registers} regs · {_smem(first.shared)} · {count}"
        first = summary.cases[0]
        return f"{count} · {first.registers} regs · {_smem(first.shared)}"
    if summary.status == "timeout":
        return "analysis timed out"
    if summary.status in ("crash", "error"):
        return "analysis failed"
    return "no cases: fix the errors"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def cases_table(summary: ScheduleSummary) -> str:
    rows = ["| case | constraints | its kernel needs | decisions | registers | shared memory | z3 witness |",
            "|---|---|---|---|---|---|---|"]
    for c in summary.cases:
        witness = ", ".join(f"{k}={v}" for k, v in c.witness) or "—"
        if not c.verified:
            witness += " (consistency unproved)"
        shared = "none" if c.shared == "0" else f"{c.shared} B"
        rows.append(f"| {c.index} | {_cell(c.condition)} | {_cell(c.needs)} | "
                    f"{_cell(' '.join(c.decisions))} | {_cell(c.registers)} | {_cell(shared)} | "
                    f"{_cell(witness)} |")
    codes = legend(d for c in summary.cases for d in c.decisions)
    return "\n".join(rows) + (f"\n\n<sub>Decisions: {codes}</sub>" if codes else "")


def profile_lines(summary: ScheduleSummary) -> list[str]:
    """Per GPU, where the tree's order (dispatch_tree, the paper's rule) picks each case."""
    lines = []
    for p in summary.profiles:
        parts = []
        for index, condition in p.conditions:
            if condition is None:
                parts.append(f"never case {index}")
            elif condition == "":
                parts.append(f"case {index} always")
            else:
                parts.append(f"case {index} when {condition}")
        values = ", ".join(f"{k}={v}" for k, v in p.values)
        lines.append(f"- **{p.key.upper()}**: " + ("; ".join(parts) or "no case") +
                     f"  \n  <sub>{p.name}: {values}</sub>")
    return lines


def runs_lines(summary: ScheduleSummary) -> list[str]:
    """Per GPU, the case the default dispatcher launches at the bench's sizes, its predicted time,
    registers and shared memory, the other cases that fit there: one line each."""
    lines = []
    for r in summary.runs:
        if r.case is None:
            lines.append(f"- **{r.key.upper()}**: {_cell(r.why)}")
            continue
        shared = f"smem {r.shared}" if r.shared else "no smem"
        others = f" · also fit: {', '.join(map(str, r.others))}" if r.others else ""
        lines.append(f"- **{r.key.upper()}**: case {r.case} · {r.predicted} · {r.registers} regs · {shared} · "
                     f"{r.threads} threads{others}")
    return lines


def runs_markdown(summary: ScheduleSummary, view_id: str) -> str:
    """The answer first: which case runs on each configured GPU (the default dispatcher's rule)."""
    function, _, index = view_id.rpartition(":")
    at = next((r.at for r in summary.runs if r.case is not None and r.at), "")
    head = (f"**Runs** (`{function}_{index}_dispatch`: the time model's fastest case that fits"
            + (f", at {at}" if at and len({r.at for r in summary.runs if r.case is not None}) == 1 else "") + ")")
    lines = runs_lines(summary)
    if at and len({r.at for r in summary.runs if r.case is not None}) > 1:
        lines = [line + (f" · at {r.at}" if r.case is not None else "") for line, r in zip(lines, summary.runs)]
    return head + "\n\n" + "\n".join(lines)


def tuning_markdown(summary: ScheduleSummary) -> str:
    """The time model's recommended configuration per GPU profile (`parakern tune`)."""
    lines = []
    for info in summary.tuning:
        at = f" at {info.data}" if info.data else ""
        if info.predicted:
            lines.append(f"- **{info.key.upper()}**{at}: {info.configuration} · predicted {info.predicted}"
                         f" · occupancy {info.occupancy}")
        else:
            lines.append(f"- **{info.key.upper()}**{at}: {info.configuration}")
    return ("**Recommended values** (the time model's best over every candidate, `parakern tune`)\n\n"
            + "\n".join(lines))


def hover_markdown(view: ScheduleView, summary: "ScheduleSummary | None", token: str,
                   name: str = "", case_trees: bool = True) -> str:
    head = [f"**parakern** · `{view.id}`"]
    if token == "meta_for":
        loop = next((l for l in view.loops if l.var == name), None)
        if loop is not None:
            index = "blockIdx" if loop.level == "grid" else "threadIdx"
            head.append(f"`meta_for {loop.var}` → `{index}.{loop.axis}` ({loop.level} level), "
                        f"extent {loop.extent}")
    elif token == "cache" or token == "cached":
        names = [n for n, _ in view.cache]
        head.append("`cache(" + ", ".join(names) + ")`: staged in shared memory where a case keeps it (4a)")
    if not case_trees:
        return "\n\n".join(head + ["\n".join(f"- {line}" for line in view.outline),
                                     "Case trees are turned off (setting `parakern.caseTrees`)."])
    outline = ["\n".join(f"- {line}" for line in view.outline)] if view.outline else []
    if summary is None:   # what the front-end knows answers at once; the tree follows
        return "\n\n".join(head + outline + ["_case tree: analysing…_"])
    if summary.status in ("timeout", "crash", "error"):
        return "\n\n".join(head + outline + [f"⚠ {summary.message}"])
    if summary.status != "ok":
        return "\n\n".join(head + outline + ["No case tree: this meta_schedule has errors (see the diagnostics)."])
    n = len(summary.cases)
    coverage = {"proved": "coverage proved by z3", "refuted": "coverage refuted",
                "unknown": "coverage not proved"}.get(summary.coverage, "")
    head[0] += f" · {n} case{'s' * (n != 1)}" + (f" · {coverage}" if coverage else "")
    parts = head[:]
    if token == "cached" and name:
        staged = [str(c.index) for c in summary.cases if name in c.cached]
        plain = [str(c.index) for c in summary.cases if name not in c.cached]
        parts.append(f"`{name}`: in shared memory in case{'s' * (len(staged) != 1)} "
                     f"{', '.join(staged) or '—'}; from global memory in "
                     f"case{'s' * (len(plain) != 1)} {', '.join(plain) or '—'}")
    # the answer first: which case runs on each configured GPU, then the table, then the details
    if summary.runs:
        parts.append(runs_markdown(summary, view.id))
    elif not summary.complete:
        parts.append("_which case runs on which GPU, where no kernel fits, memory traffic: analysing…_")
    parts.append(cases_table(summary))
    if summary.atomics:
        parts.append(atomics_markdown(summary))
    theoretical = [str(c.index) for c in summary.cases if not c.profiles] if summary.complete else []
    if theoretical:
        parts.append(f"**Theoretical**: case{'s' * (len(theoretical) != 1)} {', '.join(theoretical)} — no known "
                     "GPU's register file, shared memory and thread limits let its kernel run")
    if summary.tuning:
        parts.append(tuning_markdown(summary))
    if summary.traffic_point:
        parts.append(traffic_markdown(summary))
    if summary.profiles:
        function, _, index = view.id.rpartition(":")
        parts.append(f"**The tree's order** (`{function}_{index}_dispatch_tree`, the paper's rule: the first case "
                     "whose constraints hold; R_B, Z, T of the GPU substituted, simplified by z3)\n\n"
                     + "\n".join(profile_lines(summary)))
    if summary.uncovered:
        parts.append("**No kernel fits** where " + "; ".join(
            f"{text} ({counter})" for text, counter in summary.uncovered))
    if summary.not_applied:
        parts.append(not_applied_markdown(summary))
    return "\n\n".join(parts)


def atomics_markdown(summary: ScheduleSummary) -> str:
    """(7): the updates every case makes with CUDA atomics, and why."""
    return ("**Atomic updates** (7): iterations may update one element at once, so every case makes these "
            "updates with CUDA's atomics\n\n"
            + "\n".join(f"- line {line}: `{statement}` → `{function}`" for line, statement, function in
                        summary.atomics))


def traffic_markdown(summary: ScheduleSummary) -> str:
    """Each case's global sectors per warp request, bytes per block against the minimum and bank
    conflicts, at the point they were evaluated at (`parakern profile` has the tables)."""
    return (f"**Memory traffic** at {summary.traffic_point}\n\n"
            + "\n".join(f"- case {c.index}: {_cell(c.traffic)}" for c in summary.cases if c.traffic))


def not_applied_markdown(summary: ScheduleSummary) -> str:
    """Why some strategies never appear in the cases: what the user would change."""
    return "**Not applied**\n\n" + "\n".join(f"- {code} {_cell(why)}" for code, why in summary.not_applied)


def tree_markdown(view_id: str, summary: ScheduleSummary) -> str:
    if summary.status != "ok":
        return f"# {view_id}\n\nNo case tree ({summary.status}). {summary.message}".rstrip()
    parts = [f"# Case tree of `{view_id}`"]
    if summary.runs:
        parts.append("## What runs\n\n" + runs_markdown(summary, view_id))
    parts.append(cases_table(summary))
    if summary.traffic_point:
        parts.append(traffic_markdown(summary))
    if summary.profiles:
        parts.append("## The tree's order on known GPUs\n\n" + "\n".join(profile_lines(summary)))
    if summary.not_applied:
        parts.append(not_applied_markdown(summary))
    parts.append("## Tree\n\n```text\n" + summary.tree_text + "\n```")
    return "\n\n".join(parts) + "\n"


# ------------------------------------------------------------------ plain text

_TABLE_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")


def plain_text(markdown: str) -> str:
    """A hover's markdown for a client that shows plain text only: no `**`, backticks, tags or
    escapes; a table's rows as `case 1` with one `  header: value` line per column (its
    columns side by side would be hundreds of characters wide)."""
    lines, out, i = markdown.split("\n"), [], 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            header, i = _cells(lines[i]), i + 2
            while i < len(lines) and lines[i].startswith("|"):
                row = _cells(lines[i])
                out.append(f"{header[0]} {row[0]}")
                out += [f"  {h}: {v}" for h, v in zip(header[1:], row[1:])]
                i += 1
            continue
        out.append(_inline(lines[i]))
        i += 1
    return "\n".join(out)


def _cells(row: str) -> list[str]:
    return [_inline(c.strip()) for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def _inline(text: str) -> str:
    text = re.sub(r"</?(sub|sup|b|i|em|strong)>", "", text)
    text = text.replace("**", "").replace("`", "")
    text = re.sub(r"(?<![\w\\])_(\S(?:.*?\S)?)_(?!\w)", r"\1", text)   # _italic_, not R_B
    text = re.sub(r"^#+\s+", "", text)
    return text.replace("\\|", "|").replace("\\*", "*").replace("\\_", "_").rstrip()

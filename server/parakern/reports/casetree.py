"""How a case tree is shown: JSON (the JSON document of docs/cli.md), readable text, Graphviz DOT."""
from __future__ import annotations

import sympy

from parakern.symbolic import constraints as cs
from parakern.comprehensive import Case, CaseTree
from parakern.symbolic.printing import to_c, to_math, to_plain, to_text
from parakern.codegen import CodegenError, kernel_name, kernel_source, launch_snippet
from parakern.dispatch import runnable
from parakern.machine.devices import PROFILES
from parakern.strategies.decisions import legend

# JSON names of the counters, as the JSON document of docs/cli.md names them.
_JSON_NAMES = {"registers": "registers", "shared_memory": "shared_bytes", "threads": "threads",
               "occupancy": "occupancy"}


def _value(value):
    """ints stay ints, expressions become sympy text (the JSON contract)."""
    if isinstance(value, int):
        return value
    value = sympy.sympify(value)
    return int(value) if value.is_Integer else str(value)


def _witness(witness: "dict | None") -> dict:
    if not witness:
        return {}
    return {k: (v if isinstance(v, (int, float)) else str(v)) for k, v in sorted(witness.items())}


def case_json(case: Case, k: int = 0, cases: int = 0, profiles: tuple = ()) -> dict:
    return {
        "constraints": [to_text(r) for r in case.constraints.relations],
        "constraints_c": [to_c(r) for r in case.constraints.relations],
        "needs": [to_text(r) for r in case.needs.relations],
        "profiles": list(profiles),
        "theoretical": not profiles,
        "decisions": list(case.decisions),
        "counters": {_JSON_NAMES.get(name, name): _value(v) for name, v in case.counters},
        "witness": _witness(case.witness),
        "verified": case.verified,
        "variant": {"cached": list(case.kernel.cached), "ir_level": case.kernel.ir_level,
                    "cse_level": case.kernel.cse_level, "applied": list(case.kernel.decisions)},
        **_cuda(case, k, cases),
    }


def _cuda(case: Case, k: int, cases: int) -> dict:
    """The case's kernel and launch as CUDA; null where it cannot be printed."""
    try:
        return {"kernel": kernel_source(case, k, cases),
                "launch": launch_snippet(case, kernel_name(case.kernel.schedule, k))}
    except CodegenError as exc:
        return {"kernel": None, "launch": None, "codegen_error": exc.message}


def region_text(system: cs.System) -> str:
    return " & ".join(to_text(r) for r in system.relations) or "True"


def reachability(tree: CaseTree) -> dict:
    """case number -> the GPU profiles (machine/devices.py) whose limits let its kernel run: where the
    default dispatcher may launch it (dispatch.runnable); none: theoretical."""
    return dict(runnable(tree))


def tree_json(tree: CaseTree) -> dict:
    on = reachability(tree)
    return {
        "cases": [case_json(c, k, len(tree.cases), on[k]) for k, c in enumerate(tree.cases, 1)],
        "coverage": {"proven": tree.coverage.status == "proved", "status": tree.coverage.status,
                     "uncovered": [region_text(u.constraints) for u in tree.uncovered]},
        "tree": {"height": tree.height, "lemma1_bound": tree.bound, "pruned": tree.pruned,
                 "optimal": dict(tree.optimal), "seconds": round(tree.seconds, 3)},
    }


def tree_text(tree: CaseTree, on: "dict | None" = None) -> list[str]:
    """The tree as lines of text; `on`: reachability(tree) where the caller has it already."""
    lines = []
    n = len(tree.cases)
    on = reachability(tree) if on is None else on
    for k, case in enumerate(tree.cases, 1):
        relations = " ∧ ".join(to_math(r) for r in case.constraints.relations) or "always"
        lines.append(f"  case {k}/{n}: {relations}")
        values = dict(case.counters)
        shown = [f"registers {values.get('registers')}",
                 f"shared memory {_bytes(values.get('shared_memory'))}",
                 f"threads {to_plain(values.get('threads'))}"]
        if "occupancy" in values:
            shown.append("occupancy " + _short(values["occupancy"]))
        lines.append(f"      {' '.join(case.decisions)}   " + " · ".join(shown))
        needs = " ∧ ".join(to_math(r) for r in case.needs.relations) or "nothing"
        lines.append(f"      its kernel runs where {needs}")
        lines.append("      its kernel fits " + ", ".join(on[k]) if on[k] else
                     "      theoretical: no known GPU's limits let its kernel run (devices: "
                     + ", ".join(_profile_keys()) + ")")
        if case.witness:
            witness = ", ".join(f"{k}={v}" for k, v in _witness(case.witness).items())
            lines.append(f"      witness: {witness}" + ("" if case.verified else "   (consistency unproved)"))
    codes = legend(d for case in tree.cases for d in case.decisions)
    if codes:
        lines.append(f"  decisions: {codes}")
    for region in tree.uncovered:
        lines.append(f"  no kernel fits where {' ∧ '.join(to_math(r) for r in region.constraints.relations)}"
                     f"   ({region.limits})")
    status = {"proved": "coverage proved by z3", "refuted": "coverage REFUTED",
              "unknown": "coverage not proved (z3 gave up)"}[tree.coverage.status]
    lines.append(f"  {status}; tree height {tree.height} (bound {tree.bound}), "
                 f"{tree.pruned} inconsistent branches pruned, {tree.seconds:.2f} s")
    return lines


def _profile_keys() -> list:
    return sorted(PROFILES)


def _bytes(value) -> str:
    return "none" if _value(value) == 0 else f"{to_plain(value)} B"


def _short(value) -> str:
    text = to_plain(value)
    return text if len(text) <= 40 else "an expression in the parameters"


def tree_dot(tree: CaseTree, name: str) -> str:
    """The decision tree: nodes evaluate a counter, edges are accept / refuse relations."""
    lines = [f'digraph "{name}" {{', '  node [shape=box, fontname="monospace"];']
    ids: dict = {}

    def node(prefix: tuple, label: str, shape: str = "box") -> str:
        if prefix not in ids:
            ids[prefix] = f"n{len(ids)}"
            lines.append(f'  {ids[prefix]} [label="{_escape(label)}", shape={shape}];')
        return ids[prefix]

    leaves = [(c.path, f"case {k}\\n{' '.join(c.decisions)}", "ellipse")
              for k, c in enumerate(tree.cases, 1)]
    leaves += [(u.path, "no kernel fits", "octagon") for u in tree.uncovered]
    edges = set()

    def edge(parent: str, child: str, step) -> None:
        if (parent, child) not in edges:
            edges.add((parent, child))
            label = to_math(step.relation) + (f"\\n{step.strategy}" if step.strategy else "")
            style = "solid" if step.branch == "accept" else "dashed"
            lines.append(f'  {parent} -> {child} [label="{_escape(label)}", style={style}];')

    for path, label, shape in leaves:
        for depth, step in enumerate(path):
            parent = node(path[:depth], f"{step.counter} = {_value(step.value)}")
            child = (node(path[:depth + 1], label, shape) if depth == len(path) - 1 else
                     node(path[:depth + 1], f"{path[depth + 1].counter} = {_value(path[depth + 1].value)}"))
            edge(parent, child, step)
    # a path that reached a variant another path reached first points at that one's subtree
    for path, first in tree.joins:
        if first in ids:
            edge(node(path[:-1], f"{path[-1].counter} = {_value(path[-1].value)}"), ids[first], path[-1])
    lines.append("}")
    return "\n".join(lines)


def _escape(text: str) -> str:
    return text.replace('"', '\\"')

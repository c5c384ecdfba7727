"""Memory requests counted on the CPU emulation: the check of analysis/traffic.py.

Each case's kernel is printed traced (codegen/trace.py), compiled with g++ against
parakern_cpu.h and parakern_trace.h, and launched once at a parameter point with the
launch of the case (launch.py); the trace groups the element references of each
warp into requests as a GPU would and reports, per site (an access or a staging copy, the
static analysis' keys), the requests and their mean sectors or wavefronts. Arrays get
their declared sizes at the point (a pointer without one: 2^22 elements) and constant
contents; a reference outside an array is counted but not made.
"""
from __future__ import annotations

import dataclasses
import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path

import sympy

from parakern.analysis.point import evaluate
from parakern.codegen.emit import INCLUDES, PREAMBLE
from parakern.codegen.kernel_source import kernel_name, kernel_source
from parakern.launch import launch_of
from parakern.codegen.trace import Sites
from parakern.process.lifeline import ScratchDirectory
from parakern.verify import build as building

TRACE_HEADER = Path(__file__).with_name("parakern_trace.h")
UNSIZED = 1 << 22          # elements given to an array whose size is not declared


@dataclass(frozen=True)
class Counted:
    """One kind of request of one case, as the emulation counted it."""
    requests: float        # warp requests per block
    cost: float            # mean sectors (global) or wavefronts (shared) per request
    ideal: float           # mean of the fewest the same lanes' distinct elements could take
    full: float            # requests per block where every lane of the warp took part
    full_cost: float       # their mean cost (a guard that stops some lanes does not count)
    full_ideal: float      # their mean ideal
    per_thread: float      # element references per thread


@dataclass(frozen=True)
class Measured:
    case: int                          # 1-based
    blocks: int
    threads: int
    minimum_bytes: float               # per block: distinct elements it read, and wrote, times their size
    requests: dict                     # (key, kind) -> Counted


def measure(result, values: dict, cases: "list[int] | None" = None, build_dir: "str | Path | None" = None,
            padding: bool = True) -> dict[int, Measured]:
    """Case number -> what the emulation counted at `values` (a pipeline.ScheduleResult);
    `padding=False`: each case's kernel with its tiles' rows unpadded (analysis/padding.py),
    launched with the case's own shared memory, which holds it."""
    tree = result.tree
    s = result.schedule
    chosen = cases or list(range(1, len(tree.cases) + 1))
    sites = Sites()
    run = [tree.cases[k - 1] if padding else
           dataclasses.replace(tree.cases[k - 1], kernel=dataclasses.replace(tree.cases[k - 1].kernel, padding=False))
           for k in chosen]
    kernels = [kernel_source(case, k, len(tree.cases), trace=sites) for case, k in zip(run, chosen)]
    source = PREAMBLE + INCLUDES + "\n" + "\n\n".join(kernels) + "\n\n" + _main(s, tree, values, chosen)
    records = run_traced(source, build_dir)
    out = {}
    for record in records:
        k = record["label"]
        blocks = max(1, record["blocks"])
        counted = {}
        for name, t in record["sites"].items():
            number, kind = name.split(":")
            case, key = sites.table[int(number)]
            full_cost = t["full_cost"] / t["full"] if t["full"] else 0.0
            full_ideal = t["full_ideal"] / t["full"] if t["full"] else 0.0
            counted[key, kind] = Counted(t["requests"] / blocks, t["cost"] / t["requests"], t["ideal"] / t["requests"],
                                         t["full"] / blocks, full_cost, full_ideal,
                                         t["events"] / max(1, record["threads"]))
        out[k] = Measured(k, record["blocks"], record["threads"], record["minimum_bytes"] / blocks, counted)
    return out


def run_traced(source: str, build_dir: "str | Path | None" = None) -> list[dict]:
    """Compiles a traced translation unit (its main calls parakern_trace::finish after each
    launch) against the CPU emulation, runs it and returns the JSON record of each launch."""
    gcc, gxx = building.tools()
    scratch = ScratchDirectory("parakern-trace-")       # removed even when this process is killed
    try:
        directory = Path(build_dir) if build_dir is not None else Path(scratch.name)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "traced.cpp").write_text(source)
        building.run_compiler([gxx, "-std=c++17", "-O1", "-w", *building.FMA_FLAGS, "-include",
                               str(building.HEADER), "-include", str(TRACE_HEADER), "traced.cpp", "-o", "traced",
                               "-lm"], "the traced kernels", directory)
        done = subprocess.run([str(directory / "traced")], capture_output=True, text=True, timeout=600,
                              cwd=directory)
    finally:
        scratch.cleanup()
    if done.returncode != 0:
        raise RuntimeError(f"the traced kernels failed: {done.stderr.strip()[-500:]}")
    return [json.loads(line) for line in done.stdout.splitlines()]


def _main(s, tree, values: dict, chosen: list[int]) -> str:
    subs = evaluate(s, values)

    def number(expr) -> int:
        v = sympy.sympify(expr).xreplace(subs)
        if not v.is_Integer:
            raise ValueError(f"'{expr}' has no value at this point")
        return int(v)

    lines = ["int main(void)", "{",
             "    parakern_cpu_set_device(1 << 30, (size_t)1 << 30, 1024, (size_t)1 << 30);"]
    for a in s.arrays:
        count = math.prod(number(d) for d in a.dims) if a.dims else UNSIZED
        fill = "1" if a.ctype in ("float", "double") else "0"
        lines += [f"    {a.ctype} *{a.name} = new {a.ctype}[{max(1, count)}];",
                  f"    for (long long i = 0; i < {max(1, count)}LL; ++i) {a.name}[i] = ({a.ctype}){fill};",
                  f"    parakern_trace::array({a.name}, {max(1, count)}LL);"]
    args = [a.name for a in s.arrays]
    for p in s.params:
        args.append(f"({p.ctype}){values.get(p.name, 1)}")
    for k in chosen:
        case = tree.cases[k - 1]
        launch = launch_of(case)
        grid = ", ".join(str(number(g)) for g in launch.grid)
        block = ", ".join(str(number(b)) for b in launch.block)
        shared = number(launch.shared_bytes)
        name = kernel_name(s, k)
        lines += [f"    cudaFuncSetAttribute({name}, cudaFuncAttributeMaxDynamicSharedMemorySize, {shared});",
                  f"    PARAKERN_LAUNCH({name}, dim3({grid}), dim3({block}), {shared}, {', '.join(args)});",
                  "    if (cudaGetLastError() != cudaSuccess) {",
                  f'        fprintf(stderr, "case {k}: %s\\n", parakern_cpu::last_message.c_str());',
                  "        return 1;", "    }",
                  f"    parakern_trace::finish(stdout, {k});"]
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"

"""Registers: ptxas's count per thread for the kernel's PTX, or an estimate; what a block
of them asks of the register file (R_B) as the hardware allocates it.

The machine parameter is the registers per block R_B (cudaDeviceProp.regsPerBlock, 65 536
on every GPU since Kepler), not a per-thread R: a thread may use up to 255 registers, and a
block fits when its threads' registers, allocated per warp in units of 256 and warps in
groups of 4 (one per SM sub-partition), fit R_B: a kernel of r registers per thread needs
1024·⌈r/8⌉·⌈threads/128⌉ (`registers_per_block`). Register cases then appear exactly
where a large block needs them (`4096·⌈B0·B1/128⌉ ≤ R_B`), never as a bare `R < 20`.

With `ptxas` on PATH the count is what `ptxas -arch=<target> -v` reports.
Without it, a liveness analysis of the PTX virtual registers estimates it:
basic blocks and the control-flow graph come from labels and branches, and
the estimate is the largest total width of registers live at one point —
64-bit registers (%rd) weigh 2, 32- and 16-bit ones 1, predicates 0 (they
live in the separate predicate file) — plus PTXAS_BASELINE. See
`live_pressure` for the two habits of ptxas it models. On the samples it is
within 6 registers of ptxas (tests/integration/test_registers.py prints the table); it
cannot see ptxas unrolling a loop the PTX leaves rolled (IR level 0).

IR level 3 is level 2 under a register cap: the level-2 count minus
CAP_MARGIN, but never below MIN_CAP, the smallest cap ptxas accepts (CUDA 13
raises smaller ones to 24 for sm_75 to sm_100). A kernel whose level-2
count is at most MIN_CAP gets no cap: level 3 is then level 2 (a cap that
cannot bind still perturbs ptxas's heuristics).
"""
from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import sympy

from parakern.process import interrupts
from parakern.counters.base import Counter, Measure, normalize
from parakern.ir.ptx import kernel_ptx
from parakern.kernel import Kernel
from parakern.symbolic.symbols import R_B
from parakern.machine.targets import DEFAULT_TARGET

CAP_MARGIN = 4
MIN_CAP = 24
PTXAS_BASELINE = 4  # ptxas -arch=sm_80 reports 4 registers for an empty kernel
PTXAS_TIMEOUT_S = 60


MAX_REGISTERS = 255          # per thread, every GPU since sm_50
WARP_SIZE = 32
ALLOCATION_UNIT = 256        # registers, allocated per warp (cuda_occupancy.h, every cc >= 7.0)
WARP_GRANULARITY = 4         # warps get registers in groups of the SM's 4 sub-partitions


def registers_per_block(registers, threads):
    """Registers a block of `threads` threads of `registers` each takes from R_B (sympy or int):
    per warp ALLOCATION_UNIT·⌈32·r/ALLOCATION_UNIT⌉, for ⌈warps/4⌉·4 warps."""
    per_warp = ALLOCATION_UNIT * sympy.ceiling(sympy.Rational(WARP_SIZE, ALLOCATION_UNIT) * registers)
    groups = sympy.ceiling(sympy.sympify(threads) / (WARP_SIZE * WARP_GRANULARITY))
    return normalize(per_warp * WARP_GRANULARITY * groups)


class RegisterCounter(Counter):
    name = "registers"
    symbol = R_B
    unit = "registers"
    kind = "resource"

    def __init__(self, ptxas: "str | None" = None, use_ptxas: bool = True):
        """`ptxas`: path of the assembler (default: found on PATH); use_ptxas=False forces the estimate."""
        self.ptxas = (ptxas or shutil.which("ptxas")) if use_ptxas else None

    def _assembly(self, kernel: Kernel) -> tuple:
        """(the PTX counted, the register cap or None): level 3 is level 2's PTX under a cap."""
        cap = self.register_cap(kernel) if kernel.ir_level == 3 else None
        return kernel_ptx(kernel, 2 if kernel.ir_level == 3 else kernel.ir_level), cap

    def measure(self, kernel: Kernel) -> Measure:
        ptx, cap = self._assembly(kernel)
        suffix = f", capped at {cap}" if cap is not None else ""
        if kernel.ir_level == 3 and cap is None:
            suffix = f" (level 2 is within {MIN_CAP} registers: no cap)"
        if self.ptxas:
            info = _assembled(self.ptxas, ptx, kernel.target, cap)
            spills = (f"; spills {info.spill_stores} bytes stored, {info.spill_loads} loaded"
                      if info.spill_stores or info.spill_loads else "")
            return Measure(info.registers, True, "ptxas",
                           f"ptxas -arch={kernel.target} at IR level {kernel.ir_level}{suffix}{spills}")
        value = estimate_registers(ptx)
        if cap is not None:
            value = min(value, cap)  # ptxas would spill the rest
        return Measure(value, False, "estimate",
                       f"liveness of PTX virtual registers at IR level {kernel.ir_level}{suffix} "
                       "(ptxas not found)")

    def prefetch(self, kernel: Kernel) -> None:
        """ptxas on the kernel's PTX in a background thread: the PTX is made now (it is needed
        anyway), the assembler (a process of its own) runs while the tree goes on elsewhere."""
        if not self.ptxas:
            return
        try:
            ptx, cap = self._assembly(kernel)
        except Exception:
            interrupts.reraise()
            return     # `measure` meets the same error where the tree expects it
        _start(self.ptxas, ptx, kernel.target, cap)

    def requirement(self, kernel: Kernel, value):
        """The registers of the whole block (value: per thread), as the hardware allocates them."""
        threads = sympy.Mul(*[lp.extent for lp in kernel.schedule.block])
        return registers_per_block(value, threads)

    def register_cap(self, kernel: Kernel) -> "int | None":
        """The cap of IR level 3: a few registers below the level-2 count, None where none can bind."""
        level2 = self.measure(_at_level(kernel, 2)).value
        return max(MIN_CAP, level2 - CAP_MARGIN) if level2 > MIN_CAP else None


def _at_level(kernel: Kernel, level: int) -> Kernel:
    return dataclasses.replace(kernel, ir_level=level)


# ------------------------------------------------------------------ ptxas


@dataclass(frozen=True)
class PtxasInfo:
    registers: int
    spill_stores: int
    spill_loads: int
    log: str


class PtxasError(RuntimeError):
    pass


_STARTED: "dict[tuple, Future]" = {}     # ptxas runs started ahead, by ptxas_info's arguments
_LOCK = threading.Lock()
_POOL: "ThreadPoolExecutor | None" = None
_KEEP_STARTED = 64


def _start(*arguments) -> None:
    global _POOL
    with _LOCK:
        if arguments in _STARTED:
            return
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="parakern-ptxas")
        if len(_STARTED) >= _KEEP_STARTED:     # runs nobody waited for (a tree that failed)
            for done in [k for k, f in _STARTED.items() if f.done()]:
                del _STARTED[done]
        _STARTED[arguments] = _POOL.submit(ptxas_info, *arguments)


def _assembled(*arguments) -> "PtxasInfo":
    """ptxas_info, waiting for the run started ahead where there is one (its error, if any,
    is raised here, where it would have been)."""
    with _LOCK:
        started = _STARTED.pop(arguments, None)
    return started.result() if started is not None else ptxas_info(*arguments)


@functools.lru_cache(maxsize=512)
def ptxas_info(ptxas: str, ptx: str, target: str = DEFAULT_TARGET, max_registers: "int | None" = None) -> PtxasInfo:
    """Run ptxas on `ptx` and read its resource report."""
    with tempfile.TemporaryDirectory(prefix="parakern-") as tmp:
        source = os.path.join(tmp, "kernel.ptx")
        with open(source, "w", encoding="utf-8") as f:
            f.write(ptx)
        command = [ptxas, f"-arch={target}", "-v", source, "-o", os.path.join(tmp, "kernel.cubin")]
        if max_registers is not None:
            command.insert(1, f"-maxrregcount={max_registers}")
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=PTXAS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise PtxasError(f"ptxas did not finish in {PTXAS_TIMEOUT_S} s") from None
    log = done.stdout + done.stderr
    used = re.search(r"Used (\d+) registers", log)
    if done.returncode != 0 or used is None:
        raise PtxasError(f"ptxas failed (exit {done.returncode}): {log.strip()}")
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    stores, loads = (int(spills.group(1)), int(spills.group(2))) if spills else (0, 0)
    return PtxasInfo(int(used.group(1)), stores, loads, log)


# ------------------------------------------------------------------ estimate

_REG_DECL = re.compile(r"\.reg\s+\.(\w+)\s+%(\w+?)<\d+>")
_WEIGHT = {"pred": 0, "b8": 1, "b16": 1, "u16": 1, "s16": 1, "f16": 1, "b32": 1, "u32": 1, "s32": 1,
           "f32": 1, "b64": 2, "u64": 2, "s64": 2, "f64": 2, "b128": 4}
_REGISTER = re.compile(r"%([a-z]+)(\d+)\b")
_LABEL = re.compile(r"^(\$?[\w$]+):$")
_NO_DEST = ("st", "bra", "ret", "exit", "bar", "barrier", "red", "prefetch", "membar", "fence",
            "trap", "call", "brkpt", "pmevent")


@dataclass
class _Instr:
    uses: frozenset[str]
    defs: frozenset[str]
    guarded: bool
    branch: "str | None"   # label it may jump to
    falls_through: bool
    opcode: str = ""

    @property
    def param(self) -> bool:
        return self.opcode.startswith("ld.param")

    @property
    def load(self) -> bool:
        return self.opcode.startswith("ld.") and not self.param

    @property
    def store(self) -> bool:
        return self.opcode.split(".")[0] in ("st", "atom", "red", "bar", "barrier", "membar", "fence")


def estimate_registers(ptx: str) -> int:
    """ptxas's register count predicted from the PTX: live pressure plus ptxas's fixed cost."""
    return PTXAS_BASELINE + live_pressure(ptx)


def live_pressure(ptx: str) -> int:
    """Largest total weight of virtual registers live at one point, over the PTX's functions.

    Two habits of ptxas are modelled: kernel parameters stay in the constant
    bank (SASS reads them as operands), so registers only loaded from
    `.param` weigh nothing; and global loads are issued as early as their
    operands allow (to hide latency), so each load moves up its basic block,
    but not above a store, barrier or branch.
    """
    return max((_function_pressure(body) for body in _function_bodies(ptx)), default=0)


def _function_bodies(ptx: str):
    text = re.sub(r"//[^\n]*", "", ptx)
    for header in re.finditer(r"\.(?:entry|func)\b", text):
        start = text.find("{", header.end())
        if start < 0:
            continue
        depth = 0
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                yield text[start + 1:i]
                break


def _function_pressure(body: str) -> int:
    weights = {prefix: _WEIGHT.get(kind, 1) for kind, prefix in _REG_DECL.findall(body)}
    blocks, labels = _blocks(body, weights)
    from_param: dict[str, bool] = {}
    for block in blocks:
        for instr in block:
            for reg in instr.defs:
                from_param[reg] = from_param.get(reg, True) and instr.param
    free = frozenset(reg for reg, only in from_param.items() if only)
    return _pressure_of([_hoist_loads(b) for b in blocks], labels, weights, free)


def _hoist_loads(block: list) -> list:
    scheduled: list = []
    for instr in block:
        position = len(scheduled)
        if instr.load:
            while position > 0:
                before = scheduled[position - 1]
                if before.defs & instr.uses or before.store or before.branch is not None:
                    break
                position -= 1
        scheduled.insert(position, instr)
    return scheduled


def _pressure_of(blocks, labels, weights, free) -> int:
    live_in = [frozenset()] * len(blocks)
    live_out = [frozenset()] * len(blocks)
    successors = []
    for i, block in enumerate(blocks):
        succ = []
        last = block[-1] if block else None
        if last is not None and last.branch is not None and last.branch in labels:
            succ.append(labels[last.branch])
        if (last is None or last.falls_through) and i + 1 < len(blocks):
            succ.append(i + 1)
        successors.append(succ)
    changed = True
    while changed:  # backward dataflow to a fixed point
        changed = False
        for i in reversed(range(len(blocks))):
            out = frozenset().union(*(live_in[s] for s in successors[i]))
            new_in = _transfer(blocks[i], out)
            if out != live_out[i] or new_in != live_in[i]:
                live_out[i], live_in[i], changed = out, new_in, True

    def weight(regs):
        return sum(weights[_prefix(r)] for r in regs if r not in free)

    pressure = 0
    for block, out in zip(blocks, live_out):
        live = set(out)
        for instr in reversed(block):
            pressure = max(pressure, weight(live | instr.defs))
            if not instr.guarded:  # a predicated definition may leave the old value in place
                live -= instr.defs
            live |= instr.uses
        pressure = max(pressure, weight(live))
    return pressure


def _transfer(block, out: frozenset) -> frozenset:
    live = set(out)
    for instr in reversed(block):
        if not instr.guarded:
            live -= instr.defs
        live |= instr.uses
    return frozenset(live)


def _prefix(register: str) -> str:
    return register.rstrip("0123456789")


def _blocks(body: str, weights: dict) -> tuple[list[list[_Instr]], dict[str, int]]:
    """Basic blocks (lists of instructions) and the block index of every label."""
    blocks: list[list[_Instr]] = [[]]
    labels: dict[str, int] = {}
    for statement in _statements(body):
        label = _LABEL.match(statement)
        if label:
            if blocks[-1]:
                blocks.append([])
            labels[label.group(1)] = len(blocks) - 1
            continue
        if statement.startswith(".") or statement.startswith("{") or statement.startswith("}"):
            continue  # declarations and pragmas
        instr = _instruction(statement, weights)
        blocks[-1].append(instr)
        if instr.branch is not None or not instr.falls_through:
            blocks.append([])
    return blocks, labels


def _statements(body: str):
    """Labels and `;`-terminated statements, in order."""
    for chunk in body.replace("\n", " ").split(";"):
        chunk = chunk.strip()
        while True:  # labels end with ':' and have no ';'
            m = re.match(r"^(\$?[\w$]+):\s*", chunk)
            if not m:
                break
            yield m.group(1) + ":"
            chunk = chunk[m.end():]
        if chunk:
            yield chunk


def _instruction(statement: str, weights: dict) -> _Instr:
    guarded = statement.startswith("@")
    guard_regs: set[str] = set()
    if guarded:
        guard, statement = statement.split(None, 1)
        guard_regs = _registers(guard, weights)
    opcode, _, operands = statement.partition(" ")
    base = opcode.split(".")[0]
    branch = operands.strip() if base == "bra" else None
    ends = base in ("ret", "exit", "trap") or (base == "bra")
    falls_through = not ends or guarded
    if base in _NO_DEST or not operands.strip():
        return _Instr(frozenset(_registers(operands, weights) | guard_regs), frozenset(), guarded,
                      branch, falls_through, opcode)
    dest, rest = _split_first_operand(operands)
    return _Instr(frozenset(_registers(rest, weights) | guard_regs),
                  frozenset(_registers(dest, weights)), guarded, branch, falls_through, opcode)


def _split_first_operand(operands: str) -> tuple[str, str]:
    depth = 0
    for i, ch in enumerate(operands):
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 0:
            return operands[:i], operands[i + 1:]
    return operands, ""


def _registers(text: str, weights: dict) -> set[str]:
    return {m.group(0)[1:] for m in _REGISTER.finditer(text) if m.group(1) in weights}

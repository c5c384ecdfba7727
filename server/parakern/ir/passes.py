"""LLVM optimization pipelines: -O3 and the register-pressure reduction levels.

Level 0  the default -O3 module pipeline.
Level 1  -O3 without loop unrolling, vectorization or interleaving: unrolled
         copies keep more values live at once. `lower` also marks every loop
         `llvm.loop.unroll.disable` at levels >= 1, which NVPTX prints as
         `.pragma "nounroll"`, so ptxas does not unroll them either — that is
         where most of the saving comes from.
Level 2  a short hand-built pipeline (SROA, instcombine, SCCP, CFG cleanup,
         sinking, dead-code removal) with no LICM, GVN or unrolling, so no
         value is hoisted out of a loop or kept live to be reused: ptxas can
         rematerialize it near its use instead.
Level 3  level 2's IR; the register cap (ptxas -maxrregcount, or the `.maxnreg`
         directive) is applied when counting registers, see
         counters/registers.py.
"""
from __future__ import annotations

import llvmlite.binding as llvm
from llvmlite import ir

from parakern.ir.libdevice import link_libdevice, needs_libdevice
from parakern.ir.targets import DEVICE_TRIPLE, device_machine, host_machine
from parakern.machine.targets import DEFAULT_TARGET

LEVELS = (0, 1, 2, 3)
LEVEL_NOTES = {
    0: "LLVM -O3",
    1: "-O3 without unrolling or vectorization; loops marked nounroll for ptxas too",
    2: "SROA, instcombine, SCCP, sinking, DCE only: no LICM, GVN or unrolling",
    3: "level 2 under a ptxas register cap (level-2 count minus a few)",
}


def optimize(module: "ir.Module | llvm.ModuleRef | str", level: int = 0,
             target: str = DEFAULT_TARGET) -> llvm.ModuleRef:
    """A verified, optimized copy of `module` (the input is left as it is)."""
    if level not in LEVELS:
        raise ValueError(f"optimization level must be one of {LEVELS}, got {level}")
    ref = llvm.parse_assembly(str(module))
    ref.verify()
    device = ref.triple == DEVICE_TRIPLE
    tm = device_machine(target) if device else host_machine()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    if level >= 1:
        pto.loop_unrolling = False
        pto.loop_vectorization = False
        pto.slp_vectorization = False
        pto.loop_interleaving = False
    pb = llvm.create_pass_builder(tm, pto)
    if device and needs_libdevice(ref):
        link_libdevice(ref, pb)
    pm = pb.getModulePassManager() if level <= 1 else _reduced_pipeline()
    pm.run(ref, pb)
    ref.verify()
    return ref


def _reduced_pipeline() -> llvm.ModulePassManager:
    pm = llvm.create_new_module_pass_manager()
    pm.add_sroa_pass()                  # locals to SSA values
    pm.add_instruction_combine_pass()
    pm.add_sccp_pass()
    pm.add_simplify_cfg_pass()
    pm.add_sinking_pass()               # move computations next to their uses
    pm.add_instruction_combine_pass()
    pm.add_aggressive_dce_pass()
    pm.add_simplify_cfg_pass()
    return pm

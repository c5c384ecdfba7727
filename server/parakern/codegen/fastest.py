"""`<function>_<index>_dispatch`: the default dispatcher, the case the time model predicts fastest.

    int <function>_<index>_dispatch(<the arguments of <function>_<index>_dispatch_tree>);

It returns what the tree's dispatcher returns (the case launched, or a status: codegen/status.py).
Once per device and host thread it reads what the time model reads of the device (codegen/auto.py's
`parakern_read_model_device`: SMs, clocks, bus width, L2) and raises the dynamic shared memory
limit of the kernels that stage (their blocks per SM are counted with it). At every call it probes
each case in the tree's order (`<function>_<index>_select` with probe set and the case alone: its
kernel fits the device and its launch CUDA's limits at these values, constraints aside), takes the
model's time of each that fits (`<function>_<index>_time_case<k>`, the blocks per SM asked once
per launch shape) and launches the fastest; a later case replaces an earlier one only where
predicted faster by more than dispatch.TIE (relative). Where no case that fits has a time, or the
device's speeds cannot be read, the tree's rule decides (and says why no case fits). The rule is
parakern.dispatch's `choose`, printed here.
"""
from __future__ import annotations

from parakern import dispatch
from parakern.analysis.rebuild import used_names
from parakern.codegen.auto import MODEL_DEVICE, READ_DEVICE, time_case_name
from parakern.codegen.cprint import INDENT, Names
from parakern.codegen.kernel_source import kernel_name, signature
from parakern.codegen.tree_dispatcher import (dispatcher_arguments, dispatcher_name, forwarded, select_name,
                                              tree_name)


def default_source(tree, modelled: bool, why: str = "") -> str:
    """The default dispatcher; where the model's time of the cases has no C (`modelled` false,
    `why`), or the tree has no case, it is the tree's dispatcher."""
    s = tree.schedule
    head = signature("int " + dispatcher_name(s), dispatcher_arguments(s))
    if not tree.cases or not modelled:
        reason = why or "the tree has no case"
        return "\n".join([f"/* {s.id}: the default dispatcher; {reason}: the tree's rule decides */", head, "{",
                          INDENT + f"return {tree_name(s)}({', '.join(forwarded(s))});", "}"])
    names = Names(used_names(s) | {"R_B", "Z", "T"})
    v = {w: names.fresh(w) for w in ("dev", "known", "modelled", "device", "prop", "best", "best_time", "k",
                                    "got", "t")}
    staged = [rule.number for rule in dispatch.case_rules(tree)
              if any(f.need == "shared_bytes" for f in rule.fits)]
    raise_limits = [f"cudaFuncSetAttribute({kernel_name(s, k)}, cudaFuncAttributeMaxDynamicSharedMemorySize, "
                    f"(int){v['prop']}.sharedMemPerBlockOptin) != cudaSuccess" for k in staged]
    params = [p.name for p in s.params]

    def select(probe: str, only: str) -> str:
        return f"{select_name(s)}({', '.join([probe, only] + forwarded(s))})"

    body = ["/* read once per device and host thread: what the time model reads of it */",
            f"static thread_local {MODEL_DEVICE} {v['dev']};",
            f"static thread_local int {v['known']} = -1;",
            f"static thread_local int {v['modelled']} = 0;",
            f"int {v['device']};",
            f"if (cudaGetDevice(&{v['device']}) != cudaSuccess)",
            INDENT + "return PARAKERN_CUDA_ERROR;",
            f"if ({v['device']} != {v['known']}) {{",
            INDENT + f"cudaDeviceProp {v['prop']};",
            INDENT + f"if (cudaGetDeviceProperties(&{v['prop']}, {v['device']}) != cudaSuccess)",
            INDENT * 2 + "return PARAKERN_CUDA_ERROR;",
            INDENT + f"{v['modelled']} = {READ_DEVICE}({v['device']}, {v['prop']}, &{v['dev']});",
            INDENT + f"if (!{v['modelled']})",
            INDENT * 2 + "(void)cudaGetLastError();   /* a speed it cannot read: the tree's rule, no error */"]
    if raise_limits:
        first, *rest = raise_limits
        body += [INDENT + "/* the blocks per SM of a kernel whose tile may pass 48 KiB: with its opt-in limit */",
                 INDENT + f"if ({v['modelled']} && ({first}"] + [INDENT * 2 + f"|| {r}" for r in rest]
        body[-1] += "))"
        body += [INDENT * 2 + "return PARAKERN_CUDA_ERROR;"]
    body += [INDENT + f"{v['known']} = {v['device']};",
             "}",
             f"int {v['best']} = 0;",
             f"double {v['best_time']} = 0.0;",
             f"for (int {v['k']} = 1; {v['modelled']} && {v['k']} <= {len(tree.cases)}; ++{v['k']}) {{",
             INDENT + f"const int {v['got']} = {select('true', v['k'])};",
             INDENT + f"if ({v['got']} < 0)",
             INDENT * 2 + f"return {v['got']};   /* values refused, or a CUDA error */",
             INDENT + f"if ({v['got']} != {v['k']})",
             INDENT * 2 + "continue;   /* its kernel does not fit or launch here (or nothing is to run) */",
             INDENT + f"double {v['t']} = -1.0;",
             INDENT + f"switch ({v['k']}) {{"]
    time_args = ", ".join([f"&{v['dev']}"] + params)
    body += [INDENT + f"case {k}: {v['t']} = {time_case_name(s, k)}({time_args}); break;"
             for k in range(1, len(tree.cases) + 1)]
    body += [INDENT + "}",
             INDENT + f"if ({v['t']} < 0.0)",
             INDENT * 2 + "continue;   /* no block of it can be resident */",
             INDENT + "/* the fastest; a later case only where faster by more than the tie (dispatch.TIE) */",
             INDENT + f"if ({v['best']} == 0 || {v['t']} < {v['best_time']} * (1.0 - {dispatch.TIE!r})) {{",
             INDENT * 2 + f"{v['best']} = {v['k']};",
             INDENT * 2 + f"{v['best_time']} = {v['t']};",
             INDENT + "}",
             "}",
             "/* the fastest (by its fit); where no case that fits has a time, the tree's rule, which also",
             " * says why none fits */",
             f"return {select('false', v['best'])};"]
    comment = [f"/* {s.id}: the default dispatcher: of the cases whose kernel fits this device and launches at",
               " * these values, the one the time model predicts fastest here (codegen/fastest.py) */"]
    return "\n".join(comment + [head, "{"] + [INDENT + line for line in body] + ["}"])

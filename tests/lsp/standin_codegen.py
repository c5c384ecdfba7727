"""A stand-in for parakern.codegen.emit_schedule (PARAKERN_LSP_GENERATOR=standin_codegen:emit_schedule):
tests of the dispatcher edit run with it where the real generator is not installed."""
from parakern.printing import to_c


def emit_schedule(result) -> str:
    schedule, tree = result.schedule, result.tree
    name = schedule.id.replace(":", "_")
    lines = [f"/* stand-in dispatcher of {schedule.id}: {len(tree.cases)} cases */"]
    for k, case in enumerate(tree.cases, 1):
        lines.append(f"/* case {k}: {' && '.join(to_c(r) for r in case.constraints.relations) or '1'} */")
        lines.append(f"__global__ void {name}_case{k}(void) {{ }}")
    lines.append(f"int {name}_dispatch(void) {{ return 1; }}")
    return "\n".join(lines) + "\n"

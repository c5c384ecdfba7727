"""The structure of server/parakern against the layers of docs/architecture.md: imports go down,
never up; no import cycle between top-level units (imports inside functions counted); an import
inside a function says why it is deferred; few of them."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "parakern"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_INNER_SHARE = 0.08       # internal imports written inside functions, at most
MAX_ROOT_MODULES = 12


def declared_layers() -> dict[str, int]:
    """unit -> layer, from the table of docs/architecture.md (`| 3 | `kernel`, `analysis` | ...`)."""
    layers = {}
    for line in ARCHITECTURE.read_text().splitlines():
        match = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
        if match:
            for unit in re.findall(r"`([\w.]+)`", match.group(2)):
                layers[unit] = int(match.group(1))
    return layers


def unit_of(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package).parts
    return parts[0] if len(parts) > 1 else parts[0][:-3]


def imports(package: Path = PACKAGE) -> list[tuple[Path, int, str, bool, str]]:
    """(file, line, imported unit, inside a function, the line and the one above it) of every
    import of parakern in `package`; an import within its own unit names that unit."""
    def is_unit(name: str) -> bool:
        return (package / name).is_dir() or (package / f"{name}.py").is_file()

    found = []
    for path in sorted(package.rglob("*.py")):
        source = path.read_text()
        lines = source.splitlines()
        tree = ast.parse(source)
        inner = {id(node) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("parakern"):
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("parakern")]
            else:
                continue
            if not names:
                continue
            targets = {n.split(".")[1] for n in names if len(n.split(".")) > 1 and is_unit(n.split(".")[1])}
            context = "\n".join(lines[max(0, node.lineno - 2):node.lineno])
            own = unit_of(path, package)
            for target in targets - {own} or {own}:
                found.append((path, node.lineno, target, id(node) in inner, context))
    return found


def upward_imports(package: Path = PACKAGE) -> list[str]:
    layers = declared_layers()
    units = {unit_of(p, package) for p in package.rglob("*.py")} - {"__init__"}
    assert not units - set(layers), f"units docs/architecture.md does not place: {sorted(units - set(layers))}"
    return [f"{p.relative_to(package)}:{line}: {unit_of(p, package)} (layer {layers[unit_of(p, package)]}) "
            f"imports {target} (layer {layers[target]})"
            for p, line, target, _, _ in imports(package)
            if unit_of(p, package) != "__init__" and layers[target] > layers[unit_of(p, package)]]


def cycle_between_units(package: Path = PACKAGE) -> list[str]:
    """The units of one import cycle ([] where there is none)."""
    edges: dict[str, set[str]] = {}
    for p, _, target, _, _ in imports(package):
        if target != unit_of(p, package):
            edges.setdefault(unit_of(p, package), set()).add(target)
    done: set[str] = set()

    def visit(unit: str, stack: list[str]) -> list[str]:
        if unit in stack:
            return stack[stack.index(unit):] + [unit]
        if unit in done:
            return []
        for nxt in sorted(edges.get(unit, ())):
            found = visit(nxt, stack + [unit])
            if found:
                return found
        done.add(unit)
        return []

    for unit in sorted(edges):
        found = visit(unit, [])
        if found:
            return found
    return []


def test_a_short_root():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= MAX_ROOT_MODULES, modules


"""The structure of server/parakern against the layers of docs/architecture.md: imports go down,
never up; no import cycle between top-level units (imports inside functions counted); an import
inside a function says why it is deferred; few of them."""
from __future__ import annotations

import shutil

from unit.test_layers import (
    MAX_INNER_SHARE,
    PACKAGE,
    ROOT,
    cycle_between_units,
    declared_layers,
    imports,
    upward_imports,
)


def test_every_unit_has_a_layer_and_no_import_goes_up():
    upward = upward_imports()
    assert not upward, "\n".join(upward)


def test_no_import_cycle_between_units():
    cycle = cycle_between_units()
    assert not cycle, " -> ".join(cycle)


def test_imports_inside_functions_are_few_and_say_why():
    found = imports()
    lines = {(p, line): (inner, context) for p, line, _, inner, context in found}
    inner = [(p, line, context) for (p, line), (is_inner, context) in lines.items() if is_inner]
    unexplained = [f"{p.relative_to(ROOT)}:{line}" for p, line, context in inner if "deferred:" not in context]
    assert not unexplained, "imports inside functions without a `# deferred: why` comment: " + ", ".join(unexplained)
    assert len(inner) <= MAX_INNER_SHARE * len(lines), f"{len(inner)} of {len(lines)} internal imports in functions"


def test_the_layer_test_sees_an_upward_import(tmp_path):
    """The checks above could not pass by reading nothing: in a copy of the package, an import
    planted in the lowest layer that reaches the commands is found."""
    assert len(imports()) > 400 and len(declared_layers()) >= 20
    copy = tmp_path / "parakern"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert upward_imports(copy) == []
    (copy / "source" / "planted.py").write_text("def f():\n    from parakern.commands import cli\n    return cli\n")
    assert upward_imports(copy) == ["source/planted.py:2: source (layer 1) imports commands (layer 10)"]
    (copy / "source" / "planted.py").write_text("from parakern.symbolic import exact\n")
    (copy / "symbolic" / "planted.py").write_text("from parakern.source import text\n")
    assert cycle_between_units(copy) == ["source", "symbolic", "source"]

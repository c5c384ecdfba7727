"""C integer constant expressions of pycparser nodes, computed as C computes them (`/` and
`%` truncate): the size of an array at a parameter point, the value of an enumerator."""
from __future__ import annotations

from pycparser import c_ast, c_parser


def evaluate(node, values: dict, defines: "dict[str, str] | None" = None, depth: int = 0) -> int:
    """A dimension expression (pycparser) at integer values of the names, with C's integer
    division; #define names are expanded. ValueError when it is not an integer expression."""
    defines = defines or {}
    if depth > 32:
        raise ValueError("#define nested too deeply")
    if node is None:
        raise ValueError("an array dimension is missing")
    if isinstance(node, c_ast.Constant):
        text = node.value.rstrip("uUlL")
        if not node.type.endswith("int"):
            raise ValueError(f"dimension {node.value} is not an integer")
        if text.lower().startswith("0x"):
            return int(text, 16)
        return int(text, 8) if len(text) > 1 and text.startswith("0") else int(text)
    if isinstance(node, c_ast.ID):
        if node.name in values:
            return int(values[node.name])
        if node.name in defines:
            return evaluate(_expression(defines[node.name]), values, defines, depth + 1)
        raise ValueError(f"'{node.name}' has no value")
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        value = evaluate(node.expr, values, defines, depth)
        return -value if node.op == "-" else value
    if isinstance(node, c_ast.Cast):
        return evaluate(node.expr, values, defines, depth)
    if isinstance(node, c_ast.BinaryOp):
        a = evaluate(node.left, values, defines, depth)
        b = evaluate(node.right, values, defines, depth)
        if node.op == "+":
            return a + b
        if node.op == "-":
            return a - b
        if node.op == "*":
            return a * b
        if node.op in ("/", "%"):
            if b == 0:
                raise ValueError("division by zero in an array dimension")
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncates
            return q if node.op == "/" else a - b * q
        if node.op == "<<":
            return a << b
        if node.op == ">>":
            return a >> b
    if isinstance(node, c_ast.TernaryOp):
        cond = evaluate(node.cond, values, defines, depth)
        return evaluate(node.iftrue if cond else node.iffalse, values, defines, depth)
    raise ValueError("unsupported expression in an array dimension")


def _expression(text: str):
    ast = c_parser.CParser().parse(f"int __pk_dim = ({text});")
    return ast.ext[0].init

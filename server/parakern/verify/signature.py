"""The enclosing function of a schedule as ctypes sees it: its arguments, in order.

The frontend's model keeps only what the schedule uses; calling the function
needs all of its arguments (jacobi's time-step count T too) and the size of
every array argument at a parameter point.
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from parakern.frontend.ctypes import file_typedefs, symbol_from_decl
from parakern.frontend.parse import parse
from parakern.frontend.preprocess import prepare
from parakern.frontend.spans import TokenIndex
from parakern.source.text import normalize_newlines

SCALARS = {"char", "unsigned char", "short", "unsigned short", "int", "unsigned", "long",
           "unsigned long", "long long", "unsigned long long", "float", "double"}
FLOATING = {"float", "double"}


class SignatureError(ValueError):
    """The function cannot be called from the verifier (a struct argument, ...)."""


@dataclass(frozen=True)
class Argument:
    name: str
    ctype: str                 # scalar type, or element type of an array / pointer
    kind: str                  # "scalar", "array" (declared dimensions) or "pointer"
    dims: tuple = ()           # pycparser expressions of the dimensions, outer first
    const: bool = False

    @property
    def is_array(self) -> bool:
        return self.kind != "scalar"


@dataclass(frozen=True)
class Signature:
    function: str
    returns: str
    arguments: tuple[Argument, ...]
    defines: tuple[tuple[str, str], ...]   # #define NAME value of the file, for dimensions

    def argument(self, name: str) -> "Argument | None":
        return next((a for a in self.arguments if a.name == name), None)


def signature(text: str, file: str, function: str) -> Signature:
    """The arguments of `function` in the file `text`; SignatureError when it cannot be called."""
    prepared = prepare(normalize_newlines(text), file)
    ast, _ = parse(prepared)
    if ast is None:
        raise SignatureError(f"cannot parse {file}")
    index = TokenIndex(prepared.tokens, file)
    typedefs = file_typedefs(ast)
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef) and ext.decl.name == function:
            return _signature(ext, index, prepared, typedefs)
    raise SignatureError(f"function '{function}' not found in {file}")


def _signature(func: c_ast.FuncDef, index: TokenIndex, prepared, typedefs: dict) -> Signature:
    ftype = func.decl.type
    returns = " ".join(getattr(getattr(ftype.type, "type", None), "names", None) or ["?"])
    arguments = []
    params = ftype.args.params if getattr(ftype, "args", None) is not None else ()
    for param in params:
        if isinstance(param, c_ast.Typename) and " ".join(getattr(param.type.type, "names", [])) == "void":
            continue  # f(void)
        if not isinstance(param, c_ast.Decl) or not param.name:
            raise SignatureError(f"{func.decl.name}: an unnamed or unsupported parameter")
        symbol = symbol_from_decl(param, index.node_span(param), typedefs)
        if symbol is None or symbol.ctype not in SCALARS:
            raise SignatureError(f"{func.decl.name}: parameter '{param.name}' has a type the verifier "
                                 "cannot pass (only scalars, arrays and pointers of scalars)")
        const = "const" in (getattr(_innermost(param.type), "quals", None) or ())
        if symbol.is_pointer:
            arguments.append(Argument(param.name, symbol.ctype, "pointer", (), const))
        elif symbol.is_array:
            arguments.append(Argument(param.name, symbol.ctype, "array", tuple(symbol.dims), const))
        else:
            arguments.append(Argument(param.name, symbol.ctype, "scalar"))
    defines = tuple((d.name, d.value) for d in prepared.defines if d.value)
    return Signature(func.decl.name, returns, tuple(arguments), defines)


def _innermost(node):
    while isinstance(node, (c_ast.ArrayDecl, c_ast.PtrDecl)):
        node = node.type
    return node

"""C declarations seen from a meta_schedule: scalar types, arrays and their dimensions."""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from parakern.source.diagnostics import Span

# Typedef names from standard headers, by the scalar type they stand for (LP64).
STANDARD_TYPEDEFS = {
    "size_t": "unsigned long", "ssize_t": "long", "ptrdiff_t": "long", "intptr_t": "long",
    "uintptr_t": "unsigned long", "int8_t": "char", "int16_t": "short", "int32_t": "int",
    "int64_t": "long", "uint8_t": "unsigned char", "uint16_t": "unsigned short",
    "uint32_t": "unsigned", "uint64_t": "unsigned long", "bool": "int",
}

def normalize(names: list[str], typedefs: "dict[str, str] | None" = None) -> str:
    """['unsigned', 'int'] -> 'unsigned', ['long', 'long', 'int'] -> 'long long', ...

    `typedefs` maps the file's own typedef names to the scalar they stand for.
    """
    if len(names) == 1 and typedefs and names[0] in typedefs:
        return typedefs[names[0]]
    if len(names) == 1 and names[0] in STANDARD_TYPEDEFS:
        return STANDARD_TYPEDEFS[names[0]]
    words = [w for w in names if w != "signed"] or ["int"]
    unsigned = "unsigned" in words
    words = [w for w in words if w != "unsigned"]
    if words.count("long") >= 2:
        base = "long long"
    elif "long" in words and "double" in words:
        base = "long double"
    elif "long" in words:
        base = "long"
    elif "short" in words:
        base = "short"
    elif "char" in words:
        base = "char"
    elif words == ["int"] or not words:
        base = "int"
    else:
        base = " ".join(w for w in words if w != "int") or "int"
    if unsigned:
        return "unsigned" if base == "int" else f"unsigned {base}"
    return base


def scalar_type_name(type_node, typedefs: "dict[str, str] | None" = None) -> str:
    """Scalar type of a TypeDecl / Typename, '' when it is not a plain scalar."""
    node = type_node
    if isinstance(node, c_ast.Typename):
        node = node.type
    if isinstance(node, c_ast.TypeDecl) and isinstance(node.type, c_ast.IdentifierType):
        return normalize(node.type.names, typedefs)
    return ""


@dataclass(frozen=True)
class ScalarInfo:
    name: str
    ctype: str
    span: Span


@dataclass(frozen=True)
class Symbol:
    """A name declared outside the schedule: scalar, array or pointer."""
    name: str
    ctype: str                # element type for arrays and pointers
    span: Span
    is_array: bool = False
    is_pointer: bool = False
    dims: tuple = ()          # pycparser dim expressions (None where empty), outer first
    init: object = None       # pycparser initializer of a scalar, if any
    node: object = None       # the pycparser Decl

    @property
    def is_const(self) -> bool:
        return bool(self.node is not None and "const" in (getattr(self.node, "quals", None) or ()))

    @property
    def rank(self) -> int:
        return 1 if self.is_pointer else len(self.dims)


def element_type_name(type_node, typedefs: "dict[str, str] | None" = None) -> str:
    """The scalar type of an array's elements: a bool is one byte there (as a scalar, its
    value passes as an int)."""
    names = getattr(getattr(type_node, "type", None), "names", None)
    if names in (["bool"], ["_Bool"]):
        return "_Bool"
    return scalar_type_name(type_node, typedefs)


def symbol_from_decl(decl: c_ast.Decl, span: Span, typedefs: "dict[str, str] | None" = None) -> "Symbol | None":
    """Describes a declaration; None for functions, structs and the like."""
    node = decl.type
    dims = []
    while isinstance(node, c_ast.ArrayDecl):
        dims.append(node.dim)
        node = node.type
    if dims:
        if isinstance(node, c_ast.PtrDecl):
            return Symbol(decl.name, "pointer", span, is_array=True, dims=tuple(dims), node=decl)
        if dims == [None]:   # `float a[]`: as a parameter, a pointer
            return Symbol(decl.name, element_type_name(node, typedefs), span, is_array=True, is_pointer=True,
                          node=decl)
        return Symbol(decl.name, element_type_name(node, typedefs), span, is_array=True, dims=tuple(dims),
                      node=decl)
    if isinstance(node, c_ast.PtrDecl):
        inner = node.type
        if isinstance(inner, c_ast.TypeDecl):
            return Symbol(decl.name, element_type_name(inner, typedefs), span, is_array=True, is_pointer=True,
                          node=decl)
        rows = []
        while isinstance(inner, c_ast.ArrayDecl):
            rows.append(inner.dim)
            inner = inner.type
        if rows and isinstance(inner, c_ast.TypeDecl):   # `float (*a)[n]`, a pointer to rows: `float a[][n]`
            return Symbol(decl.name, element_type_name(inner, typedefs), span, is_array=True,
                          dims=(None, *rows), node=decl)
        return Symbol(decl.name, "pointer to pointer", span, is_array=True, is_pointer=True, node=decl)
    if isinstance(node, c_ast.TypeDecl):
        return Symbol(decl.name, scalar_type_name(node, typedefs), span, init=decl.init, node=decl)
    return None


def file_typedefs(ast) -> dict[str, str]:
    """`typedef float real;` of a file (pycparser's FileAST) -> {"real": "float"}: the scalar
    types its typedefs name, each read with the ones before it."""
    from pycparser import c_ast
    result: dict[str, str] = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Typedef):
            name = scalar_type_name(ext.type, result)
            if name:
                result[ext.name] = name
    return result

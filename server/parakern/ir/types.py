"""C scalar types as LLVM types, and C's conversions between them."""
from __future__ import annotations

from llvmlite import ir

from parakern import syntax

GLOBAL = 1  # NVPTX address space of global memory
SHARED = 3  # NVPTX address space of shared memory (for staging)

I1 = ir.IntType(1)
I32 = ir.IntType(32)
I64 = ir.IntType(64)

_LLVM = {"int": I32, "unsigned": I32, "long": I64, "unsigned long": I64, "long long": I64,
         "unsigned long long": I64, "float": ir.FloatType(), "double": ir.DoubleType()}


class LoweringError(Exception):
    """The schedule uses something the lowering cannot express; `span` says where."""

    def __init__(self, message: str, span=None):
        super().__init__(message if span is None else f"{span.file}:{span.line}:{span.col}: {message}")
        self.message = message
        self.span = span


def llvm_type(ctype: str, span=None) -> ir.Type:
    try:
        return _LLVM[ctype]
    except KeyError:
        raise LoweringError(f"type '{ctype}' is not supported in a kernel", span) from None


def is_float(ctype: str) -> bool:
    return ctype in syntax.FLOAT_TYPES


def width(ctype: str) -> int:
    return 8 * syntax.TYPE_SIZES[ctype]


def convert(builder: ir.IRBuilder, value: ir.Value, src: str, dst: str) -> ir.Value:
    """C conversion of `value` from type `src` to type `dst`."""
    if src == dst:
        return value
    target = llvm_type(dst)
    if is_float(src) and is_float(dst):
        return builder.fpext(value, target) if width(dst) > width(src) else builder.fptrunc(value, target)
    if is_float(src):
        return builder.fptoui(value, target) if syntax.is_unsigned(dst) else builder.fptosi(value, target)
    if is_float(dst):
        return builder.uitofp(value, target) if syntax.is_unsigned(src) else builder.sitofp(value, target)
    if width(dst) == width(src):
        return value  # same bits, signedness lives in the operations
    if width(dst) < width(src):
        return builder.trunc(value, target)
    # Widening follows the signedness of the source, as C does.
    return builder.zext(value, target) if syntax.is_unsigned(src) else builder.sext(value, target)


def truth(builder: ir.IRBuilder, value: ir.Value, ctype: str) -> ir.Value:
    """C truth value (`value != 0`) as an i1."""
    if is_float(ctype):
        return builder.fcmp_unordered("!=", value, ir.Constant(value.type, 0.0))
    return builder.icmp_unsigned("!=", value, ir.Constant(value.type, 0))


def constant(ctype: str, value) -> ir.Constant:
    if is_float(ctype):
        return ir.Constant(llvm_type(ctype), float(value))
    bits = width(ctype)
    wrapped = int(value) & ((1 << bits) - 1)  # C's modular conversion, printed signed
    if wrapped >= 1 << (bits - 1):
        wrapped -= 1 << bits
    return ir.Constant(llvm_type(ctype), wrapped)

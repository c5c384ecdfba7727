"""Expressions of the C subset, and the model's sympy integer expressions, as LLVM IR.

`ExprLowerer` holds the state of one kernel function being built: scopes of
named values, the array arguments, and two builders — `builder` at the
current point and `entry` at the end of the entry block, where allocas and
parameter-only values (derived scalars, array extents) go so that they
dominate every use.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy
from llvmlite import ir

from parakern import syntax
from parakern.symbolic.cinteger import cdiv, cmod
from parakern.ir.memory import Memory
from parakern.ir.types import (I1, LoweringError, constant, convert, is_float, llvm_type,
                               truth)
from parakern.model import Array, Schedule


@dataclass
class Slot:
    """A named scalar: an SSA value (parameter, thread index) or an alloca (local)."""
    ctype: str
    value: "ir.Value | None" = None
    pointer: "ir.Value | None" = None


# C math functions with a direct LLVM intrinsic (NVPTX selects them to one instruction).
_FLOAT_INTRINSICS = {"sqrt": ("llvm.sqrt", 1), "fabs": ("llvm.fabs", 1), "floor": ("llvm.floor", 1),
                     "ceil": ("llvm.ceil", 1), "fmin": ("llvm.minnum", 2),
                     "fmax": ("llvm.maxnum", 2), "fma": ("llvm.fma", 3)}
_MATH_BASES = frozenset(syntax.MATH_ARITY)   # the others: libdevice's __nv_<name>
_SUFFIX = {"float": "f32", "double": "f64"}

_INT_OPS_SIGNED = {"+": "add", "-": "sub", "*": "mul", "/": "sdiv", "%": "srem", "<<": "shl",
                   ">>": "ashr", "&": "and_", "|": "or_", "^": "xor"}
_INT_OPS_UNSIGNED = dict(_INT_OPS_SIGNED, **{"/": "udiv", "%": "urem", ">>": "lshr"})
_FLOAT_OPS = {"+": "fadd", "-": "fsub", "*": "fmul", "/": "fdiv"}
_NO_SIGNED_WRAP = frozenset({"add", "sub", "mul"})  # signed overflow is undefined in C, as clang marks it


def _math_base(name: str) -> str:
    """sqrtf -> sqrt: the float variants lower like the double ones, at their own type."""
    return syntax.math_double_name(name)


class ExprLowerer:
    def __init__(self, module: ir.Module, function: ir.Function, schedule: Schedule,
                 memory: Memory, arrays: dict[str, ir.Value]):
        self.module = module
        self.function = function
        self.schedule = schedule
        self.memory = memory
        self.arrays = arrays
        self.builder = ir.IRBuilder()
        self.entry = ir.IRBuilder()
        self.scopes: list[dict[str, Slot]] = [{}]
        self._derived = {d.name: d for d in schedule.derived}

    # ------------------------------------------------------------ names

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()

    def bind(self, name: str, value: ir.Value, ctype: str) -> None:
        self.scopes[-1][name] = Slot(ctype, value=value)

    def declare(self, name: str, ctype: str, span=None) -> Slot:
        slot = Slot(ctype, pointer=self.entry.alloca(llvm_type(ctype, span), name=name))
        self.scopes[-1][name] = slot
        return slot

    def lookup(self, name: str, span=None) -> Slot:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self._derived:  # defined from parameters: computed once, at entry
            d = self._derived[name]
            self.scopes[0][name] = Slot(d.ctype, value=self.sym_value(d.value, d.ctype, self.entry))
            return self.scopes[0][name]
        raise LoweringError(f"'{name}' is not a parameter, loop variable or local of the schedule", span)

    def read(self, name: str, ctype: str, span=None, builder=None) -> ir.Value:
        builder = builder or self.builder
        slot = self.lookup(name, span)
        value = slot.value if slot.pointer is None else builder.load(slot.pointer, typ=llvm_type(slot.ctype))
        return convert(builder, value, slot.ctype, ctype)

    def block(self, name: str) -> ir.Block:
        return self.function.append_basic_block(name)

    # ------------------------------------------------------------ memory

    def element_pointer(self, node: syntax.Index) -> ir.Value:
        array = self._array(node.array, node.array_span)
        if len(node.indices) != array.rank:
            raise LoweringError(f"'{array.name}' takes {array.rank} subscript(s), got {len(node.indices)}",
                                node.span)
        subscripts = []
        for index in node.indices:
            if is_float(index.ctype):
                raise LoweringError("array subscript is not an integer", index.span)
            subscripts.append(convert(self.builder, self.value(index), index.ctype, "long"))
        return self.memory.address(self, array, tuple(subscripts))

    def linear_index(self, array: Array, subscripts: tuple[ir.Value, ...]) -> ir.Value:
        """Row-major offset of array[subscripts] in elements (i64)."""
        if len(subscripts) == 1:
            return subscripts[0]
        if len(array.dims) != len(subscripts):
            raise LoweringError(f"the extents of '{array.name}' are not known", array.span)
        offset = subscripts[0]
        for dim, sub in zip(array.dims[1:], subscripts[1:]):
            extent = self.sym_value(dim, "long", self.entry)
            offset = self._int_op(self.builder, "*", offset, extent, "long")
            offset = self._int_op(self.builder, "+", offset, sub, "long")
        return offset

    def global_pointer(self, array: Array, linear: ir.Value) -> ir.Value:
        return self.builder.gep(self.arrays[array.name], [linear], inbounds=True,
                                source_etype=llvm_type(array.ctype))

    def _array(self, name: str, span) -> Array:
        for array in self.schedule.arrays:
            if array.name == name:
                return array
        raise LoweringError(f"'{name}' is not an array of the schedule", span)

    # ------------------------------------------------------------ expressions

    def value(self, e) -> ir.Value:
        """The value of expression `e`, of LLVM type llvm_type(e.ctype)."""
        b = self.builder
        if isinstance(e, syntax.Const):
            return constant(e.ctype, e.value)
        if isinstance(e, syntax.Var):
            return self.read(e.name, e.ctype, e.span)
        if isinstance(e, syntax.Index):
            load = getattr(self.memory, "load", None)   # staging's: a lane of a vector read
            pointer, ltype, align = self.element_pointer(e), llvm_type(e.ctype, e.span), syntax.TYPE_SIZES[e.ctype]
            return b.load(pointer, typ=ltype, align=align) if load is None else load(self, pointer, ltype, align)
        if isinstance(e, syntax.Cast):
            return convert(b, self.value(e.operand), e.operand.ctype, e.ctype)
        if isinstance(e, syntax.Unary):
            return self._unary(e)
        if isinstance(e, syntax.Binary):
            if e.op in syntax.COMPARISONS or e.op in syntax.LOGICAL:
                return b.zext(self.cond(e), llvm_type(e.ctype))
            return self.arith(e.op, self.value(e.left), e.left.ctype, self.value(e.right),
                              e.right.ctype, e.ctype, e.span)
        if isinstance(e, syntax.Ternary):
            return self._ternary(e)
        if isinstance(e, syntax.Call):
            return self._call(e)
        raise LoweringError(f"cannot lower expression {type(e).__name__}", getattr(e, "span", None))

    def cond(self, e) -> ir.Value:
        """C truth value of `e` as an i1; && and || short-circuit."""
        b = self.builder
        if isinstance(e, syntax.Binary) and e.op in syntax.COMPARISONS:
            common = syntax.arithmetic_result(e.left.ctype, e.right.ctype)
            left = convert(b, self.value(e.left), e.left.ctype, common)
            right = convert(b, self.value(e.right), e.right.ctype, common)
            if is_float(common):  # C: every comparison with NaN is false except !=
                return (b.fcmp_unordered if e.op == "!=" else b.fcmp_ordered)(e.op, left, right)
            compare = b.icmp_unsigned if syntax.is_unsigned(common) else b.icmp_signed
            return compare(e.op, left, right)
        if isinstance(e, syntax.Binary) and e.op in syntax.LOGICAL:
            left = self.cond(e.left)
            start = b.block
            rhs, end = self.block("rhs"), self.block("logic.end")
            if e.op == "&&":
                b.cbranch(left, rhs, end)
            else:
                b.cbranch(left, end, rhs)
            b.position_at_end(rhs)
            right = self.cond(e.right)
            rhs_end = b.block
            b.branch(end)
            b.position_at_end(end)
            phi = b.phi(I1)
            phi.add_incoming(ir.Constant(I1, e.op == "||"), start)
            phi.add_incoming(right, rhs_end)
            return phi
        if isinstance(e, syntax.Unary) and e.op == "!":
            return b.not_(self.cond(e.operand))
        return truth(b, self.value(e), e.ctype)

    def arith(self, op: str, left, left_type: str, right, right_type: str, ctype: str, span=None):
        """left op right computed in `ctype` (the type the syntax node carries)."""
        b = self.builder
        left = convert(b, left, left_type, ctype)
        right = convert(b, right, right_type, ctype)  # shifts: right at the width of left, as LLVM needs
        if is_float(ctype):
            if op not in _FLOAT_OPS:
                raise LoweringError(f"operator '{op}' needs integer operands", span)
            return getattr(b, _FLOAT_OPS[op])(left, right)
        if op not in _INT_OPS_SIGNED:
            raise LoweringError(f"operator '{op}' is not supported", span)
        return self._int_op(b, op, left, right, ctype)

    @staticmethod
    def _int_op(b: ir.IRBuilder, op: str, left, right, ctype: str):
        table = _INT_OPS_UNSIGNED if syntax.is_unsigned(ctype) else _INT_OPS_SIGNED
        result = getattr(b, table[op])(left, right)
        if table[op] in _NO_SIGNED_WRAP and not syntax.is_unsigned(ctype):
            result.flags.append("nsw")
        return result

    def _unary(self, e: syntax.Unary) -> ir.Value:
        b = self.builder
        if e.op == "!":
            return b.zext(b.not_(self.cond(e.operand)), llvm_type(e.ctype))
        operand = convert(b, self.value(e.operand), e.operand.ctype, e.ctype)
        if e.op == "+":
            return operand
        if e.op == "-":
            if is_float(e.ctype):
                return b.fneg(operand)
            return self._int_op(b, "-", constant(e.ctype, 0), operand, e.ctype)
        if e.op == "~" and not is_float(e.ctype):
            return b.not_(operand)
        raise LoweringError(f"unary operator '{e.op}' is not supported on {e.ctype}", e.span)

    def _ternary(self, e: syntax.Ternary) -> ir.Value:
        # Branches, not a select: C evaluates only one arm (it may read out of bounds).
        b = self.builder
        test = self.cond(e.cond)
        then_bb, else_bb, end = self.block("cond.then"), self.block("cond.else"), self.block("cond.end")
        b.cbranch(test, then_bb, else_bb)
        b.position_at_end(then_bb)
        then_value = convert(b, self.value(e.then), e.then.ctype, e.ctype)
        then_end = b.block
        b.branch(end)
        b.position_at_end(else_bb)
        else_value = convert(b, self.value(e.other), e.other.ctype, e.ctype)
        else_end = b.block
        b.branch(end)
        b.position_at_end(end)
        phi = b.phi(llvm_type(e.ctype))
        phi.add_incoming(then_value, then_end)
        phi.add_incoming(else_value, else_end)
        return phi

    def _call(self, e: syntax.Call) -> ir.Value:
        b = self.builder
        name = _math_base(e.func)
        args = [convert(b, self.value(a), a.ctype, e.ctype) for a in e.args]
        if name in ("abs", "min", "max") and not is_float(e.ctype):
            return self._int_call(name, args, e)
        if name == "abs":
            name = "fabs"
        if name in ("min", "max"):
            name = "f" + name
        if name in _FLOAT_INTRINSICS and is_float(e.ctype):
            intrinsic, arity = _FLOAT_INTRINSICS[name]
            if len(args) != arity:
                raise LoweringError(f"'{e.func}' takes {arity} argument(s)", e.span)
            return b.call(self.intrinsic(f"{intrinsic}.{_SUFFIX[e.ctype]}", e.ctype, arity), args)
        if name in _MATH_BASES and is_float(e.ctype):
            # No intrinsic: libdevice's __nv_expf on the GPU (linked in passes.optimize),
            # the C library's expf when the kernel runs on the host.
            suffix = "f" if e.ctype == "float" else ""
            callee = f"{name}{suffix}" if getattr(self, "host", False) else f"__nv_{name}{suffix}"
            arity = syntax.MATH_ARITY[name]
            if len(args) != arity:
                raise LoweringError(f"'{e.func}' takes {arity} argument(s)", e.span)
            return b.call(self.intrinsic(callee, e.ctype, arity), args)
        raise LoweringError(f"math function '{e.func}' is not supported in kernels", e.span)

    def _int_call(self, name: str, args, e: syntax.Call) -> ir.Value:
        b = self.builder
        expected = 1 if name == "abs" else 2
        if len(args) != expected:
            raise LoweringError(f"'{e.func}' takes {expected} argument(s)", e.span)
        signed = not syntax.is_unsigned(e.ctype)
        compare = b.icmp_signed if signed else b.icmp_unsigned
        if name == "abs":
            if not signed:
                return args[0]
            negative = compare("<", args[0], constant(e.ctype, 0))
            return b.select(negative, self._int_op(b, "-", constant(e.ctype, 0), args[0], e.ctype), args[0])
        return b.select(compare("<" if name == "min" else ">", args[0], args[1]), args[0], args[1])

    def intrinsic(self, name: str, ctype: str, arity: int) -> ir.Function:
        if name in self.module.globals:
            return self.module.globals[name]
        t = llvm_type(ctype)
        return ir.Function(self.module, ir.FunctionType(t, [t] * arity), name=name)

    # ------------------------------------------------------------ sympy

    def sym_value(self, expr, ctype: str, builder: "ir.IRBuilder | None" = None) -> ir.Value:
        """An integer sympy expression of the model with C integer semantics, in `ctype`.

        floor(a/b) is C division and Mod is C %: they agree on the non-negative
        values that hypothesis (H1) of the paper assumes; cdiv / cmod are C's / and %.
        """
        b = builder or self.builder
        expr = sympy.sympify(expr)
        if expr.is_Integer:
            return constant(ctype, int(expr))
        if expr.is_Symbol:
            return self.read(expr.name, ctype, builder=b)
        if isinstance(expr, sympy.Add):
            terms = [self.sym_value(t, ctype, b) for t in expr.as_ordered_terms()]
            return self._fold(b, "+", terms, ctype)
        if isinstance(expr, sympy.Mul):
            num, den = sympy.fraction(expr)
            if den != 1:
                raise LoweringError(f"'{expr}' is not an integer expression")
            return self._fold(b, "*", [self.sym_value(f, ctype, b) for f in expr.args], ctype)
        if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and expr.exp > 0:
            base = self.sym_value(expr.base, ctype, b)
            return self._fold(b, "*", [base] * int(expr.exp), ctype)
        if isinstance(expr, (sympy.floor, sympy.ceiling)):
            num, den = sympy.fraction(sympy.together(expr.args[0]))
            n, d = self.sym_value(num, ctype, b), self.sym_value(den, ctype, b)
            if isinstance(expr, sympy.ceiling):  # (n + d - 1) / d for n >= 0, d > 0
                n = self._fold(b, "+", [n, d, constant(ctype, -1)], ctype)
            return self._int_op(b, "/", n, d, ctype)
        if isinstance(expr, (sympy.Mod, cdiv, cmod)):   # C's / and % (LLVM's sdiv / srem truncate too)
            op = "/" if isinstance(expr, cdiv) else "%"
            return self._int_op(b, op, self.sym_value(expr.args[0], ctype, b),
                                self.sym_value(expr.args[1], ctype, b), ctype)
        if isinstance(expr, (sympy.Min, sympy.Max)):
            args = [self.sym_value(a, ctype, b) for a in expr.args]
            op = "<" if isinstance(expr, sympy.Min) else ">"
            compare = b.icmp_unsigned if syntax.is_unsigned(ctype) else b.icmp_signed
            result = args[0]
            for a in args[1:]:
                result = b.select(compare(op, result, a), result, a)
            return result
        if isinstance(expr, sympy.Piecewise):
            result = None
            for value, condition in reversed(expr.args):
                v = self.sym_value(value, ctype, b)
                result = v if result is None else b.select(self.sym_condition(condition, ctype, b), v, result)
            return result
        raise LoweringError(f"cannot lower '{expr}' as a C integer expression")

    def sym_condition(self, cond, ctype: str, b: ir.IRBuilder) -> ir.Value:
        if cond is sympy.true:
            return ir.Constant(I1, 1)
        if cond is sympy.false:
            return ir.Constant(I1, 0)
        if isinstance(cond, sympy.And):
            return self._fold_logic(b.and_, [self.sym_condition(c, ctype, b) for c in cond.args])
        if isinstance(cond, sympy.Or):
            return self._fold_logic(b.or_, [self.sym_condition(c, ctype, b) for c in cond.args])
        if isinstance(cond, sympy.Not):
            return b.not_(self.sym_condition(cond.args[0], ctype, b))
        if isinstance(cond, sympy.core.relational.Relational):
            compare = b.icmp_unsigned if syntax.is_unsigned(ctype) else b.icmp_signed
            return compare(cond.rel_op, self.sym_value(cond.lhs, ctype, b), self.sym_value(cond.rhs, ctype, b))
        raise LoweringError(f"cannot lower condition '{cond}'")

    @staticmethod
    def _fold_logic(op, values):
        result = values[0]
        for v in values[1:]:
            result = op(result, v)
        return result

    def _fold(self, b, op, values, ctype):
        result = values[0]
        for v in values[1:]:
            result = self._int_op(b, op, result, v, ctype)
        return result

"""Where array elements live: the hook through which lowering addresses memory.

`lower` asks its `Memory` for the address of every array element it reads
or writes, and calls it around each execution of the per-thread body (inside
the serial loops between the grid and block levels, where a staged tile is
refilled). `GlobalMemory` keeps every array in global memory; `SharedMemory`
(ir/staged_copies.py) stages the arrays a variant caches, as analysis/staging.py
plans it.

Besides the four required methods, a memory may shape the function
(`signature`: return type and trailing arguments, e.g. the host's scratch
buffer), do its own stores (`store`, e.g. writing through to global memory)
and end the function (`epilogue`). `lower` falls back to GlobalMemory's
versions of these for an object that lacks them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from llvmlite import ir

from parakern.model import Array

if TYPE_CHECKING:
    from parakern.ir.expr import ExprLowerer


class Memory(Protocol):
    def prologue(self, fn: "ExprLowerer") -> None:
        """Once per thread, after the arguments and thread indices are bound."""

    def before_body(self, fn: "ExprLowerer") -> None:
        """Before each execution of the per-thread body (e.g. fill a tile, then barrier)."""

    def after_body(self, fn: "ExprLowerer") -> None:
        """After each execution of the per-thread body (e.g. barrier, write a tile back)."""

    def address(self, fn: "ExprLowerer", array: Array, subscripts: tuple[ir.Value, ...]) -> ir.Value:
        """Pointer to array[subscripts...]; subscripts are i64, as C converts them."""


class GlobalMemory:
    """Every array is read and written in global memory, row-major."""

    def signature(self, host: bool) -> tuple[ir.Type, tuple[tuple[str, ir.Type], ...]]:
        """The function's return type and the arguments appended after the others."""
        return ir.VoidType(), ()

    def prologue(self, fn) -> None:
        pass

    def before_body(self, fn) -> None:
        pass

    def after_body(self, fn) -> None:
        pass

    def address(self, fn, array: Array, subscripts: tuple[ir.Value, ...]) -> ir.Value:
        return fn.global_pointer(array, fn.linear_index(array, subscripts))

    def load(self, fn, pointer: ir.Value, ltype: ir.Type, align: int) -> ir.Value:
        """A read of the element at a pointer that `address` returned."""
        return fn.builder.load(pointer, typ=ltype, align=align)

    def store(self, fn, pointer: ir.Value, value: ir.Value, align: int) -> None:
        """An assignment's store to a pointer that `address` returned."""
        fn.builder.store(value, pointer, align=align)

    def epilogue(self, fn) -> None:
        fn.builder.ret_void()

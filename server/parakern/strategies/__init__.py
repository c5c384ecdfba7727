"""Optimization strategies O_i (paper section 3.4): pure maps Kernel -> Kernel.

Each module contributes its entries through `strategies()`; `default_strategies`
puts them in the algorithm's order, the paper's (section 6): (i) register
pressure on the IR, (ii) thread granularity, (iii) CSE, (iv) shared-memory
caching. A module not present yet (the register-pressure levels,
`register_pressure.py`) is skipped, so adding it is adding the file.
"""
from __future__ import annotations

import importlib

from parakern.strategies.base import Strategy

__all__ = ["Strategy", "default_strategies", "by_code"]

_MODULES = ("register_pressure", "granularity", "cse", "cache")


def default_strategies() -> list[Strategy]:
    """Fresh strategy objects, in order; a strategy with several levels appears once per level."""
    result: list[Strategy] = []
    for name in _MODULES:
        qualified = f"{__name__}.{name}"
        try:
            module = importlib.import_module(qualified)
        except ModuleNotFoundError as exc:
            if exc.name == qualified:
                continue
            raise
        result.extend(module.strategies())
    return result


def by_code(code: str) -> Strategy:
    """The first default strategy with decision code `code` ("(2)", "(3b)", "(4b)", ...)."""
    for strategy in default_strategies():
        if strategy.code == code:
            return strategy
    raise KeyError(f"no strategy with code {code}")

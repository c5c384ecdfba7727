"""Symbols, exact arithmetic, C's integer division, printing, and z3-decided constraint systems."""

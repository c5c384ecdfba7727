"""PK043's message in every process alike: which loop variable it named came from a frozenset's
order, which PYTHONHASHSEED moves (a chunk's total, sums[b*B + t], named b in some runs, t in
others)."""
from __future__ import annotations

import os
import subprocess
import sys

CHUNKS = """#include "metafork.h"
void f(int n, int B, int L, int x[n], int sums[n])
{
    int g = n / (B * L);
    meta_schedule {
        meta_for (int b = 0; b < g; b++)
            meta_for (int t = 0; t < B; t++) {
                int acc = 0;
                for (int k = 0; k < L; k++)
                    acc += x[(b * B + t) * L + k];
                sums[b * B + t] = acc;
            }
    }
}
"""

CODE = ("from parakern.frontend import analyze_source\n"
        "from parakern.analysis.invariance import result_changing\n"
        f"s = analyze_source({CHUNKS!r}, 'p.c').schedules[0]\n"
        "print([(c.parameter, c.why) for c in result_changing(s, ('B', 'L'))])")


def test_the_warning_reads_the_same_whatever_the_hash_seed():
    seen = {subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True, timeout=120,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(6)}
    assert len(seen) == 1, seen
    assert "('L'," in seen.pop()

"""PK044: a block level whose extent grows with the data (found by a trial: a 4-level batched
product mapped its column blocks bx to the block, about N threads per block, silently)."""
from __future__ import annotations

from conftest import SAMPLES
from parakern.analysis.data_blocks import data_sized_blocks
from parakern.frontend import analyze_source

BATCHED = """#include "metafork.h"
void bmm(int nb, int M, int N, int K, int BX, double A[nb][M][K], double Bm[nb][K][N], double C[nb][M][N])
{
    int gx = (N + BX - 1) / BX;
    meta_schedule {
        meta_for (int b = 0; b < nb; b++)
            meta_for (int i = 0; i < M; i++)
                meta_for (int bx = 0; bx < gx; bx++)
                    meta_for (int tx = 0; tx < BX; tx++) {
                        int j = bx * BX + tx;
                        if (j < N) {
                            double acc = 0.0;
                            for (int k = 0; k < K; k++)
                                acc += A[b][i][k] * Bm[b][k][j];
                            C[b][i][j] = acc;
                        }
                    }
    }
}
"""


def test_a_block_level_of_data_size_is_named_with_what_to_change():
    (s,) = analyze_source(BATCHED, "bmm.c").schedules
    (d,) = data_sized_blocks(s)
    assert (d.code, d.span.line, d.span.col) == ("PK044", 8, 17)
    assert d.message.startswith("meta_for bx runs in the block (the nest's 4 levels map 2 to the grid and 2 to "
                                "the block), yet its extent gx grows with N (N sizes ")
    assert ", which makes it a data size): a block has BX*gx threads" in d.message
    assert "put meta_for bx in the outer half of the nest" in d.message


def test_no_sample_has_one():
    for path in sorted(SAMPLES.glob("*.c")) + sorted((SAMPLES / "polybench").glob("*.c")):
        for s in analyze_source(path.read_text(), str(path)).schedules:
            assert data_sized_blocks(s) == (), (path, s.id)

"""What an editor may send, without a server: LSP's line breaks (and only those), lone
surrogates, generated regions in CRLF files, after comments that go on, and regions that
lost a marker; user text in generated comments; the worker pool's recycling."""
from __future__ import annotations

import asyncio
import re
import shutil
import subprocess

import pytest

from conftest import SAMPLES
from parakern.frontend import analyze_source
from parakern.frontend.generated import damaged_regions, generated_regions, mask_generated
from parakern.lsp.region_edits import apply_edit, damaged_region_fixes, dispatcher_edit, region_fixes
from parakern.source.text import position_at
from unit.test_text_robustness import SAXPY, _grow, _inserted, _pid


@pytest.mark.parametrize("lost", ["begin", "end"])
def test_a_region_that_lost_a_marker_is_recognised_reported_once_and_replaced(lost):
    text, once, schedule, end, code = _inserted()
    marker = f"// parakern:{lost} {schedule.id}\n"
    damaged = once.replace(marker, "")
    (region,) = generated_regions(damaged)
    assert region.missing == lost and damaged_regions(damaged) == [region]
    # Masked: the generated CUDA never reaches the front-end, the schedule stays.
    result = analyze_source(damaged, "t.c")
    assert [d.code for d in result.diagnostics] == ["PK019"], [d.format() for d in result.diagnostics]
    assert [s.id for s in result.schedules] == [schedule.id]
    assert len(mask_generated(damaged)) == len(damaged)
    # Inserting again replaces the damaged region: one copy, the user's text untouched.
    again = apply_edit(damaged, *dispatcher_edit(damaged, schedule.id, end, code))
    assert again == once
    # The quick fixes: restore the marker, or delete the region.
    (restore, delete) = region_fixes(damaged, region)
    assert apply_edit(damaged, *restore[1:]) == once
    begin, end_marker = f"// parakern:begin {schedule.id}\n", f"// parakern:end {schedule.id}\n"
    inserted = once[once.index(begin):once.index(end_marker) + len(end_marker)]
    assert apply_edit(damaged, *delete[1:]) == once.replace(inserted, "")
    line = position_at(damaged, region.marker[0])[0]
    assert damaged_region_fixes(damaged, (line, 0, line, 0)) == [restore, delete]
    assert damaged_region_fixes(damaged, (0, 0, 0, 0)) == []


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_emitted_cuda_with_a_hostile_path_keeps_its_comments(tmp_path):
    from parakern.codegen import emit, emit_schedule
    from parakern.pipeline import analyze
    path = str(tmp_path / "we*" / "x = 1; int evil" / 'sa"x\\py.c')
    analysis = analyze((SAMPLES / "saxpy.c").read_text(), path)
    for text in (emit(analysis).text, emit_schedule(analysis.results[0])):
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        assert "evil" not in code and "we*" not in code
    # gcc agrees: the CUDA preprocessed as C++ has no trace of the path outside comments.
    cu = tmp_path / "out.cpp"
    cu.write_text(emit(analysis).text)
    done = subprocess.run(["gcc", "-x", "c++", "-E", "-P", "-DPARAKERN_CPU", "-DPARAKERN_LAUNCH(...)=0",
                           str(cu)], capture_output=True, text=True)
    assert "evil" not in done.stdout


@pytest.mark.slow
def test_workers_are_recycled_after_n_jobs_and_past_a_memory_ceiling(monkeypatch):
    from parakern.lsp import jobs

    async def scenario():
        monkeypatch.setenv(jobs.RECYCLE_ENV, "3,30")
        pool = jobs.JobPool(workers=1)
        pool.start()
        try:
            pids = [await pool.run(_pid, None, 120) for _ in range(4)]
            assert pids[0] == pids[1] == pids[2] != pids[3] and pool.recycled == 1
            grown = await pool.run(_grow, 60, 120)
            assert grown == pids[3] and pool.recycled == 2     # grew 60 MB > 30: replaced
            assert await pool.run(_pid, None, 120) != grown
        finally:
            pool.close()

    asyncio.run(scenario())


def test_a_long_stencil_sum_inside_a_schedule_is_analysed():
    """A 300-term sum (a high-order stencil written out: 5 x 5 x 5 points and more) nests 300
    binary operators: PK013 under a limit of 100 before; every stage goes through it now."""
    from parakern.codegen import emit_file
    from parakern.pipeline import analyze
    terms = " + ".join(f"x[i + {k}]" for k in range(300))
    text = SAXPY.replace("y[i] = alpha * x[i] + y[i];", f"y[i] = {terms};")
    result = analyze_source(text, "t.c")
    assert [s.id for s in result.schedules] == ["saxpy:0"] and not result.diagnostics
    code = emit_file(analyze(text, "t.c"))
    assert "x[i + 299]" in code and "__global__ void saxpy_0_case1" in code

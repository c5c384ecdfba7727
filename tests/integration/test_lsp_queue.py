"""The engine's front-end runs and what it keeps, without a server (lsp/parses.py, lsp/engine.py):
a newer version stops the run of the one it replaces, one document's runs never wait for
another's, and the summaries no open document shows are bounded."""
from __future__ import annotations

import asyncio
import time

from conftest import SAMPLES
from parakern.lsp import engine as engine_module
from parakern.lsp.settings import Settings
from unit.test_lsp_queue import PARSE, _QuietClient, _spin


def test_a_newer_version_stops_the_runs_it_replaces_and_no_document_waits_for_another(monkeypatch):
    """Before: one thread ran every document's front end, one whole run per version in turn;
    four quick edits of a large file cost four runs before the last version's diagnostics,
    and a small document opened meanwhile waited behind all of them."""
    real = engine_module.build_snapshot
    finished = []

    def build(file, version, text, settings):
        if file == "large.c":
            _spin(PARSE)
        finished.append((file, version))
        return real(file, version, text, settings)

    monkeypatch.setattr(engine_module, "build_snapshot", build)
    text = (SAMPLES / "saxpy.c").read_text()

    async def scenario():
        engine = engine_module.Engine(_QuietClient(), Settings(case_trees=False))
        try:
            engine.open("file:///large.c", "large.c", 1, text)
            for version in (2, 3, 4):
                await asyncio.sleep(0.3)
                engine.change("file:///large.c", version, text + "\n" * version)
                engine.analyse_now("file:///large.c")              # a save: no debounce
            last = time.perf_counter()
            engine.open("file:///small.c", "small.c", 1, text)
            small = await engine.current_views("file:///small.c")
            small_after = time.perf_counter() - last
            large = await engine.current_views("file:///large.c")
            large_after = time.perf_counter() - last
            return small, small_after, large, large_after, engine.docs["file:///large.c"].snapshot.version
        finally:
            engine.close()

    small, small_after, large, large_after, version = asyncio.run(scenario())
    assert [v.id for v in small] == ["saxpy:0"] and small_after < 0.5 * PARSE, small_after
    assert [v.id for v in large] == ["saxpy:0"] and version == 4
    assert large_after < 1.5 * PARSE, large_after                # one run, not the four queued
    assert [v for f, v in finished if f == "large.c"] == [4]     # the others were stopped

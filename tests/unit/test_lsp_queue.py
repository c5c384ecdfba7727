"""The engine's front-end runs and what it keeps, without a server (lsp/parses.py, lsp/engine.py):
a newer version stops the run of the one it replaces, one document's runs never wait for
another's, and the summaries no open document shows are bounded."""
from __future__ import annotations

import asyncio
import threading
import time

from parakern.lsp import engine as engine_module
from parakern.lsp import parses
from parakern.lsp.settings import Settings
from parakern.lsp.summary import ScheduleSummary

PARSE = 2.0          # seconds one front-end run of the "large" document takes here


class _QuietClient:
    def publish(self, uri, version, diagnostics): pass
    def refresh_lenses(self): pass
    def progress_supported(self): return False
    def show_message(self, kind, text): pass


def _spin(seconds: float) -> int:
    """Pure Python for `seconds` (what the front end is: interruptible at any bytecode)."""
    deadline, turns = time.perf_counter() + seconds, 0
    while time.perf_counter() < deadline:
        turns += 1
    return turns


def test_a_cancelled_run_stops_at_once_and_gives_none():
    async def scenario():
        run = parses.Run("key", _spin, 30.0)
        await asyncio.sleep(0.2)
        started = time.perf_counter()
        run.cancel()
        value = await run.future
        while any(t.name == "parakern-frontend" for t in threading.enumerate()):
            await asyncio.sleep(0.01)
            assert time.perf_counter() - started < 2.0, "the interrupted thread still runs"
        return value, run.cancelled

    assert parses.interruptible()
    assert asyncio.run(scenario()) == (None, True)


def test_a_run_cancelled_as_it_ends_raises_nothing_anywhere():
    """The interruption of a run that was ending must not fire later in its thread (nor in
    another): thousands of runs cancelled at random moments of their end."""
    errors = []
    hook, threading.excepthook = threading.excepthook, lambda args: errors.append(args)

    async def scenario():
        for k in range(1500):
            run = parses.Run(k, sum, range(k % 300))
            await asyncio.sleep(0)
            run.cancel()
            assert await run.future in (None, sum(range(k % 300)))
        last = parses.Run("last", sum, range(10))
        return await last.future

    try:
        assert asyncio.run(scenario()) == 45
        time.sleep(0.2)
    finally:
        threading.excepthook = hook
    assert errors == []


def test_a_free_worker_goes_to_the_analysis_of_the_latest_round_first():
    """The analyses waited first come, first served: a document opened beside a large one got
    its cases after all of the large one's (471 s after its didOpen with a 166 KB file)."""
    from parakern.lsp.jobs import _FreeSlots

    async def scenario():
        free, got = _FreeSlots(), []

        async def wait(name, urgent, order):
            await free.get(urgent, order)
            got.append(name)

        waiting = [("old", False, 1), ("background", None, 0), ("new", False, 3), ("middle", False, 2),
                   ("urgent", True, 0), ("old too", False, 1)]
        tasks = [asyncio.ensure_future(wait(*w)) for w in waiting]
        await asyncio.sleep(0)
        for _ in tasks:
            free.put(object())
            await asyncio.sleep(0)
        return got

    assert asyncio.run(scenario()) == ["urgent", "new", "middle", "old", "old too", "background"]


def test_the_summaries_no_open_document_shows_are_bounded():
    """Every edit of a constant makes a new summary (tens of KB): the engine kept 512 of
    them, about 20 MB over 4 000 edits."""
    engine = engine_module.Engine(_QuietClient(), Settings(case_trees=False))
    try:
        for k in range(600):
            engine._store(f"k{k}", ScheduleSummary(f"k{k}", "f:0", "f", "ok"))
        assert len(engine.cache) == engine_module.CACHE_SIZE <= 64
        assert "k599" in engine.cache and "k0" not in engine.cache      # the least recently stored went
    finally:
        engine.close()


def test_the_server_keeps_nothing_per_notification():
    """pygls kept the future of every notification (and of a command's own handler) in its
    table of requests under way, for good: about 1 KB per edit."""
    import json

    from parakern.lsp.server import server

    class Discard:
        def write(self, data): pass
        def close(self): pass

    protocol = server.protocol

    def send(message: dict) -> None:
        protocol.handle_message(json.loads(json.dumps(message), object_hook=protocol.structure_message))

    async def scenario():
        protocol.set_writer(Discard())
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"processId": None, "capabilities": {}, "initializationOptions": {"caseTrees": False}}})
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uri = "file:///kept.c"
        send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
              "params": {"textDocument": {"uri": uri, "languageId": "c", "version": 1, "text": "int x;"}}})
        for version in range(2, 102):
            send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": f"int x{version};"}]}})
            send({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
        await asyncio.sleep(0.2)
        return len(protocol._request_futures)

    try:
        assert asyncio.run(scenario()) == 0
    finally:
        server.engine.close()


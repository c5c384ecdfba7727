"""How the server ends: through a raw JSON-RPC client (tests/lsp/wire.py, tests/lsp/endings.py),
with a large file's front end and an analysis under way.

Every way an editor ends it (shutdown + exit, exit alone, stdin closed, SIGTERM, SIGKILL, the
editor's process killed, the editor's process gone while its pipe lives on) ends the server
and every process it started (workers, multiprocessing's resource tracker) within 2 s, and
shutdown is answered while a command waits for an analysis.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
from endings import BUSY_OPTIONS, ENDINGS, descendants, end, gone_within, large_text  # noqa: E402
from harness import SAMPLES  # noqa: E402
from wire import Wire, environment  # noqa: E402

pytestmark = pytest.mark.timeout(300)

DEADLINE = 2.0          # seconds: the server and its processes are gone by then
STATUS = {"shutdown+exit": 0, "exit": 1, "stdin closed": 0, "SIGTERM": 143, "SIGKILL": -9}


def test_shutdown_is_answered_while_a_command_waits_for_an_analysis():
    """pygls cancelled the requests under way while iterating their table, which a cancelled
    command's callback changes: shutdown got -32603 'dictionary changed size during iteration'."""
    server = Wire(env=environment(PARAKERN_LSP_TEST_HOOKS="1"), options=BUSY_OPTIONS)
    try:
        uri = (SAMPLES / "lifecycle-command.c").as_uri()
        server.open(uri, (SAMPLES / "saxpy.c").read_text())
        server.wait_published(uri, 1)
        command = server.ask("workspace/executeCommand", {"command": "parakern.showCaseTree",
                                                          "arguments": [uri, "saxpy:0"]})
        time.sleep(0.5)
        processes = descendants(server.pid)
        answer = server.answer(server.ask("shutdown", None), timeout=10)
        assert answer is not None and "error" not in answer, answer
        assert server.answer(command, timeout=10) is not None          # answered too (cancelled)
        server.notify("exit", None)
        started = time.monotonic()
        assert server.process.wait(10) == 0
        assert time.monotonic() - started < DEADLINE
        assert gone_within(processes, DEADLINE)[1] == []
    finally:
        if server.process.poll() is None:
            server.kill()


@pytest.mark.parametrize("ending", ENDINGS)
def test_every_way_of_ending_ends_the_server_and_its_processes_within_2_s(ending, tmp_path):
    """With a large file's front end under way (seconds) and an analysis running: `exit` waited
    for the front-end queue to drain (a thread pool is joined at exit), and a server whose
    editor was gone but whose pipe lived on in another process never ended."""
    body = (SAMPLES / "saxpy.c").read_text().split("\n", 2)[2]
    found = end(ending, large_text(body, 400), tmp_path, (SAMPLES / "lifecycle-large.c").as_uri())
    assert found["processes"] >= 3             # the server, its workers, the resource tracker
    assert found["left"] == [] and found["seconds"] < DEADLINE, found
    if ending in STATUS:
        assert found["status"] == STATUS[ending], found

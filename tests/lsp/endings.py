"""Every way an editor ends `parakern serve`, and what is left running after it: used by
tests/integration/test_lsp_lifecycle.py and bench/campaign.py. Linux (/proc)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from wire import Wire, alive, descendants, environment

ENDINGS = ("shutdown+exit", "exit", "stdin closed", "SIGTERM", "SIGKILL", "editor killed",
           "editor gone, its pipe open")
# the worker's first analysis sleeps (settings.testFault): an analysis is under way at the end
BUSY_OPTIONS = {"timeLimitSeconds": 120, "testFault": {"mode": "sleep", "seconds": 60}}


def large_text(body: str, functions: int) -> str:
    """`functions` copies of a sample's functions, renamed (a file whose front end takes seconds)."""
    return "\n".join(body.replace("saxpy", f"saxpy{k}") for k in range(functions))


def gone_within(pids, seconds: float) -> tuple[float, list[int]]:
    """(seconds until all of `pids` ended, or `seconds`; those still running then)."""
    started = time.monotonic()
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() - started < seconds:
        time.sleep(0.02)
        left = [p for p in left if alive(p)]
    return time.monotonic() - started, left


def _change(uri: str, version: int, text: str) -> dict:
    return {"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}}


def busy(server: Wire, uri: str, text: str) -> None:
    """The text opened and analysed by the front end, then changed and saved: its front end
    runs again (a save analyses at once) while its analyses queue behind a sleeping one."""
    server.open(uri, text)
    server.wait_published(uri, 1, timeout=180)
    server.send(_change(uri, 2, "/* typed */" + text))
    server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    time.sleep(0.5)


EDITOR = r"""
import json, os, subprocess, sys, threading, time
server = subprocess.Popen([sys.executable, "-m", "parakern", "serve"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(message):
    body = json.dumps(message).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    server.stdin.flush()
published = threading.Event()
def read():
    while True:
        line = server.stdout.readline()
        if not line:
            return
        if line.lower().startswith(b"content-length:"):
            while server.stdout.readline().strip():      # the other headers, then the blank line
                pass
            message = json.loads(server.stdout.read(int(line.split(b":")[1])))
            if message.get("method") == "textDocument/publishDiagnostics":
                published.set()
            elif "method" in message and "id" in message:
                send({"jsonrpc": "2.0", "id": message["id"], "result": None})
threading.Thread(target=read, daemon=True).start()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"processId": os.getpid(), "capabilities": {}, "initializationOptions": json.loads(sys.argv[2])}})
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
uri = "file:///editor-killed.c"
text = open(sys.argv[1]).read()
send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": {"textDocument": {"uri": uri, "languageId": "c", "version": 1, "text": text}}})
published.wait(180)
send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
    "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "/* typed */" + text}]}})
send({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
time.sleep(0.5)
print(server.pid, flush=True)
time.sleep(600)
"""


def end(ending: str, text: str, scratch, uri: str, env: "dict | None" = None) -> dict:
    """A server started, made busy with `text` (see `busy`), then ended by `ending`:
    {"seconds": until the server and every process it started had ended (at most 5),
    "processes": how many there were, "left": pids still running 5 s after the end,
    "status": the server's exit status (None where it is not this process's child)}.
    `scratch`: a folder for files."""
    env = env or environment(PARAKERN_LSP_TEST_HOOKS="1")
    if ending == "editor killed":
        return _editor_killed(text, scratch, env)
    sleeper = None
    if ending == "editor gone, its pipe open":
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    server = Wire(env=env, options=BUSY_OPTIONS, process_id=sleeper.pid if sleeper else None)
    try:
        busy(server, uri, text)
        processes = [server.pid] + descendants(server.pid)
        if ending == "shutdown+exit":
            server.answer(server.ask("shutdown", None), 5)
            server.notify("exit", None)
        elif ending == "exit":
            server.notify("exit", None)
        elif ending == "stdin closed":
            server.process.stdin.close()
        elif ending in ("SIGTERM", "SIGKILL"):
            os.kill(server.pid, getattr(signal, ending))
        else:
            sleeper.kill()
            sleeper.wait()
        seconds, left = gone_within(processes, 5.0)
        try:
            status = server.process.wait(1)
        except subprocess.TimeoutExpired:
            status = None
        return {"seconds": seconds, "processes": len(processes), "left": left, "status": status}
    finally:
        if server.process.poll() is None:
            server.process.kill()
        if sleeper is not None and sleeper.poll() is None:
            sleeper.kill()


def _editor_killed(text: str, scratch, env: dict) -> dict:
    """The editor itself dies (SIGKILL): the server's stdin ends, and its processId is gone."""
    source = scratch / "editor-killed.c"
    source.write_text(text)
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(source), json.dumps(BUSY_OPTIONS)],
                              stdout=subprocess.PIPE, env=env, text=True)
    try:
        pid = int(editor.stdout.readline())
        processes = [pid] + descendants(pid)
        editor.kill()
        seconds, left = gone_within(processes, 5.0)
        return {"seconds": seconds, "processes": len(processes), "left": left, "status": None}
    finally:
        if editor.poll() is None:
            editor.kill()

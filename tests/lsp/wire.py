"""A raw JSON-RPC client of `parakern serve` over pipes: sends any message (params an
editor should not send, lone surrogates), sees every byte the server answers, and knows
the server's process (for signals and its children). pytest-lsp validates what it sends
and hides the process; this does neither. Used by tests/integration/test_lsp_robustness.py and
bench/robustness.py."""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

CAPABILITIES = {   # what a plain client without code-action resolve (Neovim 0.7) says
    "textDocument": {"publishDiagnostics": {"relatedInformation": True},
                     "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                         "", "quickfix", "refactor", "source"]}}},
                     "hover": {"contentFormat": ["markdown", "plaintext"]}},
    "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": False}},
    "window": {"workDoneProgress": False},
}


def environment(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "server"), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


class Wire:
    def __init__(self, env: "dict | None" = None, capabilities: "dict | None" = None, options: "dict | None" = None,
                 encoding: str = "utf-16", stderr=subprocess.DEVNULL, command: "list | None" = None,
                 cwd: "Path | None" = None, process_id: "int | None" = None):
        self.process = subprocess.Popen(command or [sys.executable, "-m", "parakern", "serve"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=stderr, env=env or environment(), cwd=cwd)
        self.pid = self.process.pid
        self.next_id = 0
        self.responses: dict = {}
        self.notifications: "queue.Queue[dict]" = queue.Queue()
        self.published: list[dict] = []
        self.raw_errors: list[dict] = []          # every error response, as received
        self.applied: list[dict] = []
        self.opened_at: dict = {}                 # uri -> len(published) when it was last opened
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        caps = dict(capabilities or CAPABILITIES)
        caps.setdefault("general", {"positionEncodings": [encoding]})
        root = Path(cwd or ROOT).resolve()
        self.result = self.request("initialize", {"processId": process_id or os.getpid(), "rootUri": root.as_uri(),
                                                  "capabilities": caps,
                                                  "initializationOptions": options or {}}, timeout=60)
        self.notify("initialized", {})

    # ------------------------------------------------------------ transport

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")      # ensure_ascii: lone surrogates travel as \\udfff
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    break
            message = json.loads(stream.read(length))
            self._arrived(message)

    def _arrived(self, message: dict) -> None:
        if "method" in message and "id" in message:      # a request of the server
            result = None
            if message["method"] == "workspace/applyEdit":
                self.applied.append(message["params"])
                result = {"applied": True}
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            return
        if "method" in message:
            if message["method"] == "textDocument/publishDiagnostics":
                with self.lock:
                    self.published.append(message["params"])
                    self.arrived.notify_all()
            self.notifications.put(message)
            return
        with self.lock:
            if "error" in message:
                self.raw_errors.append(message)
            self.responses[message.get("id")] = message
            self.arrived.notify_all()

    # ------------------------------------------------------------ messages

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def ask(self, method: str, params) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def answer(self, ident: int, timeout: float = 30.0) -> "dict | None":
        """The whole response message to request `ident`, or None if none came in time."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while ident not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.arrived.wait(left)
            return self.responses.pop(ident)

    def request(self, method: str, params, timeout: float = 30.0):
        message = self.answer(self.ask(method, params), timeout)
        if message is None:
            raise TimeoutError(f"no answer to {method} in {timeout} s")
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return message.get("result")

    def wait_published(self, uri: str, version, predicate=lambda ds: True, timeout: float = 60.0) -> list:
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for params in reversed(self.published[self.opened_at.get(uri, 0):]):
                    if params["uri"] == uri and (version is None or params.get("version") == version):
                        if predicate(params["diagnostics"]):
                            return params["diagnostics"]
                        break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no matching diagnostics for {uri} v{version} in {timeout} s")
                self.arrived.wait(left)

    # ------------------------------------------------------------ documents

    def open(self, uri: str, text: str, version: int = 1) -> None:
        """didOpen; diagnostics published for an earlier opening of `uri` no longer count."""
        with self.lock:
            self.opened_at[uri] = len(self.published)
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "c", "version": version,
                                                              "text": text}})

    def change(self, uri: str, version: int, changes: list) -> None:
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": changes})

    # ------------------------------------------------------------ the process

    def children(self) -> list[int]:
        """Processes whose parent is the server (its workers, the resource tracker)."""
        return children_of(self.pid)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.request("shutdown", None, timeout=10)
                self.notify("exit", None)
                self.process.wait(10)
            except Exception:
                self.process.kill()
        self.process.wait(10)

    def kill(self, signum: int = signal.SIGKILL) -> None:
        os.kill(self.pid, signum)
        self.process.wait(10)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    """Every process below pid: its children, theirs, and so on."""
    out, pending = [], [pid]
    while pending:
        for child in children_of(pending.pop()):
            out.append(child)
            pending.append(child)
    return out


def cmdline(pid: int) -> str:
    """The process's command line, its arguments NUL-separated ("" once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Running (a zombie, dead but not yet reaped, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def resident_mb(pid: int) -> "float | None":
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except (OSError, ValueError, IndexError):
        return None


def wait_gone(pids, timeout: float) -> list[int]:
    """The pids still running after `timeout` seconds (polling)."""
    deadline = time.monotonic() + timeout
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [p for p in left if alive(p)]
    return left

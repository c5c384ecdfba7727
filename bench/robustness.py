"""The language server and the CLI against a hostile editor: the figures of issue 15.

    .venv/bin/python bench/robustness.py [--edits 4000] [--seed 1] [--workers 2]

Prints one line per figure (bench/robustness.md holds a run):

  fuzz       random incremental edits (inserts, deletes, replacements of random ranges) on
             three documents (LF; CRLF; a U+2028 and a form feed above the code): 15 % change a
             digit of the code (the schedule is analysed again), 60 % are benign (whitespace,
             comments holding lone surrogates, NULs, U+2028…: the schedules survive and move),
             the others with C tokens, MetaFork keywords, parakern:begin/end markers and, one
             time in six, what an editor may send and C rarely holds: NULs, lone surrogates,
             form feed, U+0085, U+2028/U+2029, lone CRs, 5 000 parentheses, a 20 000-character
             comment. After every sequence of 1-4 edits: hover, codeLens and codeAction at random
             places (sometimes with out-of-range or malformed params), sometimes didSave (also of
             a document that is not open) and showCaseTree. Every 100 sequences, the edited
             text is opened fresh beside it: both must get the same front-end diagnostics
             (no desync); every 25 a document goes back to its sample (a full sync: schedules
             to analyse again).
  figures    edits tried; requests; unanswered requests; internal errors (-32603); tracebacks
             (in any response or diagnostic); crashes (the server process ended); desyncs;
             worker RSS at the start (warm) and the end, and the largest seen; worker processes
             seen (a recycled worker is a new one).
  pool       one worker of the server's pool running N analyses in a row (each a new
             expression): its RSS at the start, the end and the largest, and its recycles.
  200        a file of 200 schedules: codeAction at three cursors (a client without
             code-action resolve, as Neovim 0.7), then the insert command.
  signals    `parakern serve` with warm workers, killed by SIGTERM, then by SIGKILL:
             processes of the server still running 5 s later.
  verify     `parakern verify` killed while its runner spins in the user's code (SIGTERM,
             SIGKILL): runners still running 5 s later, temporary directories left.

Standard library and the project only; Linux (/proc). The worker pool is the server's
own (PARAKERN_LSP_WORKERS, PARAKERN_LSP_RECYCLE as set in the environment).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
from wire import Wire, alive, children_of, descendants, environment, resident_mb, wait_gone  # noqa: E402

LINE_BREAK = re.compile(r"\r\n|\r|\n")
SNIPPETS = ["meta_for", "meta_schedule", "meta_schedule cache(a) {", "cache(a, c)", "{", "}", "(", ")",
            ";", "\n", " ", "é", "😀", "ü😀ß", "int x = 1;", "#define Q 3\n", "#ifdef X\n", "/*", "*/",
            "// parakern:begin f:0\n", "// parakern:end f:0\n", "a[i][j]", "B0", "0", "\t", "\"", "'",
            "for (int k = 0; k < s; ++k)", "meta_for (int z = 0; z < B; z++)", "return;", "x = y +",
            "\r\n", "\\\n", "assert(N % 2 == 0);", "__global__", "} /* a comment\n that goes on */"]
HOSTILE = ["\x00", "\udfff", "\ud800x", "\u2028", "\f", "\x85", "\u2029", "\r", "\v", "(" * 5000, ")" * 5000,
           "/* " + "x" * 20_000 + " */", " + x[0]" * 300]
# Benign: whitespace, and comments holding what an editor may send (the schedules survive).
BENIGN = ["  ", "\t", "/* ü 😀 */ ", "\n", " // ü 😀 \udfff", " /* \u2028 \x85 \f */", "\r\n", " /* \x00 \ud800 */"]


# ------------------------------------------------------------------ a document, as the editor holds it

def lines_of(text: str) -> list[str]:
    return LINE_BREAK.split(text)


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def offset(text: str, line: int, column: int) -> int:
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    return starts[line] + column


class Document:
    def __init__(self, uri: str, text: str):
        self.uri, self.text, self.version, self.original = uri, text, 1, text

    def position(self, rnd: random.Random) -> tuple[int, int]:
        lines = lines_of(self.text)
        line = rnd.randrange(len(lines))
        return line, rnd.randint(0, len(lines[line]))

    def client(self, line: int, column: int) -> dict:
        return {"line": line, "character": utf16(lines_of(self.text)[line][:column])}

    def edit(self, start: tuple[int, int], end: tuple[int, int], new: str) -> dict:
        """The change event of one edit (code points here, UTF-16 on the wire), applied."""
        if end < start:
            start, end = end, start
        change = {"range": {"start": self.client(*start), "end": self.client(*end)}, "text": new}
        a, b = offset(self.text, *start), offset(self.text, *end)
        self.text = self.text[:a] + new + self.text[b:]
        return change


def random_change(rnd: random.Random, doc: Document) -> dict:
    roll = rnd.random()
    digits = [m.start() for m in re.finditer(r"(?<=[ (*/+-])\d(?=[ );*/+-])", doc.text)]
    if roll < 0.15 and digits:      # a constant of the code changed: the schedule is analysed again
        at = rnd.choice(digits)
        line = len(lines_of(doc.text[:at])) - 1
        column = at - offset(doc.text, line, 0)
        return doc.edit((line, column), (line, column + 1), str(rnd.randint(1, 9)))
    if roll < 0.75:                 # benign: the schedules survive (and move)
        line = rnd.randrange(len(lines_of(doc.text)))
        column = 0 if rnd.random() < 0.5 else len(lines_of(doc.text)[line])
        return doc.edit((line, column), (line, column), rnd.choice(BENIGN))
    start = doc.position(rnd)
    kind = rnd.choice(["insert", "delete", "replace"])
    end = start
    if kind != "insert":
        if rnd.random() < 0.8:
            end = (start[0], min(len(lines_of(doc.text)[start[0]]), start[1] + rnd.randint(0, 12)))
        else:
            end = doc.position(rnd)
    pool = HOSTILE if rnd.random() < 1 / 6 else SNIPPETS
    new = "" if kind == "delete" else "".join(rnd.choice(pool) for _ in range(rnd.randint(1, 3)))
    return doc.edit(start, end, new)


# ------------------------------------------------------------------ the server's processes

def workers_of(pid: int) -> list[int]:
    """The analysis workers of a server (not multiprocessing's resource tracker)."""
    found = []
    for child in children_of(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "spawn_main" in cmdline:
            found.append(child)
    return found


def worker_rss(pid: int) -> list[float]:
    return [m for m in (resident_mb(w) for w in workers_of(pid)) if m is not None]


# ------------------------------------------------------------------ the fuzz

class Tally:
    def __init__(self):
        self.edits = self.requests = self.unanswered = self.internal = self.tracebacks = 0
        self.crashes = self.desyncs = self.invalid_params = 0
        self.pending: list[tuple[int, str]] = []


def _frontend(diagnostics: list) -> list:
    return sorted((d.get("code"), d["range"]["start"]["line"], d["range"]["start"]["character"],
                   d["range"]["end"]["line"], d["range"]["end"]["character"])
                  for d in diagnostics if d.get("code") not in ("PK100", "PK097", "PK098"))


def _collect(wire: Wire, tally: Tally, timeout: float) -> None:
    """Answers of the pending requests: each one must come."""
    for ident, method in tally.pending:
        message = wire.answer(ident, timeout)
        if message is None:
            tally.unanswered += 1
            print(f"  unanswered: {method} #{ident}", file=sys.stderr)
        elif "error" in message:
            if message["error"].get("code") == -32603:
                tally.internal += 1
                print(f"  internal error: {method}: {message['error'].get('message')}", file=sys.stderr)
            elif message["error"].get("code") == -32602:
                tally.invalid_params += 1
    tally.pending = []


def _ask(wire: Wire, tally: Tally, method: str, params) -> None:
    tally.pending.append((wire.ask(method, params), method))
    tally.requests += 1


def _requests(rnd: random.Random, wire: Wire, tally: Tally, doc: Document) -> None:
    line, column = doc.position(rnd)
    at = doc.client(line, column)
    ident = {"uri": doc.uri}
    _ask(wire, tally, "textDocument/hover", {"textDocument": ident, "position": at})
    _ask(wire, tally, "textDocument/codeLens", {"textDocument": ident})
    _ask(wire, tally, "textDocument/codeAction", {"textDocument": ident, "range": {"start": at, "end": at},
                                                  "context": {"diagnostics": []}})
    roll = rnd.random()
    if roll < 0.05:     # params an editor should not send: answered with -32602
        _ask(wire, tally, "textDocument/hover", {"textDocument": ident, "position": {"line": -1, "character": 0}})
    elif roll < 0.08:
        _ask(wire, tally, "textDocument/hover", {"textDocument": ident,
                                                 "position": {"line": 10 ** 6, "character": 10 ** 6}})
    elif roll < 0.10:
        _ask(wire, tally, "workspace/executeCommand", {"command": "parakern.showCaseTree",
                                                       "arguments": [doc.uri, rnd.choice(["jacobi1d:0", "x:9"])]})


def fuzz(edits: int, seed: int, env: dict) -> dict:
    rnd = random.Random(seed)
    wire = Wire(env=env, options={"timeLimitSeconds": 10})
    tally = Tally()
    docs = [Document((SAMPLES / "fuzz-lf.c").as_uri(), (SAMPLES / "jacobi1d.c").read_text()),
            Document((SAMPLES / "fuzz-crlf.c").as_uri(), (SAMPLES / "matadd.c").read_text().replace("\n", "\r\n")),
            Document((SAMPLES / "fuzz-sep.c").as_uri(),
                     "/* \u2028 \f \x85 */\n" + (SAMPLES / "saxpy.c").read_text())]
    for doc in docs:
        wire.open(doc.uri, doc.text)
    wire.wait_published(docs[0].uri, 1, lambda ds: any(d.get("code") == "PK100" for d in ds), timeout=300)
    start_rss = worker_rss(wire.pid)
    seen_workers = set(workers_of(wire.pid))
    peak = max(start_rss, default=0.0)
    fifo_dir = tempfile.mkdtemp(prefix="parakern-fuzz-")
    fifo = Path(fifo_dir) / "pipe.c"
    os.mkfifo(fifo)
    started = time.monotonic()
    sequence = 0
    try:
        while tally.edits < edits:
            if wire.process.poll() is not None:
                tally.crashes += 1
                break
            doc = rnd.choice(docs)
            if sequence % 25 == 24:                            # back to the sample: full sync
                doc.text = doc.original
                doc.version += 1
                wire.change(doc.uri, doc.version, [{"text": doc.text}])
            changes = [random_change(rnd, doc) for _ in range(rnd.randint(1, 4))]
            doc.version += 1
            wire.change(doc.uri, doc.version, changes)
            tally.edits += len(changes)
            _requests(rnd, wire, tally, doc)
            if rnd.random() < 0.2:
                wire.notify("textDocument/didSave", {"textDocument": {"uri": doc.uri}})
            if rnd.random() < 0.02:
                wire.notify("textDocument/didSave", {"textDocument": {"uri": fifo.as_uri()}})
            if sequence % 20 == 19:
                _collect(wire, tally, 60)
                time.sleep(1.5)                                 # past the debounce: analyses run
            if sequence % 100 == 99:
                tally.desyncs += _desynced(wire, doc)
                rss = worker_rss(wire.pid)
                seen_workers.update(workers_of(wire.pid))
                peak = max([peak] + rss)
                print(f"  {tally.edits} edits, {time.monotonic() - started:.0f} s, worker RSS "
                      + ", ".join(f"{m:.0f}" for m in rss) + " MB", file=sys.stderr, flush=True)
            sequence += 1
        _collect(wire, tally, 60)
        # The documents back to their samples, analysed completely: the server still works.
        for doc in docs:
            doc.version += 1
            wire.change(doc.uri, doc.version, [{"text": doc.original}])
        wire.wait_published(docs[0].uri, docs[0].version, lambda ds: any(d.get("code") == "PK100" for d in ds),
                            timeout=300)
        time.sleep(2)
        end_rss = worker_rss(wire.pid)
        seen_workers.update(workers_of(wire.pid))
        peak = max([peak] + end_rss)
        if wire.process.poll() is not None:
            tally.crashes += 1
        for message in wire.raw_errors:
            if "traceback" in json.dumps(message).lower():
                tally.tracebacks += 1
        analysed = 0
        for params in wire.published:
            if any("traceback" in d.get("message", "").lower() for d in params["diagnostics"]):
                tally.tracebacks += 1
            analysed += any(d.get("code") == "PK100" for d in params["diagnostics"])
    finally:
        if wire.process.poll() is None:
            wire.close()
        shutil.rmtree(fifo_dir, ignore_errors=True)
    return {"edits": tally.edits, "sequences": sequence, "requests": tally.requests,
            "unanswered": tally.unanswered, "internal_errors": tally.internal,
            "invalid_params_answered": tally.invalid_params, "tracebacks": tally.tracebacks,
            "crashes": tally.crashes, "desyncs": tally.desyncs, "analysed_publishes": analysed,
            "seconds": round(time.monotonic() - started),
            "worker_rss_start": [round(m) for m in start_rss], "worker_rss_end": [round(m) for m in end_rss],
            "worker_rss_peak": round(peak), "workers_seen": len(seen_workers)}


def _desynced(wire: Wire, doc: Document) -> int:
    """1 when the edited document and the same text opened fresh get different diagnostics."""
    fresh = (SAMPLES / "fuzz-fresh.c").as_uri()
    wire.open(fresh, doc.text)
    try:
        edited = wire.wait_published(doc.uri, doc.version, timeout=60)
        whole = wire.wait_published(fresh, 1, timeout=60)
    except TimeoutError:
        return 1
    finally:
        wire.notify("textDocument/didClose", {"textDocument": {"uri": fresh}})
    if _frontend(edited) != _frontend(whole):
        print(f"  desync on {doc.uri} v{doc.version}", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------------ worker memory

def pool_memory(analyses: int) -> dict:
    """One worker of the server's pool analysing `analyses` versions of jacobi1d one after
    the other (each a new expression: nothing cached): its RSS before and after, the largest
    seen, and how often it was recycled. Without recycling it grows by about 1 MB per analysis
    (llvmlite's O3 pipeline leaks native memory on every run)."""
    import asyncio

    from parakern.lsp import jobs, tasks

    base = (SAMPLES / "jacobi1d.c").read_text()

    async def scenario() -> dict:
        pool = jobs.JobPool(workers=1)
        pool.start()
        try:
            await pool.run(_warm, None, 300)
            first = resident_mb(pool.pids[0])
            peak, statuses = first, set()
            for k in range(analyses):
                text = base.replace("(a[", f"({k} * 0 + a[", 1)
                job = tasks.AnalysisJob(text=text, file="jacobi1d.c", id="jacobi1d:0", key=f"k{k}")
                summary = await pool.run(tasks.analyse, job, 120)
                statuses.add(summary.status)
                peak = max(peak, max((resident_mb(p) or 0.0) for p in pool.pids) if pool.pids else 0.0)
            await pool.run(_warm, None, 300)
            last = resident_mb(pool.pids[0])
            return {"analyses": analyses, "statuses": sorted(statuses), "rss_start": round(first),
                    "rss_end": round(last), "rss_peak": round(peak), "recycled": pool.recycled,
                    "limits": f"{pool.recycle_jobs} jobs, {pool.recycle_mb:g} MB"}
        finally:
            pool.close()

    return asyncio.run(scenario())


def _warm(_) -> int:
    from parakern.lsp import boot
    return boot.warm_up()          # one tiny analysis; the worker's pid


# ------------------------------------------------------------------ 200 schedules

def many_schedules(env: dict) -> dict:
    wire = Wire(env=env, options={"timeLimitSeconds": 60})
    try:
        uri = (SAMPLES / "fuzz-many.c").as_uri()
        body = (SAMPLES / "saxpy.c").read_text().split("\n", 2)[2]
        text = "\n".join(body.replace("saxpy", f"saxpy{k}") for k in range(200)).replace("\n", "\r\n")
        wire.open(uri, text)
        wire.wait_published(uri, 1, timeout=120)
        keywords = [k for k, line in enumerate(lines_of(text)) if "meta_schedule" in line]
        times = []
        for index in (0, 150, 199):
            at = {"line": keywords[index], "character": 6}
            started = time.monotonic()
            actions = wire.request("textDocument/codeAction", {"textDocument": {"uri": uri},
                                                               "range": {"start": at, "end": at},
                                                               "context": {"diagnostics": []}}, timeout=300)
            times.append(time.monotonic() - started)
            assert actions and actions[0]["command"]["arguments"] == [uri, f"saxpy{index}:0"], actions
        started = time.monotonic()
        applied = len(wire.applied)
        result = wire.request("workspace/executeCommand", actions[0]["command"], timeout=300)
        insert = time.monotonic() - started
        edit = wire.applied[applied]["edit"]["changes"][uri][0]["newText"] if result.get("applied") else ""
        crlf = bool(edit) and edit.replace("\r\n", "").count("\n") == 0
        return {"code_action_s": [round(t, 3) for t in times], "insert_command_s": round(insert, 2),
                "region_crlf": crlf}
    finally:
        wire.kill()


# ------------------------------------------------------------------ signals

def server_signals(env: dict) -> dict:
    out = {}
    for signum in (signal.SIGTERM, signal.SIGKILL):
        wire = Wire(env=env, options={"timeLimitSeconds": 60})
        uri = (SAMPLES / "fuzz-signal.c").as_uri()
        wire.open(uri, (SAMPLES / "matadd.c").read_text())
        wire.wait_published(uri, 1, lambda ds: any(d.get("code") == "PK100" for d in ds), timeout=300)
        processes = descendants(wire.pid)
        wire.kill(signum)
        out[signal.Signals(signum).name] = {"processes": len(processes), "orphans": len(wait_gone(processes, 5))}
    return out


SPIN = """#include "metafork.h"

void spin(int n, int B, float alpha, float *x, float *y)
{
    int blocks = (n + B - 1) / B;
    meta_schedule {
        meta_for (int b = 0; b < blocks; b++)
            meta_for (int t = 0; t < B; t++) {
                int i = b * B + t;
                if (i < n)
                    for (int k = 0; k < 2000000000; k++)
                        y[i] = alpha * y[i] + x[i];
            }
    }
}
"""


def verify_signals(env: dict) -> dict:
    out = {}
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        return {"skipped": "needs gcc and g++"}
    for signum in (signal.SIGTERM, signal.SIGKILL):
        work = Path(tempfile.mkdtemp(prefix="parakern-fuzz-verify-"))
        scratch = work / "tmp"
        scratch.mkdir()
        (work / "spin.c").write_text(SPIN)
        process = subprocess.Popen([sys.executable, "-m", "parakern", "verify", str(work / "spin.c")],
                                   env={**env, "TMPDIR": str(scratch)}, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        runner, deadline = None, time.monotonic() + 120
        while runner is None and time.monotonic() < deadline and process.poll() is None:
            runner = next((p for p in children_of(process.pid)
                           if "runner.py" in Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace")), None)
            time.sleep(0.2)
        time.sleep(1.0)
        processes = descendants(process.pid)
        os.kill(process.pid, signum)
        _, err = process.communicate(timeout=60)
        left = wait_gone(processes, 5)
        time.sleep(1.0)
        out[signal.Signals(signum).name] = {
            "runner_started": runner is not None, "orphans": len(left),
            "runner_left": int(runner is not None and alive(runner)),
            "directories_left": len(list(scratch.iterdir())), "traceback": "Traceback" in err}
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)
    return out


# ------------------------------------------------------------------ main

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2, help="analysis workers of the server")
    parser.add_argument("--analyses", type=int, default=150, help="analyses in a row of one pool worker")
    args = parser.parse_args()
    env = environment(PARAKERN_LSP_WORKERS=str(args.workers))
    started = time.monotonic()
    report = {"fuzz": fuzz(args.edits, args.seed, env)}
    report["pool"] = pool_memory(args.analyses)
    report["200 schedules"] = many_schedules(env)
    report["serve killed"] = server_signals(env)
    report["verify killed"] = verify_signals(env)
    f = report["fuzz"]
    print(f"fuzz: {f['edits']} edits in {f['sequences']} sequences ({f['seconds']} s), {f['requests']} requests")
    print(f"  unanswered requests {f['unanswered']}, internal errors {f['internal_errors']}, "
          f"tracebacks {f['tracebacks']}, crashes {f['crashes']}, desyncs {f['desyncs']} "
          f"(invalid params answered -32602: {f['invalid_params_answered']})")
    print(f"  diagnostics published with case trees (PK100): {f['analysed_publishes']}")
    print(f"  worker RSS start {f['worker_rss_start']} MB, end {f['worker_rss_end']} MB, "
          f"peak {f['worker_rss_peak']} MB, worker processes seen {f['workers_seen']}")
    p = report["pool"]
    print(f"one worker, {p['analyses']} analyses in a row ({', '.join(p['statuses'])}): RSS start {p['rss_start']} MB, "
          f"end {p['rss_end']} MB, peak {p['rss_peak']} MB, recycled {p['recycled']} times ({p['limits']})")
    m = report["200 schedules"]
    print(f"200 schedules: codeAction {m['code_action_s']} s, insert command {m['insert_command_s']} s, "
          f"region keeps CRLF {m['region_crlf']}")
    for name, figures in report["serve killed"].items():
        print(f"serve {name}: {figures['processes']} child processes, orphans after 5 s: {figures['orphans']}")
    for name, figures in report["verify killed"].items():
        print(f"verify {name}: {figures}")
    print(f"total {time.monotonic() - started:.0f} s")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

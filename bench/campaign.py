"""The fuzz campaign of issue 34: the language server under a clumsy editor, its memory, its
disk cache, then every way an editor ends it.

    .venv/bin/python bench/campaign.py [--edits 10000] [--seed 34] [--workers 2] [--cache-mb 0.05]

  fuzz       one server, two documents (jacobi1d with LF, matmul with CRLF) edited at random
             (bench/robustness.py's edits: constants changed, white space and comments with
             what an editor may send, C tokens, MetaFork keywords, hostile text), 1-4 edits a
             sequence; after each sequence hover, codeLens and codeAction at random places,
             and now and then codeAction/resolve of an action it offered, codeLens/resolve,
             showCaseTree, insertDispatcher, didSave; one request in eight is cancelled
             ($/cancelRequest) right after it is sent. Every request must be answered (a
             result, or an error: -32800 cancelled, -32602 bad params).
  figures    edits; requests (cancelled); unanswered; internal errors (-32603); tracebacks
             shown to the user (in a response, a diagnostic or a window message); crashes (the
             server process ended); the server's RSS every 500 edits and its spread after the
             warm-up (--warm-up edits); its workers' RSS; the summary folder on disk
             (PARAKERN_CACHE_MB is --cache-mb: files and bytes at the end).
  endings    tests/lsp/endings.py: shutdown + exit, exit alone, stdin closed, SIGTERM, SIGKILL,
             the editor killed, the editor gone while its pipe stays open; each with a large
             file's front end and an analysis under way: seconds until the server and every
             process it started had ended, and the processes left 5 s after the end.

Standard library and the project only; Linux (/proc). Prints the load (uptime) beside the
figures: the machine may be shared.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
sys.path.insert(0, str(ROOT / "bench"))
from endings import ENDINGS, end, large_text  # noqa: E402
from robustness import Document, random_change, worker_rss  # noqa: E402
from wire import CAPABILITIES, Wire, environment, resident_mb  # noqa: E402

CANCELLED, INVALID_PARAMS, INTERNAL = -32800, -32602, -32603
RESOLVING = json.loads(json.dumps(CAPABILITIES))      # a client that resolves actions and lenses (VS Code)
RESOLVING["textDocument"]["codeAction"].update(resolveSupport={"properties": ["edit"]}, dataSupport=True)
RESOLVING["textDocument"]["codeLens"] = {"resolveSupport": {"properties": ["command"]}}


class Tally:
    def __init__(self):
        self.edits = self.requests = self.cancelled = self.unanswered = self.internal = 0
        self.tracebacks = self.crashes = 0
        self.pending: list[tuple[int, str]] = []
        self.actions: list[dict] = []
        self.lenses: list[dict] = []


def _ask(wire: Wire, tally: Tally, rnd: random.Random, method: str, params) -> None:
    ident = wire.ask(method, params)
    tally.requests += 1
    tally.pending.append((ident, method))
    if rnd.random() < 1 / 8:
        wire.notify("$/cancelRequest", {"id": ident})
        tally.cancelled += 1


def _collect(wire: Wire, tally: Tally, timeout: float) -> None:
    for ident, method in tally.pending:
        message = wire.answer(ident, timeout)
        if message is None:
            tally.unanswered += 1
            print(f"  unanswered: {method} #{ident}", file=sys.stderr, flush=True)
            continue
        error = message.get("error")
        if error is not None:
            if error.get("code") == INTERNAL:
                tally.internal += 1
                print(f"  internal error: {method}: {error.get('message')}", file=sys.stderr, flush=True)
            continue
        result = message.get("result")
        if method == "textDocument/codeAction" and result:
            tally.actions = [a for a in result if isinstance(a, dict) and "data" in a][-4:] or tally.actions
        elif method == "textDocument/codeLens" and result:
            tally.lenses = [lens for lens in result if isinstance(lens, dict) and "data" in lens][-4:] or tally.lenses
    tally.pending = []


def _requests(rnd: random.Random, wire: Wire, tally: Tally, doc: Document) -> None:
    line, column = doc.position(rnd)
    at = doc.client(line, column)
    ident = {"uri": doc.uri}
    _ask(wire, tally, rnd, "textDocument/hover", {"textDocument": ident, "position": at})
    _ask(wire, tally, rnd, "textDocument/codeLens", {"textDocument": ident})
    _ask(wire, tally, rnd, "textDocument/codeAction", {"textDocument": ident, "range": {"start": at, "end": at},
                                                       "context": {"diagnostics": []}})
    roll = rnd.random()
    if roll < 0.08 and tally.actions:
        _ask(wire, tally, rnd, "codeAction/resolve", rnd.choice(tally.actions))
    elif roll < 0.16 and tally.lenses:
        _ask(wire, tally, rnd, "codeLens/resolve", rnd.choice(tally.lenses))
    elif roll < 0.20:
        arguments = [doc.uri, rnd.choice(["jacobi1d:0", "matmul:0", "nothing:3"]), rnd.choice(["markdown", "dot"])]
        _ask(wire, tally, rnd, "workspace/executeCommand", {"command": "parakern.showCaseTree", "arguments": arguments})
    elif roll < 0.22:
        schedule = rnd.choice(["jacobi1d:0", "matmul:0"])
        _ask(wire, tally, rnd, "workspace/executeCommand", {"command": "parakern.insertDispatcher",
                                                            "arguments": [doc.uri, schedule]})
    if rnd.random() < 0.15:
        wire.notify("textDocument/didSave", {"textDocument": ident})


def _shown_tracebacks(wire: Wire) -> int:
    """Responses, diagnostics and window messages that hold a Python traceback."""
    found = sum("traceback" in json.dumps(m).lower() for m in wire.raw_errors)
    found += sum(any("traceback" in d.get("message", "").lower() for d in p["diagnostics"]) for p in wire.published)
    while not wire.notifications.empty():
        message = wire.notifications.get_nowait()
        if message.get("method", "").startswith("window/") and "traceback" in json.dumps(message).lower():
            found += 1
    return found


def fuzz(edits: int, seed: int, warm_up: int, env: dict) -> dict:
    rnd = random.Random(seed)
    wire = Wire(env=env, capabilities=RESOLVING, options={"timeLimitSeconds": 20})
    tally = Tally()
    docs = [Document((SAMPLES / "campaign-lf.c").as_uri(), (SAMPLES / "jacobi1d.c").read_text()),
            Document((SAMPLES / "campaign-crlf.c").as_uri(), (SAMPLES / "matmul.c").read_text().replace("\n", "\r\n"))]
    for doc in docs:
        wire.open(doc.uri, doc.text)
    wire.wait_published(docs[0].uri, 1, lambda ds: any(d.get("code") == "PK100" for d in ds), timeout=300)
    rss: list[tuple[int, float]] = [(0, resident_mb(wire.pid) or 0.0)]
    workers = [(0, worker_rss(wire.pid))]
    started, sequence, next_sample = time.monotonic(), 0, 500
    try:
        while tally.edits < edits:
            if wire.process.poll() is not None:
                tally.crashes += 1
                break
            doc = rnd.choice(docs)
            if sequence % 25 == 24:                  # back to the sample: a full sync
                doc.text = doc.original
                doc.version += 1
                wire.change(doc.uri, doc.version, [{"text": doc.text}])
            changes = [random_change(rnd, doc) for _ in range(rnd.randint(1, 4))]
            doc.version += 1
            wire.change(doc.uri, doc.version, changes)
            tally.edits += len(changes)
            _requests(rnd, wire, tally, doc)
            if sequence % 20 == 19:
                _collect(wire, tally, 60)
                time.sleep(0.5)                          # past the debounce: analyses run
            if tally.edits >= next_sample:
                rss.append((tally.edits, resident_mb(wire.pid) or 0.0))
                workers.append((tally.edits, worker_rss(wire.pid)))
                print(f"  {tally.edits} edits, {time.monotonic() - started:.0f} s, server RSS {rss[-1][1]:.1f} MB, "
                      f"workers " + ", ".join(f"{m:.0f}" for m in workers[-1][1]) + " MB", file=sys.stderr, flush=True)
                next_sample += 500
            sequence += 1
        _collect(wire, tally, 60)
        tally.tracebacks = _shown_tracebacks(wire)
        if wire.process.poll() is not None:
            tally.crashes += 1
    finally:
        if wire.process.poll() is None:
            wire.close()
    after = [m for e, m in rss if e >= warm_up]
    return {"edits": tally.edits, "sequences": sequence, "requests": tally.requests, "cancelled": tally.cancelled,
            "unanswered": tally.unanswered, "internal_errors": tally.internal, "tracebacks": tally.tracebacks,
            "crashes": tally.crashes, "seconds": round(time.monotonic() - started),
            "rss": [(e, round(m, 1)) for e, m in rss], "workers": [(e, [round(m) for m in w]) for e, w in workers],
            "rss_spread_after_warm_up": round(max(after) - min(after), 1) if after else None}


def disk(folder: Path) -> dict:
    files = list(folder.rglob("*.json"))
    return {"files": len(files), "bytes": sum(f.stat().st_size for f in files)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--workers", type=int, default=2, help="analysis workers of the server")
    parser.add_argument("--warm-up", type=int, default=2000, help="edits before the RSS is expected flat")
    parser.add_argument("--cache-mb", type=float, default=0.05,
                        help="PARAKERN_CACHE_MB of the campaign's servers (small: the bound is reached)")
    parser.add_argument("--functions", type=int, default=400,
                        help="functions of the large file the endings are made with")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="parakern-campaign-"))
    env = environment(PARAKERN_LSP_WORKERS=str(args.workers), PARAKERN_CACHE_DIR=str(cache),
                      PARAKERN_CACHE_MB=f"{args.cache_mb:g}", PARAKERN_LSP_TEST_HOOKS="1")
    started = time.monotonic()
    try:
        report = {"fuzz": fuzz(args.edits, args.seed, args.warm_up, env), "disk": disk(cache)}
        body = (SAMPLES / "saxpy.c").read_text().split("\n", 2)[2]
        text = large_text(body, args.functions)
        scratch = Path(tempfile.mkdtemp(prefix="parakern-campaign-endings-"))
        report["endings"] = {e: end(e, text, scratch, (SAMPLES / "campaign-large.c").as_uri(), env) for e in ENDINGS}
        shutil.rmtree(scratch, ignore_errors=True)
        report["disk_after_endings"] = disk(cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    f = report["fuzz"]
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print(f"fuzz: {f['edits']} edits in {f['sequences']} sequences on two documents ({f['seconds']} s), "
          f"{f['requests']} requests ({f['cancelled']} cancelled)")
    print(f"  crashes {f['crashes']}, unanswered requests {f['unanswered']}, internal errors {f['internal_errors']}, "
          f"tracebacks shown to the user {f['tracebacks']}")
    print("  server RSS (edits: MB) " + ", ".join(f"{e}: {m:.0f}" for e, m in f["rss"]))
    print(f"  server RSS after {args.warm_up} edits of warm-up: spread {f['rss_spread_after_warm_up']} MB "
          f"(target <= 10 MB: {'met' if (f['rss_spread_after_warm_up'] or 0) <= 10 else 'missed'})")
    print(f"  worker RSS at the start {f['workers'][0][1]} MB, at the end {f['workers'][-1][1]} MB")
    bound = args.cache_mb * 2 ** 20
    for name in ("disk", "disk_after_endings"):
        d = report[name]
        kept = "kept" if d["bytes"] <= bound else "passed"
        print(f"  summary folder{' after the endings' if name != 'disk' else ''}: {d['files']} files, "
              f"{d['bytes'] / 2 ** 20:.2f} MB (bound {args.cache_mb:g} MB: {kept})")
    for name, e in report["endings"].items():
        print(f"ending '{name}': server and {e['processes'] - 1} processes of it ended within {e['seconds']:.2f} s, "
              f"left after 5 s: {len(e['left'])}, exit status {e['status']}")
    print(f"total {time.monotonic() - started:.0f} s")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

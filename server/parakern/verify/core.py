"""Definition 2 (ii), code soundness, checked by execution without a GPU.

For every schedule with a case tree and every case: parameter points and an
emulated device that make the dispatcher pick that case (points.py); the
serial C function and the GPU version (the same function, the schedule
replaced by its dispatcher, the emitted .cu run on parakern_cpu.h) are
called on the same seeded inputs in a child process (runner.py), and every
array is compared. Those points call the tree's dispatcher (the paper's rule, which the
emulated device's limits steer to each case); the default dispatcher (the time model's fastest
case) is then called on an emulated H100 and T4 (their limits, SMs and speeds) at some of those
values, and must launch the case dispatch.choose computes. With the race check (on by default)
the kernels are printed traced (codegen/trace.py): the emulation notes every element reference
in shadow memory (parakern_race.h) and fails a point where two threads race; and every point
runs a second time, blocks and threads in a seeded shuffled order, compared as well.
"""
from __future__ import annotations

import json
import signal
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Optional

from parakern.codegen import status
from parakern.codegen.tree_dispatcher import dispatcher_name
from parakern.codegen.trace import Sites
from parakern.machine.devices import Device
from parakern.verify import build as building
from parakern.verify import inputs, races
from parakern.machine.devices import get_profile
from parakern.verify.points import (DEFAULT, Point, build_model, device, device_json, expected_case, find_points,
                                    host_check)
from parakern.verify.results import UNPROVED_DRAWS, CaseResult, FileResult, PointResult, ScheduleResult
from parakern.analysis.dependence import UNPROVED
from parakern.analysis.feasible import CONTRADICTION
from parakern.verify.signature import SignatureError, signature
from parakern.source.text import normalize_newlines
from parakern.process.lifeline import ScratchDirectory, python_command
from parakern.pipeline import Options, analyze
from parakern.codegen import emit_file

NO_CASE_WHY = (CONTRADICTION,)   # warnings that say why a schedule has no case

RUNNER = Path(__file__).with_name("runner.py")
GUARD = 16                   # guard elements on each side of every array
CANDIDATES = 6             # points drawn per point asked: some may never reach the schedule
ROUNDS = 12                  # batches: a point that never reaches the schedule is replaced
DEFAULT_CHECKS = ("h100", "t4")   # GPUs the default dispatcher's choice is checked on, emulated
DEFAULT_VALUES = 2           # values per GPU at which it is


def verify_file(path: "str | Path", points: int = 3, **options) -> FileResult:
    """`verify_source` on a file (OSError when it cannot be read)."""
    path = Path(path)
    return verify_source(path.read_text(encoding="utf-8", errors="replace"), str(path), points, **options)


def verify_source(text: str, file: str, points: int = 3, *, seed: int = 0, **options) -> FileResult:
    """Runs every case of every schedule of `text` against the serial C (options: see Session).
    Raises ToolMissing when gcc or g++ is missing; never raises on user input."""
    start = time.perf_counter()
    with Session(text, file, **options) as session:
        result = session.verify(points, seed)
    return replace(result, seconds=time.perf_counter() - start)


@dataclass
class Target:
    """One schedule ready to run: its analysis, the function's signature, its GPU library."""
    result: object
    signature: object
    model: object
    gpu: Path
    scalars: tuple = ()        # the dispatcher's scalar arguments, as its calls are logged


@dataclass(frozen=True)
class Checks:
    """What a run compares besides the results: the libraries and the rules."""
    serial: Path                       # the serial C
    fused: "Path | None" = None        # the serial C with FMA contraction: the spread of floating results
    tolerance: "dict | None" = None    # ctype -> relative bound given by the user (runner.TOLERANCE otherwise)
    sites: "dict | None" = None        # the race check is on: where each traced site is (Session.sites)


class Session:
    """A file analysed, its .cu emitted and compiled: points can run on any of its schedules.

    transform_cu: applied to the emitted .cu before it is compiled (tests break a kernel with it).
    emit: analysis -> .cu text, instead of parakern.codegen.emit_file.
    build_dir: keep the generated sources and libraries there (default: a temporary directory,
    removed by close() or at the end of a `with` block).
    races: the race check (module comment); with the default emission the kernels are printed
    traced for it, a custom `emit` is compiled as it is (its PARAKERN_AT references, if any, noted).
    tolerance: ctype -> relative bound of floating differences, instead of runner.TOLERANCE and
    the spread of the serial C built with and without FMA contraction.
    """

    def __init__(self, text: str, file: str, *, transform_cu: Optional[Callable[[str], str]] = None,
                 emit: Optional[Callable] = None, build_dir: "str | Path | None" = None, options=None,
                 races: bool = True, tolerance: "dict | None" = None):
        building.tools()
        self.text = normalize_newlines(text)
        self.file = file
        self.races = races
        self.tolerance = dict(tolerance) if tolerance else None
        self.fused: "Path | None" = None
        self.sites: dict = {}              # traced site number -> where it is in the source (races.py)
        self.problem = ""                  # why nothing of the file can run
        self.unverifiable: dict = {}       # schedule id -> why it cannot run
        self.targets: dict = {}            # schedule id -> Target
        self.serial: "Path | None" = None
        self._scratch = None if build_dir is not None else ScratchDirectory("parakern-verify-")
        self.build_dir = Path(build_dir) if build_dir is not None else Path(self._scratch.name)
        self.analysis = analyze(self.text, file, options or Options())
        self.cu_text = self._emit(emit, transform_cu)
        if self.cu_text is not None:
            self._build()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def _emit(self, emit, transform_cu) -> "str | None":
        if not self.analysis.results:
            message = next((d.format() for d in self.analysis.diagnostics if d.severity.value == "error"),
                           "no meta_schedule in this file")   # with its position, as optimize prints it
            self.problem = f"nothing to verify: {message}"
            return None
        try:
            if emit is not None:
                cu_text = emit(self.analysis)
            else:
                sites = Sites() if self.races else None
                cu_text = emit_file(self.analysis, trace=sites)
                if sites is not None:
                    self.sites = races.site_places(sites, self.analysis, self.file)
        except Exception as exc:  # a generator failure is a finding, not a crash of verify
            self.problem = f"the CUDA generator failed: {type(exc).__name__}: {exc}"
            return None
        return transform_cu(cu_text) if transform_cu is not None else cu_text

    def _build(self) -> None:
        calls = []
        for result in self.analysis.results:
            s = result.schedule
            if result.tree is None or not result.tree.cases:
                # an error is listed once already, with the analysis' errors; a warning (PK025:
                # facts that contradict each other) says here why there is no case
                errors = [d for d in result.diagnostics if d.severity.value == "error"]
                warned = next((d.format() for d in result.diagnostics if d.code in NO_CASE_WHY), "")
                reason = "see the analysis' error above" if errors else warned or "the case tree has no case"
                self.unverifiable[s.id] = f"no case tree: {reason}"
            elif dispatcher_name(s) not in self.cu_text:
                self.unverifiable[s.id] = f"the emitted .cu has no {dispatcher_name(s)}"
            else:
                try:
                    sig = signature(self.text, self.file, s.function)
                except SignatureError as exc:
                    self.unverifiable[s.id] = str(exc)
                    continue
                calls.append((result, sig, building.make_call(s, result.tree, self.cu_text)))
        if not calls:
            return
        try:
            libraries = building.build(self.text, self.file, self.cu_text, [c for _, _, c in calls],
                                       self.build_dir)
        except building.BuildError as exc:
            self.problem = f"{exc}:\n{exc.excerpt()}"
            return
        self.serial = libraries.serial
        self.fused = None if self.tolerance else libraries.fused
        for result, sig, call in calls:
            s = result.schedule
            if s.id in libraries.errors:
                exc = libraries.errors[s.id]
                self.unverifiable[s.id] = f"{exc}:\n{exc.excerpt()}"
                continue
            model = build_model(s, result.tree, {a.name for a in sig.arguments})
            self.targets[s.id] = Target(result, sig, model, libraries.gpu[s.id], tuple(call.scalars))

    def run(self, schedule_id: str, values: dict, device: Device, case: int = 0, seed: int = 0,
            rule: str = DEFAULT) -> "PointResult | None":
        """One call of the function at `values` (the schedule's parameters) on `device`, through the
        dispatcher of `rule` (DEFAULT, or TREE); None when the call never reached the schedule."""
        target = self.targets[schedule_id]
        expected = None if target.model.host_dependent else expected_case(target.model, values, device, rule)
        point = Point(case or expected or 0, dict(values), device, expected, False, "given", rule=rule)
        return self.run_points(schedule_id, [point], seed)[0]

    def run_points(self, schedule_id: str, points: list, seed: int = 0, host: int = 0) -> list:
        checks = Checks(self.serial, self.fused, self.tolerance, self.sites if self.races else None)
        return run_points(self.targets[schedule_id], checks, points, seed, host)

    def verify(self, points: int = 3, seed: int = 0) -> FileResult:
        keep = "" if self._scratch is not None else str(self.build_dir)
        if self.problem:
            return FileResult(self.file, error=self.problem, build_dir=keep, tolerance=self.tolerance)
        schedules = []
        for result in self.analysis.results:
            s = result.schedule
            if s.id in self.unverifiable:
                schedules.append(ScheduleResult(s.id, s.span.line, error=self.unverifiable[s.id]))
                continue
            began = time.perf_counter()
            unproved = tuple(f"{d.span.line}:{d.span.col}: {d.message}" for d in result.diagnostics
                             if d.code == UNPROVED)
            cases = self._verify_schedule(s.id, points * UNPROVED_DRAWS if unproved else points, seed)
            defaults = self._verify_default(s.id, cases, seed)
            schedules.append(ScheduleResult(s.id, s.span.line, tuple(cases), seconds=time.perf_counter() - began,
                                            defaults=defaults, unproved=unproved))
        errors = tuple(f"{d.span.line}:{d.span.col}: {d.message}" for d in self.analysis.diagnostics
                       if d.severity.value == "error")
        return FileResult(self.file, tuple(schedules), build_dir=keep, errors=errors, tolerance=self.tolerance)

    def _verify_schedule(self, schedule_id: str, count: int, seed: int) -> list[CaseResult]:
        target = self.targets[schedule_id]
        tree, model = target.result.tree, target.model
        candidates = {k: find_points(model, k, count * CANDIDATES, seed) for k in range(len(tree.cases))}
        done: dict[int, list[PointResult]] = {k: [] for k in candidates}
        unreached = {k: 0 for k in candidates}
        host = 0   # which of inputs.OTHER_INTS the function's other integer arguments take
        for _ in range(ROUNDS):
            batch = []
            for k, pool in candidates.items():
                need = count - len(done[k])
                while need > 0 and pool:
                    batch.append(pool.pop(0))
                    need -= 1
            if not batch:
                break
            missed = []
            for point, outcome in zip(batch, self.run_points(schedule_id, batch, seed, host)):
                if outcome is None:
                    unreached[point.case - 1] += 1
                    missed.append(point)
                else:
                    done[point.case - 1].append(outcome)
            if missed and host + 1 < len(inputs.OTHER_INTS):
                host += 1   # the schedule may be behind a test of those arguments: try the next values
                for point in reversed(missed):
                    candidates[point.case - 1].insert(0, point)
        cases = []
        for k, case in enumerate(tree.cases):
            note = ""
            if len(done[k]) < count:
                note = (f"{len(done[k])} of {count} points: "
                        + ("no parameter point within the bounds selects this case"
                           if not done[k] and not unreached[k]
                           else f"{unreached[k]} drawn points never reached the schedule" if unreached[k]
                           else "no more distinct points within the bounds"))
            cases.append(CaseResult(k + 1, str(case.constraints), tuple(case.decisions), tuple(done[k]), note))
        return cases


    def _verify_default(self, schedule_id: str, cases: list, seed: int) -> tuple:
        """The default dispatcher on emulated GPUs (DEFAULT_CHECKS, their own limits and speeds), at
        the values of the first points that ran (realistic ones first, DEFAULT_VALUES of them): the
        case it launches must be the one dispatch.choose computes, and the result the serial C's."""
        target = self.targets[schedule_id]
        ran = [p for c in cases for p in c.points if not p.error]
        ran.sort(key=lambda p: not p.realistic)
        values = []
        for p in ran:
            given = {n: v for n, v in p.values.items() if n in target.model.settable}
            if given not in values:
                values.append(given)
        batch = []
        for key in DEFAULT_CHECKS:
            profile = get_profile(key)
            gpu = device(profile.R_B, profile.Z, profile.T, base=profile)
            chosen = 0
            for given in values:
                if chosen == DEFAULT_VALUES:
                    break
                expected = None if target.model.host_dependent else expected_case(target.model, given, gpu)
                if expected == 0:   # no case fits this GPU there: nothing to compare
                    continue
                batch.append(Point(expected or 0, dict(given), gpu, expected, False, f"default on {key}"))
                chosen += 1
        return tuple(p for p in self.run_points(schedule_id, batch, seed) if p is not None)


def run_points(target: Target, checks: Checks, batch, seed: int = 0, host: int = 0) -> list:
    """Runs the points in a child process; per point a PointResult, or None when the function
    never reached the schedule (no dispatcher call). host: inputs.scalars'. The values each
    dispatcher call received (target.scalars) judge the facts on what the host code sets."""
    sig, schedule, model = target.signature, target.result.schedule, target.model
    sites = checks.sites
    jobs, prepared = [], []
    for i, point in enumerate(batch):
        name = f"{schedule.id}:{point.case}:{i}:{seed}"
        values = inputs.scalars(sig, schedule, point.values, name, host)
        try:
            count, dims = inputs.sizes(sig, schedule, model, values)
        except inputs.InputError as exc:
            prepared.append((point, values, str(exc)))
            continue
        prepared.append((point, values, ""))
        jobs.append({"id": i, "scalars": values, "sizes": count, "dims": dims,
                     "limits": inputs.index_limits(schedule, count, dims),
                     "device": device_json(point.device), "rule": point.rule, "seed": name,
                     "order_seed": races.order_seed(name)})
    arguments = [{"name": a.name, "ctype": a.ctype, "kind": a.kind} for a in sig.arguments]
    job = {"serial": str(checks.serial), "gpu": str(target.gpu), "function": sig.function, "arguments": arguments,
           "guard": GUARD, "races": sites is not None, "scalars": list(target.scalars),
           "logged": building.ARGUMENTS_LOGGED, "fused": str(checks.fused) if checks.fused else "",
           "tolerance": checks.tolerance}
    records = _run_child(job, jobs)
    outcomes = []
    for i, (point, values, problem) in enumerate(prepared):
        record = records.get(i, {"error": problem or "not run"})
        if problem:
            record = {"error": problem}
        if record.get("calls") == 0 and not record.get("error") and not record.get("mismatches"):
            outcomes.append(None)
            continue
        chosen = tuple(record.get("cases", ()))
        error = record.get("error", "")
        expected, per_call = point.expected, ()
        if model.hidden and record.get("received") and not error:   # what the host code set, call by call
            per_call, error = host_check(model, point.values, record["received"], point.device, point.rule)
            cases = set(per_call) - {status.NOTHING_TO_DO}
            if not error and not cases and not record.get("mismatches"):
                outcomes.append(None)   # every call it made had an empty meta_for: as if never reached
                continue
            expected = max(0, cases.pop()) if len(cases) == 1 else None   # 0: no case fits
        if not error and any(c < 0 for c in chosen):
            error = record.get("failure") or f"the dispatcher returned {min(chosen)}"
        race = record.get("race")
        outcomes.append(PointResult(
            point.case, values, device_json(point.device), expected, chosen,
            tuple(record.get("mismatches", ())), tuple(record.get("guards", ())), error, point.uneven,
            point.origin, record.get("serial_s", 0.0) + record.get("gpu_s", 0.0), point.threads, point.realistic,
            races.described(race, sites or {}) if race else None, per_call, record.get("bounds", {})))
    return outcomes


def _run_child(job: dict, points: list) -> dict:
    """Point id -> the runner's result record; a crash or a hang costs the point it happened in."""
    records: dict = {}
    remaining = list(points)
    while remaining:
        current = None
        try:
            done = subprocess.run(python_command(str(RUNNER)), input=json.dumps({**job, "points": remaining}),
                                  capture_output=True, text=True, timeout=60 + 20 * len(remaining),
                                  env=building.environment())
            out, code, stderr, hung = done.stdout, done.returncode, done.stderr, False
        except subprocess.TimeoutExpired as exc:
            out, code, hung = _text(exc.stdout), None, True
            stderr = _text(exc.stderr)
        finished = False
        for line in out.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("event") == "start":
                current = (record["point"], record["phase"])
            elif record.get("event") == "result":
                records[record["point"]] = record
                current = None
            elif record.get("event") == "done":
                finished = True
        if finished:
            break
        if current is None:  # died before or between points: nothing to blame on one of them
            why = _death(code, hung, stderr)
            for p in remaining:
                records.setdefault(p["id"], {"error": f"the runner failed: {why}"})
            break
        point, phase = current
        version = {"serial": "serial C", "fused": "serial C (built with FMA contraction)",
                   "gpu2": "GPU version (emulated, in the second thread order)"}.get(phase, "GPU version (emulated)")
        records[point] = {"error": f"the {version} {_death(code, hung, stderr)}"}
        remaining = [p for p in remaining if p["id"] not in records]
    return records


def _death(code, hung: bool, stderr: str) -> str:
    if hung:
        return "did not finish in time (a deadlock at __syncthreads?)"
    failed = next((line.strip() for line in (stderr or "").splitlines() if "Assertion" in line and "failed" in line),
                  None)
    if failed is not None and code is not None and code < 0:   # glibc's `f.c:8: g: Assertion `s >= 4' failed.`
        return (f"stopped at an assertion of the program ({failed}): the values drawn are outside what it "
                "allows; points are drawn within the assertions the analysis can use, not those it warned "
                "of (PK023)")
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"crashed ({name})"
    tail = " ".join(stderr.strip().splitlines()[-3:]) if stderr else ""
    return f"exited with status {code}" + (f": {tail}" if tail else "")


def _text(data) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data

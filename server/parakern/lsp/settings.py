"""The "parakern" settings section: initializationOptions and workspace/didChangeConfiguration.

    target            "sm_80"                 ptxas architecture for the register counter
    gpuProfiles       ["h100", "a100", "t4"]   GPUs whose conditions the hover shows
    strategies        null                     decision codes enabled (STRATEGY_CODES, from the strategies); null: all
    occupancy         null                     device profile name: adds the P_occ counter
    caseDiagnostics   true                     one Information diagnostic per case
    caseTrees         true                     false: front-end diagnostics only (no worker jobs)
    timeLimitSeconds  60                       per schedule
    bench             {}                       bench defaults: data, sweep, repeat, device

A bad value keeps the previous one and produces a warning (shown to the user),
never an exception. `testFault` is honoured only when the environment variable
PARAKERN_LSP_TEST_HOOKS=1 is set (tests inject worker crashes and delays with it).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace

from parakern.machine.devices import DEFAULT_PROFILES, PROFILES
from parakern.strategies.decisions import strategy_codes
from parakern.machine.targets import DEFAULT_TARGET, TARGETS, unsupported
from parakern.lsp.benchjob import BenchSettingsError, bench_values, settings_problem

STRATEGY_CODES = strategy_codes()
TEST_HOOKS_ENV = "PARAKERN_LSP_TEST_HOOKS"


@dataclass(frozen=True)
class Settings:
    target: str = DEFAULT_TARGET
    gpu_profiles: tuple[str, ...] = DEFAULT_PROFILES
    strategies: "tuple[str, ...] | None" = None
    occupancy: "str | None" = None
    case_diagnostics: bool = True
    case_trees: bool = True
    time_limit_seconds: float = 60.0
    bench: dict = field(default_factory=dict, compare=False, hash=False)
    test_fault: "dict | None" = field(default=None, compare=False, hash=False)

    def sizes(self) -> str:
        """The bench's data and sweep settings as canonical JSON: the sizes a summary says what runs
        at (reports/runs.py); "{}" for the bench's defaults."""
        try:
            values = bench_values(self.bench)
        except BenchSettingsError:   # reported when set; the defaults meanwhile
            return "{}"
        return json.dumps({k: values[k] for k in ("data", "sweep") if values[k]}, sort_keys=True)

    def analysis_part(self, function: str = "") -> str:
        """What the summary of a schedule in `function` depends on, as canonical JSON:
        part of its cache key. (caseDiagnostics and the bench's repeat and device only change
        what is shown; its data and sweep, the sizes the summary says what runs at; a test
        fault only the functions it names; a new time limit drops the cached timeouts instead.)"""
        fault = self.test_fault
        if fault and fault.get("function") not in (None, function):
            fault = None
        return json.dumps({
            "target": self.target, "profiles": list(self.gpu_profiles),
            "strategies": None if self.strategies is None else sorted(self.strategies),
            "occupancy": self.occupancy, "fault": fault, "sizes": self.sizes(),
        }, sort_keys=True)

    def to_json(self) -> dict:
        return {"target": self.target, "gpuProfiles": list(self.gpu_profiles),
                "strategies": None if self.strategies is None else list(self.strategies),
                "occupancy": self.occupancy, "caseDiagnostics": self.case_diagnostics,
                "caseTrees": self.case_trees, "timeLimitSeconds": self.time_limit_seconds,
                "bench": dict(self.bench)}


def _strategy_code(value) -> "str | None":
    if not isinstance(value, str):
        return None
    text = value.strip().replace("’", "'")
    if not text.startswith("("):
        text = f"({text})"
    return text if text in STRATEGY_CODES else None


def update(settings: Settings, raw) -> tuple[Settings, list[str]]:
    """`settings` with the keys of `raw` (a dict, camelCase) applied; unknown keys are
    ignored, bad values reported in the returned warnings and left unchanged."""
    warnings: list[str] = []
    if raw is None:
        return settings, warnings
    if not isinstance(raw, dict):
        return settings, [f"parakern settings must be an object, got {type(raw).__name__}"]
    changes: dict = {}

    if "target" in raw:
        value = raw["target"]
        target = value.strip() if isinstance(value, str) else None
        if target not in TARGETS:
            warnings.append(f"parakern.target: {value!r} is not one of {', '.join(TARGETS)}")
        elif why := unsupported(target):
            warnings.append(f"parakern.target: {why}")
        else:
            changes["target"] = target
    if "gpuProfiles" in raw:
        value = raw["gpuProfiles"]
        if value is None:
            changes["gpu_profiles"] = ()
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            known = [v.strip().lower() for v in value if v.strip().lower() in PROFILES]
            unknown = [v for v in value if v.strip().lower() not in PROFILES]
            if unknown:
                warnings.append(f"parakern.gpuProfiles: unknown GPU {', '.join(map(repr, unknown))}; "
                                f"known: {', '.join(sorted(PROFILES))}")
            changes["gpu_profiles"] = tuple(dict.fromkeys(known))
        else:
            warnings.append("parakern.gpuProfiles must be a list of GPU names")
    if "strategies" in raw:
        value = raw["strategies"]
        if value is None:
            changes["strategies"] = None
        elif isinstance(value, (list, tuple)):
            codes = [_strategy_code(v) for v in value]
            bad = [v for v, c in zip(value, codes) if c is None]
            if bad:
                warnings.append(f"parakern.strategies: unknown decision code {', '.join(map(repr, bad))}; "
                                f"known: {', '.join(STRATEGY_CODES)}")
            changes["strategies"] = tuple(dict.fromkeys(c for c in codes if c))
        else:
            warnings.append("parakern.strategies must be a list of decision codes or null")
    if "occupancy" in raw:
        value = raw["occupancy"]
        if value is None or value == "":
            changes["occupancy"] = None
        elif isinstance(value, str) and value.strip().lower() in PROFILES:
            changes["occupancy"] = value.strip().lower()
        else:
            warnings.append(f"parakern.occupancy: {value!r} is not a known GPU "
                            f"({', '.join(sorted(PROFILES))}) nor null")
    for key, name in (("caseDiagnostics", "case_diagnostics"), ("caseTrees", "case_trees")):
        if key in raw:
            value = raw[key]
            if isinstance(value, bool):
                changes[name] = value
            else:
                warnings.append(f"parakern.{key} must be true or false")
    if "timeLimitSeconds" in raw:
        value = raw["timeLimitSeconds"]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 3600:
            changes["time_limit_seconds"] = float(value)
        else:
            warnings.append("parakern.timeLimitSeconds must be a number of seconds in (0, 3600]")
    if "bench" in raw:
        value = raw["bench"]
        if isinstance(value, dict):
            problem = settings_problem(value)
            if problem:
                warnings.append(problem)
            else:
                changes["bench"] = dict(value)
        elif value is None:
            changes["bench"] = {}
        else:
            warnings.append("parakern.bench must be an object")
    if "testFault" in raw and os.environ.get(TEST_HOOKS_ENV) == "1":
        value = raw["testFault"]
        changes["test_fault"] = dict(value) if isinstance(value, dict) else None
    return replace(settings, **changes), warnings


def section_of(settings_payload):
    """The "parakern" part of a didChangeConfiguration payload: {"parakern": {...}} or the
    section itself; None when the payload carries nothing of ours (then pull it)."""
    if not isinstance(settings_payload, dict) or not settings_payload:
        return None
    if isinstance(settings_payload.get("parakern"), dict):
        return settings_payload["parakern"]
    known = {"target", "gpuProfiles", "strategies", "occupancy", "caseDiagnostics", "caseTrees",
             "timeLimitSeconds", "bench", "testFault"}
    if known & set(settings_payload):
        return settings_payload
    return None

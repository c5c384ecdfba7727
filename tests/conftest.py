import ctypes
import functools
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

# Summaries kept between editor sessions (lsp/diskcache.py) go to a folder of this test
# session, inherited by every server and worker the tests start: never the user's cache.
os.environ["PARAKERN_CACHE_DIR"] = tempfile.mkdtemp(prefix="parakern-test-cache-")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
# the head of a generated kernel up to its name: its register cap (IR level 3) or, for an
# instance whose point fixes the block's size, its launch bounds (codegen/kernel_source.py)
KERNEL_HEAD = r"__global__ void (?:__maxnreg__\(\d+\) )?(?:__launch_bounds__\(\d+\) )?"
WRONG = SAMPLES / "wrong"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def sample_files():
    return sorted(SAMPLES.glob("*.c"))


def wrong_files():
    return sorted(WRONG.glob("*.c"))


def cli(*args, cwd: "Path | None" = None) -> subprocess.CompletedProcess:
    """`parakern ARGS` in this process (commands.cli.main): its exit status and what it printed,
    shaped as the subprocess a user's shell would run. For the tests that check only arguments,
    exit codes and output; what a process does (signals, a full stdout, children) starts one."""
    import contextlib
    import io

    from parakern.commands.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd or ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(["parakern", *map(str, args)], code, out.getvalue(), err.getvalue())


def text_at(path: Path, span) -> str:
    """The source text a span covers (1-based lines, code-point columns, end exclusive)."""
    lines = path.read_text().split("\n")
    if span.line == span.end_line:
        return lines[span.line - 1][span.col - 1:span.end_col - 1]
    parts = [lines[span.line - 1][span.col - 1:]] + lines[span.line:span.end_line - 1]
    return "\n".join(parts + [lines[span.end_line - 1][:span.end_col - 1]])


def expr(text: str):
    """Parses an expression with every identifier an integer symbol (sympy's N, S, E... too)."""
    import re

    import sympy

    from parakern.symbolic.symbols import sym
    names = {n: sym(n) for n in re.findall(r"[A-Za-z_]\w*", text) if n not in ("floor", "Mod", "ceiling")}
    names.update(floor=sympy.floor, Mod=sympy.Mod, ceiling=sympy.ceiling)
    return sympy.parse_expr(text, local_dict=names)


def same(value, expected: str) -> bool:
    """sympy equivalence of an expression with the text of the expected one."""
    import sympy
    return sympy.simplify(value - expr(expected)) == 0


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """Compile C (a sample name or source text) with gcc -O0 and load it."""
    build = tmp_path_factory.mktemp("serial")
    libraries = {}

    def load(sample: "str | None" = None, text: "str | None" = None) -> ctypes.CDLL:
        key = sample or text
        if key not in libraries:
            source = ROOT / "samples" / f"{sample}.c"
            if text is not None:
                source = build / f"case{len(libraries)}.c"
                source.write_text(text)
            library = build / f"lib{len(libraries)}.so"
            subprocess.run([shutil.which("gcc") or "gcc", "-O0", "-shared", "-fPIC", "-include", str(ROOT / "samples" / "metafork.h"),
                            "-I", str(ROOT / "samples"), str(source), "-o", str(library), "-lm"],
                           check=True, capture_output=True, timeout=60)
            libraries[key] = ctypes.CDLL(str(library))
        return libraries[key]

    return load


# ------------------------------------------------------------------ ptxas, recorded

PTXAS_RECORD = ROOT / "tests" / "golden" / "ptxas.json"
RECORDING = os.environ.get("PARAKERN_UPDATE_GOLDEN") == "1"


def _ptxas_key(ptx: str, target: str, max_registers) -> str:
    import hashlib
    return hashlib.sha256(f"{target}|{max_registers}|{ptx}".encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def _ptxas_record() -> dict:
    return json.loads(PTXAS_RECORD.read_text()) if PTXAS_RECORD.exists() else {}


def use_recorded_ptxas(monkeypatch) -> str:
    """ptxas's register counts from tests/golden/ptxas.json, keyed by the PTX it was given:
    the counts the golden files and the unit tier hold, whether or not ptxas is here, and no
    process started. With PARAKERN_UPDATE_GOLDEN=1 and ptxas installed, ptxas runs and every
    answer is recorded (written at the end of the session). A PTX the record lacks means the
    IR changed since it was written: record again where ptxas is installed."""
    from parakern.counters import registers
    from parakern.machine import targets
    record = _ptxas_record()
    real = shutil.which("ptxas")
    if RECORDING and real is not None:
        measured = registers.ptxas_info

        def recording(ptxas, ptx, target="sm_80", max_registers=None):
            info = measured(ptxas, ptx, target, max_registers)
            record[_ptxas_key(ptx, target, max_registers)] = [info.registers, info.spill_stores, info.spill_loads]
            return info

        monkeypatch.setattr(registers, "ptxas_info", recording)
        return "ptxas"

    def recorded(ptxas, ptx, target="sm_80", max_registers=None):
        key = _ptxas_key(ptx, target, max_registers)
        if key not in record:
            pytest.fail("a kernel's PTX is not in tests/golden/ptxas.json: the IR changed since it was written; "
                        "record it again where ptxas is installed: PARAKERN_UPDATE_GOLDEN=1 "
                        ".venv/bin/python -m pytest tests/unit")
        regs, stores, loads = record[key]
        return registers.PtxasInfo(regs, stores, loads, "recorded")

    monkeypatch.setattr(registers.shutil, "which", lambda name, *a, **k: "ptxas" if name == "ptxas" else None)
    monkeypatch.setattr(registers, "ptxas_info", recorded)
    # the recorded ptxas builds for every target parakern offers (CUDA 12's does): not asked
    monkeypatch.setattr(targets, "_ptxas_targets", lambda ptxas: frozenset(targets.TARGETS))
    return "recorded"


@pytest.fixture
def golden_registers(monkeypatch):
    """The register counts the golden files hold (use_recorded_ptxas)."""
    yield use_recorded_ptxas(monkeypatch)


def pytest_sessionfinish(session, exitstatus):
    if RECORDING and shutil.which("ptxas") and _ptxas_record():
        PTXAS_RECORD.write_text(json.dumps(dict(sorted(_ptxas_record().items())), indent=0) + "\n")


# ------------------------------------------------------------------ one analysis per test run

def sample_path(name: str) -> Path:
    """samples/NAME.c (`jacobi1d`, `polybench/gemm`, `wrong/...`)."""
    return SAMPLES / f"{name}.c"


@functools.lru_cache(maxsize=None)
def analysed(name: "str | None" = None, text: "str | None" = None, file: str = "", **options):
    """The pipeline's analysis of a sample (by name) or of C text, made once in the whole test
    run whatever test asks for it: the results are frozen data, shared safely."""
    from parakern.pipeline import Options, analyze
    if text is None:
        path = sample_path(name)
        text, file = path.read_text(), file or str(path)
    return analyze(text, file or "input.c", Options(**options))


# ------------------------------------------------------------------ tiers

# `pytest -m "not slow"` is the unit tier (well under a minute); the whole suite also runs
# the editor end to end, the CPU emulation of every sample and nvcc. needs_cuda marks what
# the CUDA toolkit decides (nvcc, ptxas, cuda_occupancy.h), editor what drives a server.
EDITOR_MODULES = {"test_lsp", "test_lsp_robustness", "test_lsp_bench", "test_neovim", "test_lsp_lifecycle"}
SLOW_MODULES = EDITOR_MODULES | {"test_bench_emulated", "test_verify", "test_dispatch", "test_frontend_robustness",
                                 "test_occupancy", "test_polybench", "test_machine_model",
                                 "test_traffic_emulated", "test_dispatch_auto", "test_register_tiles_verify",
                                 "test_padded_tiles_emulated", "test_verify_default_dispatcher", "test_tuned_cache"}
SLOW_TESTS = {"test_nvcc_compiles_without_warnings", "test_cuda_agrees_with_the_ir_on_the_cpu",
              "test_accumulated_kernels_match_the_serial_c", "test_staging_between_loops_matmul_cached",
              "test_dispatcher_falls_back_on_the_real_fit", "test_emit_schedule_compiles_alone",
              "test_cli_emit_subprocess_exit_code", "test_occupancy_creates_a_branch",
              "test_no_accumulator_moves_where_the_loops_may_not_run_or_the_array_is_staged",
              "test_the_instances_compile_with_nvcc_and_ptxas_without_warnings",
              "test_both_kernels_verify_with_no_mismatch", "test_the_instance_is_what_runs_where_the_values_match",
              "test_every_configuration_tune_returns_is_feasible",
              "test_the_coarsened_cases_compute_what_the_serial_c_does",
              "test_each_row_reads_its_own_part_of_a_flattened_staged_array"}


def pytest_collection_modifyitems(config, items):
    import re
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        name = item.originalname or item.name
        if module in EDITOR_MODULES:
            item.add_marker(pytest.mark.editor)
        if module in SLOW_MODULES or name in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        reasons = " ".join(str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif"))
        if module == "test_occupancy" or re.search(r"nvcc|ptxas|CUDA", reasons):
            item.add_marker(pytest.mark.needs_cuda)


def pytest_unconfigure(config):
    """The test session's summary folder goes with it."""
    folder = os.environ.get("PARAKERN_CACHE_DIR", "")
    if "parakern-test-cache-" in folder:
        shutil.rmtree(folder, ignore_errors=True)

"""What `parakern.bench` needs (pycuda and an NVIDIA GPU), checked without ever raising.

The bench runner itself comes in a later version; for now the command says what is
missing and how to get it, or that both are there and the runner is not included yet.
"""
from __future__ import annotations

import shutil
import subprocess


def check() -> dict:
    """{"pycuda": bool, "pycuda_error": str, "gpus": [names], "gpu_error": str}."""
    found = {"pycuda": False, "pycuda_error": "", "gpus": [], "gpu_error": ""}
    driver = None
    try:
        import pycuda.driver as driver  # noqa: F811
        found["pycuda"] = True
    except Exception as exc:  # ImportError, or a broken build that fails on import
        found["pycuda_error"] = f"{type(exc).__name__}: {exc}"
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=15)
            found["gpus"] = [line.strip() for line in out.stdout.splitlines() if line.startswith("GPU ")]
            if not found["gpus"]:
                found["gpu_error"] = (out.stderr or out.stdout).strip().splitlines()[0] if (out.stderr or out.stdout).strip() \
                    else "nvidia-smi lists no GPU"
        except Exception as exc:
            found["gpu_error"] = f"nvidia-smi failed ({type(exc).__name__})"
    else:
        found["gpu_error"] = "nvidia-smi not found"
    if driver is not None and not found["gpus"]:
        try:
            driver.init()
            found["gpus"] = [f"GPU {k}: {driver.Device(k).name()}" for k in range(driver.Device.count())]
        except Exception as exc:
            found["gpu_error"] = found["gpu_error"] or f"CUDA driver: {exc}"
    return found


def message(found: dict) -> tuple[bool, str]:
    """(everything present, text for window/showMessage)."""
    missing = []
    if not found["pycuda"]:
        missing.append("pycuda — install the bench extra with the CUDA toolkit present: "
                       "pip install -e '.[bench]' (pycuda builds from source against CUDA_ROOT, "
                       "e.g. /usr/local/cuda)")
    if not found["gpus"]:
        missing.append(f"an NVIDIA GPU ({found['gpu_error'] or 'none found'}) — run the bench on "
                       "a machine with an NVIDIA GPU and its driver")
    if missing:
        return False, "parakern Bench cannot run here. Missing: " + "; ".join(missing) + "."
    gpus = ", ".join(g.split(":", 1)[-1].split("(UUID")[0].strip() for g in found["gpus"])
    return True, (f"parakern Bench: pycuda and {len(found['gpus'])} GPU(s) found ({gpus}); "
                  "the bench runner is not part of this version of parakern yet.")

"""What a dispatcher returns other than the case it launched (from 1): the values, their names
in the emitted C (emit.PREAMBLE) and what each says to a user (verify, the bench)."""
from __future__ import annotations

NOTHING_TO_DO = 0      # a meta_for is empty at these values: nothing launched, as the serial C runs nothing
NO_CASE_FITS = -1      # no case fits the device: nothing launched
CUDA_ERROR = -2        # a CUDA call failed (a launch's error stays readable with cudaGetLastError)
INVALID_VALUES = -3    # an assertion, a divisor or a shift count of the function fails: nothing launched

NAMES = {NOTHING_TO_DO: "PARAKERN_NOTHING_TO_DO", NO_CASE_FITS: "PARAKERN_NO_CASE_FITS",
         CUDA_ERROR: "PARAKERN_CUDA_ERROR", INVALID_VALUES: "PARAKERN_INVALID_VALUES"}
MEANINGS = {NOTHING_TO_DO: "the dispatcher had nothing to run (an empty meta_for)",
            NO_CASE_FITS: "the dispatcher found no case that fits the device",
            INVALID_VALUES: "the dispatcher refused the values: an assertion, a divisor or a shift count of the "
                            "function fails"}


def defines() -> str:
    """The #define of each, as the emitted file's preamble has them."""
    return "".join(f"#define {name} {value if value >= 0 else f'({value})'}\n" for value, name in NAMES.items())


def meaning(status: int, cuda_error: str = "") -> str:
    """What a status below 1 says (a CUDA error: `cuda_error`, the runtime's message)."""
    if status == CUDA_ERROR:
        return f"CUDA error: {cuda_error}"
    return MEANINGS.get(status, f"the dispatcher returned {status}")

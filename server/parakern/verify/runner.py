"""Child process of `parakern verify`: runs the serial and the GPU-emulated library on points.

Run as a script (`python runner.py < job.json`), never imported by the
package, so that a crash of generated code (a segfault, an abort) or a hang
costs one point and not the caller. Standard library only (ctypes).

The job (JSON on stdin): the two shared libraries, the function, its
arguments, and the points. For every point it prints JSON lines on stdout:
{"event": "start", "point": i, "phase": "serial" | "gpu"} before each call,
then {"event": "result", "point": i, ...} with the cases the dispatcher
returned, the mismatches (first one per array, with a count) and the guard
zones found overwritten. Arrays get the same seeded pseudo-random contents
in both versions; each has guard elements on both sides.

With "races" in the job, the GPU version runs twice: in the emulation's default order with
its shadow memory noting every element reference (parakern_race.h: the first race, if any,
is in the record as "race"), then without notes in a seeded shuffled order of blocks and
threads ("order_seed"), whose results are compared too (mismatches marked "order": 2).
With "fused" (the serial C built with FMA contraction), floating arrays are compared within
the spread between the two serial results as well (SPREAD_FACTOR); "tolerance" replaces
TOLERANCE.
"""
import ctypes
import json
import math
import random
import sys
import time

CTYPES = {
    "char": ctypes.c_byte, "unsigned char": ctypes.c_ubyte, "short": ctypes.c_short,
    "unsigned short": ctypes.c_ushort, "int": ctypes.c_int, "unsigned": ctypes.c_uint,
    "long": ctypes.c_long, "unsigned long": ctypes.c_ulong, "long long": ctypes.c_longlong,
    "unsigned long long": ctypes.c_ulonglong, "float": ctypes.c_float, "double": ctypes.c_double,
}
# Floating results: |got - expected| <= TOLERANCE * max(1, the largest |expected| of the array).
# Relative to the array's magnitude, not to each element's: a GPU contracts a * b + c into one
# FMA where gcc does not, so a sum of terms that cancels to near zero (a matmul coefficient)
# differs in the last bits of its terms' size, not of its own. Exact for integer types.
TOLERANCE = {"float": 1e-5, "double": 1e-12}
# ... or, where larger, SPREAD_FACTOR times the array's spread: the largest difference between
# the serial C built without and with FMA contraction (job "fused"). Both are roundings of the
# same program; the GPU's is a third (nvcc contracts where it chooses), so it may lie as far
# from the contracted one as the plain one does: twice the spread from the plain one. A
# recurrence that amplifies rounding (ADI's tridiagonal solves: 1.65e-11 of spread) is judged
# by its own sensitivity, a real error (a wrong index, a missing term) stays far above it.
SPREAD_FACTOR = 2.0
GUARD_BYTE = 0x5A
INTEGERS_BELOW = 100   # random integer inputs are in [0, 100), or below the extent they index


def emit(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def fill(ctype, count, rng, below: int = INTEGERS_BELOW):
    """Random contents: floats in [-1, 1], integers in [0, below) (below: inputs.index_limits)."""
    if ctype in TOLERANCE:
        return [rng.uniform(-1.0, 1.0) for _ in range(count)]
    return [rng.randrange(0, max(1, below)) for _ in range(count)]


class Buffer:
    """An array argument with `guard` elements before and after it."""

    def __init__(self, ctype, size, guard, values):
        self.ctype, self.size, self.guard = ctype, size, guard
        self.item = CTYPES[ctype]
        self.data = (self.item * (size + 2 * guard))()
        width = ctypes.sizeof(self.item)
        ctypes.memset(self.data, GUARD_BYTE, width * (size + 2 * guard))
        for i, v in enumerate(values):
            self.data[guard + i] = v

    def copy(self):
        other = Buffer.__new__(Buffer)
        other.ctype, other.size, other.guard, other.item = self.ctype, self.size, self.guard, self.item
        other.data = (self.item * len(self.data)).from_buffer_copy(self.data)
        return other

    def pointer(self):
        return ctypes.c_void_p(ctypes.addressof(self.data) + self.guard * ctypes.sizeof(self.item))

    def body(self):
        return self.data[self.guard:self.guard + self.size]

    def guards_intact(self):
        width = ctypes.sizeof(self.item)
        raw = bytes(self.data)
        zone = width * self.guard
        return raw[:zone] == bytes([GUARD_BYTE]) * zone and raw[len(raw) - zone:] == bytes([GUARD_BYTE]) * zone


def magnitude(values) -> float:
    """max(1, the largest finite |value|): what a floating array's differences are measured against."""
    return max([1.0] + [abs(v) for v in values if not (math.isnan(v) or math.isinf(v))])


def same(ctype, expected, got, scale=1.0, tolerance=None, spread=0.0):
    """expected and got are equal within the tolerance for an array of magnitude `scale` (tolerance:
    ctype -> relative bound, TOLERANCE by default), or within SPREAD_FACTOR * spread."""
    tolerance = tolerance or TOLERANCE
    if ctype not in TOLERANCE:
        return expected == got
    if math.isnan(expected) or math.isnan(got):
        return math.isnan(expected) and math.isnan(got)
    if math.isinf(expected) or math.isinf(got):
        return expected == got
    return abs(got - expected) <= max(tolerance.get(ctype, TOLERANCE[ctype]) * max(scale, abs(expected)),
                                      SPREAD_FACTOR * spread)


def spread(plain, fused) -> float:
    """The largest |plain - fused| over the elements finite in both: how far two roundings of
    the serial C lie apart in this array."""
    return max([0.0] + [abs(p - f) for p, f in zip(plain.body(), fused.body())
                        if math.isfinite(p) and math.isfinite(f)])


def unflatten(flat, dims):
    if not dims:
        return [flat]
    index = []
    for d in reversed(dims):
        index.append(flat % d)
        flat //= d
    return list(reversed(index))


def compare(name, dims, expected, got, tolerance=None, spread=0.0):
    """The first element of `got` that differs from `expected` (same()), with the count of them."""
    if bytes(expected.data) == bytes(got.data):
        return None
    first, count = None, 0
    scale = magnitude(expected.body()) if expected.ctype in TOLERANCE else 1.0
    for i, (e, g) in enumerate(zip(expected.body(), got.body())):
        if not same(expected.ctype, e, g, scale, tolerance, spread):
            count += 1
            if first is None:
                first = {"array": name, "flat": i, "index": unflatten(i, dims), "expected": _json(e),
                         "got": _json(g)}
                if expected.ctype in TOLERANCE:
                    rule = (tolerance or TOLERANCE).get(expected.ctype, TOLERANCE[expected.ctype])
                    first["allowed"] = max(rule * max(scale, abs(e)) if math.isfinite(e) else 0.0,
                                           SPREAD_FACTOR * spread)
    if first is None:
        return None
    first["count"] = count
    first["size"] = expected.size
    return first


def _json(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return repr(v)
    return v


ENTRY = "parakern_entry_"   # build.with_entries' pointer to each function, of external linkage


def setup(lib, function, arguments):
    """The function of the library, through its entry pointer (build.with_entries: a static
    function has no symbol), else by its name."""
    argtypes = [ctypes.c_void_p if a["kind"] != "scalar" else CTYPES[a["ctype"]] for a in arguments]
    try:
        address = ctypes.c_void_p.in_dll(lib, ENTRY + function).value
    except ValueError:   # a library built without the entry
        f = getattr(lib, function)
        f.argtypes, f.restype = argtypes, None
        return f
    return ctypes.CFUNCTYPE(None, *argtypes)(address)


def run_point(job, point, serial, gpu, lib, fused_lib=None):
    rng = random.Random(point["seed"])
    arguments = job["arguments"]
    races = job.get("races", False)
    base = {}
    for a in arguments:
        if a["kind"] != "scalar":
            size = point["sizes"][a["name"]]
            below = min(INTEGERS_BELOW, point.get("limits", {}).get(a["name"], INTEGERS_BELOW))
            base[a["name"]] = Buffer(a["ctype"], size, job["guard"], fill(a["ctype"], size, rng, below))
    mine = {name: b.copy() for name, b in base.items()}
    again = {name: b.copy() for name, b in base.items()} if races else {}
    fused = {name: b.copy() for name, b in base.items()} if fused_lib else {}

    def args(buffers):
        return [buffers[a["name"]].pointer() if a["kind"] != "scalar" else point["scalars"][a["name"]]
                for a in arguments]

    emit({"event": "start", "point": point["id"], "phase": "serial"})
    start = time.perf_counter()
    serial(*args(base))
    serial_s = time.perf_counter() - start
    spreads = {}
    if fused_lib:   # the serial C with FMA contraction: how much rounding alone moves each array
        emit({"event": "start", "point": point["id"], "phase": "fused"})
        start = time.perf_counter()
        fused_lib(*args(fused))
        serial_s += time.perf_counter() - start
        spreads = {name: spread(base[name], fused[name]) for name in base if base[name].ctype in TOLERANCE}
    d = point["device"]
    if d.get("profile"):   # the GPU the emulation plays: what the default dispatcher's model reads
        lib.parakern_verify_profile(*d["profile"])
    lib.parakern_verify_rule(1 if point.get("rule") == "tree" else 0)
    lib.parakern_verify_device(d["regsPerBlock"], d["sharedMemPerBlockOptin"], d["sharedMemPerBlock"],
                               d["maxThreadsPerBlock"])
    lib.parakern_verify_reset()
    lib.parakern_verify_races(1 if races else 0)
    lib.parakern_verify_order(0)
    emit({"event": "start", "point": point["id"], "phase": "gpu"})
    start = time.perf_counter()
    gpu(*args(mine))
    gpu_s = time.perf_counter() - start
    calls = lib.parakern_verify_calls()
    cases = [lib.parakern_verify_case(i) for i in range(min(calls, 4096))]
    failure = lib.parakern_verify_failure().decode("utf-8", "replace")
    received = [{name: _number(lib.parakern_verify_argument(c, i)) for i, name in enumerate(job.get("scalars", ()))}
                for c in range(min(calls, job.get("logged", 0)))]
    race = None
    if lib.parakern_verify_race_count() > 0:
        race = json.loads(lib.parakern_verify_race().decode("utf-8", "replace"))
        race["elements"] = lib.parakern_verify_race_count()
        if not race["shared"]:
            race["index"] = unflatten(race["index"], point["dims"].get(race["array"], []))
        else:
            race["index"] = [race["index"]]
    tolerance = job.get("tolerance") or TOLERANCE
    mismatches, guards = differences(arguments, point, base, mine, tolerance, spreads)
    if races:   # the same call with blocks and threads in another order: the same results
        lib.parakern_verify_reset()
        lib.parakern_verify_races(0)
        lib.parakern_verify_order(point["order_seed"])
        emit({"event": "start", "point": point["id"], "phase": "gpu2"})
        start = time.perf_counter()
        gpu(*args(again))
        gpu_s += time.perf_counter() - start
        lib.parakern_verify_order(0)
        failure = failure or lib.parakern_verify_failure().decode("utf-8", "replace")
        if not mismatches and not guards:
            mismatches, guards = differences(arguments, point, base, again, tolerance, spreads, order=2)
    bounds = {}   # the arrays whose bound the spread set, above the relative tolerance
    for name, s in spreads.items():
        fixed = tolerance.get(base[name].ctype, TOLERANCE[base[name].ctype]) * magnitude(base[name].body())
        if SPREAD_FACTOR * s > fixed:
            bounds[name] = {"allowed": SPREAD_FACTOR * s, "spread": s}
    emit({"event": "result", "point": point["id"], "calls": calls, "cases": cases, "failure": failure,
          "mismatches": mismatches, "guards": guards, "race": race, "received": received, "bounds": bounds,
          "serial_s": serial_s, "gpu_s": gpu_s})


def _number(value: float):
    return int(value) if value.is_integer() else value


def differences(arguments, point, expected, got, tolerance=None, spreads=None, order=1):
    """The first mismatch per array and the arrays whose guard zones were overwritten (compare();
    spreads: array -> its spread); `order`: which run of the GPU version `got` holds (2: the
    second thread order)."""
    mismatches, guards = [], []
    for a in arguments:
        if a["kind"] == "scalar":
            continue
        name = a["name"]
        for who, buf in (("serial", expected[name]), ("gpu", got[name])):
            if not buf.guards_intact():
                guards.append({"array": name, "version": who, **({"order": order} if order > 1 else {})})
        found = compare(name, point["dims"].get(name, []), expected[name], got[name], tolerance,
                        (spreads or {}).get(name, 0.0))
        if found:
            if order > 1:
                found["order"] = order
            mismatches.append(found)
    return mismatches, guards


def _exit_with_parent():
    """parakern/process/lifeline.py, loaded by path (this script does not import the package): the
    runner ends when `parakern verify` does, even mid-point in generated code."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "process/lifeline.py"
    spec = importlib.util.spec_from_file_location("parakern_lifeline", path)
    lifeline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lifeline)
    lifeline.exit_with_parent()


def main():
    _exit_with_parent()
    job = json.load(sys.stdin)
    serial_lib = ctypes.CDLL(job["serial"])
    gpu_lib = ctypes.CDLL(job["gpu"])
    gpu_lib.parakern_verify_device.argtypes = [ctypes.c_int, ctypes.c_long, ctypes.c_long, ctypes.c_int]
    gpu_lib.parakern_verify_profile.argtypes = ([ctypes.c_int] * 5 + [ctypes.c_long] + [ctypes.c_int] * 3
                                                + [ctypes.c_long])
    gpu_lib.parakern_verify_rule.argtypes = [ctypes.c_int]
    gpu_lib.parakern_verify_case.argtypes = [ctypes.c_int]
    gpu_lib.parakern_verify_argument.argtypes = [ctypes.c_int, ctypes.c_int]
    gpu_lib.parakern_verify_argument.restype = ctypes.c_double
    gpu_lib.parakern_verify_failure.restype = ctypes.c_char_p
    gpu_lib.parakern_verify_race.restype = ctypes.c_char_p
    gpu_lib.parakern_verify_race_count.restype = ctypes.c_long
    gpu_lib.parakern_verify_races.argtypes = [ctypes.c_int]
    gpu_lib.parakern_verify_order.argtypes = [ctypes.c_ulonglong]
    gpu_lib.parakern_verify_init()
    serial = setup(serial_lib, job["function"], job["arguments"])
    gpu = setup(gpu_lib, job["function"], job["arguments"])
    fused = setup(ctypes.CDLL(job["fused"]), job["function"], job["arguments"]) if job.get("fused") else None
    for point in job["points"]:
        run_point(job, point, serial, gpu, gpu_lib, fused)
    emit({"event": "done"})


if __name__ == "__main__":
    main()

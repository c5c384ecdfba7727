"""`parakern bench`: every case of a schedule timed on a real GPU over a parameter sweep.

    plan.py      the sweep (data x program parameters) and, per point, the case the dispatcher
                 picks on a device (real, or a named profile for --plan-only), skipped points and why
    baseline.py  the serial C (gcc, called through ctypes), built once, timed per data size
    runner.py    the pycuda runner (nvcc cubin, CUDA events, checks against the baseline)
    reports/document.py    the paper-style table (text / markdown), JSON, CSV, heat maps
    command.py   the command line
"""

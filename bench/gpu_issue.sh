#!/usr/bin/env bash
# Issue 33 on a GPU in one call of the device tool (docs/bench/README.md has the call): the
# default dispatcher beside every case at sizes never measured, the references, PPCG's kernels
# beside ours, compute-sanitizer on the kernel kinds new since the last run, and the page.
#
#   RESULTS=/tmp/res DEADLINE=420 bash bench/gpu_issue.sh
#
# The parts run in this order, so that a deadline cut keeps the most valuable: the references
# and the default dispatcher at the new sizes first (the serial C of matmul at n = 4096 and
# PPCG's build running meanwhile in the background on the CPU; PPCG's run fills the wait for
# that serial C), then the sanitizer on the new kernel kinds, register tiles at n = 2048 (the
# cuBLAS row at 2048) and 4096 (the cache variant's tree once register tiles are in the default
# tree); the page (bench/gpu_page.py) is always written. bench/gpu_plan.py prints each part's
# estimate first (plan.txt). $OUT (the device tool's) gets results-env.tar.gz (every file of the run), GPU.md, run.log and pycuda's wheel
# when it was built. QUICK=1 with tests/fakes rehearses it without a GPU (tiny sizes, PPCG
# built and not run).
set -u
cd "$(dirname "$0")/.."
export RESULTS="${RESULTS:-/tmp/res}" DEADLINE="${DEADLINE:-420}"
mkdir -p "$RESULTS"
parts=(env refs serial:matmul@n4096 ppcg-build
       jacobi1d@N1048578_T4 transpose@N4096 polydiv@M1048576 ppcg matmul@n4096 matmul+cache@n4096
       sanitize:matmul+tiles,histogram matmul+tiles@n2048 matmul+tiles@n4096 page)
if [ -n "${QUICK:-}" ]; then parts=("${parts[@]:2}"); fi   # the emulated GPU has no nvidia-smi, no CuPy
set -o pipefail
bash bench/gpu_all.sh "${parts[@]}" 2>&1 | tee "$RESULTS/run.log"
code=$?
[ -n "${OUT:-}" ] && cp "$RESULTS/run.log" "$OUT/"
exit $code

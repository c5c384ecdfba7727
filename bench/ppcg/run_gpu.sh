#!/bin/bash
# Time PPCG's generated CUDA (every variant in out/) and parakern's best cases on this GPU.
#
#   bash run_gpu.sh                # build everything, then run everything
#   BUILD_ONLY=1 bash run_gpu.sh   # build only (works without a GPU)
#   ONLY='matmul transpose' bash run_gpu.sh   # some kernels only
#   NO_PARAKERN=1 bash run_gpu.sh  # PPCG only
#   SKIP_BUILD=1 bash run_gpu.sh   # run what an earlier BUILD_ONLY=1 run built (same BUILD folder)
#
# Needs nvcc and python3 (standard library only); nothing is installed.  Each program
# allocates and fills the inputs, copies them in, runs the launch sequence once (warm-up; its
# result is the one checked), copies the result back, then times PPCG_REPS (20) more runs
# with CUDA events (a spin kernel queued first, so host launch costs stay out of the interval)
# and compares with a CPU reference (the same C, compiled for the host).  One line each:
#   <who> <kernel>/<variant>  median <ms>  <GB/s or GFLOP/s>  correct yes/NO
# parakern lines launch one case of parakern's emitted file through its dispatcher
# (X_0_select with that case alone), at our best point of a committed run, the case today's
# default dispatcher launches there (parakern/points.txt, bench/ppcg_points.py):
# parakern/<k>_fix.cu (launches the compile-time instance where one matches) and
# parakern/<k>.cu (the parametric kernel).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"
NVCC=${NVCC:-nvcc}
BUILD=${BUILD:-/tmp/ppcg-peer-gpu}
JOBS=${JOBS:-$(nproc)}
ONLY=${ONLY:-matmul transpose matadd jacobi1d stencil2d matvec saxpy}
if [ -z "${ARCH:-}" ]; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
    ARCH=sm_${cc:-90}
fi
mkdir -p "$BUILD"
T0=$(date +%s)

echo "# run_gpu.sh $(date -u +%FT%TZ) arch $ARCH"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.memory --format=csv,noheader 2>/dev/null || echo "(no nvidia-smi)"
"$NVCC" --version | tail -2 | head -1

FLAGS=(-O3 -arch="$ARCH" -std=c++17 -Xcompiler -O3,-march=native,-Wno-unknown-pragmas
       -diag-suppress 161,177,550 -Idriver -Isrc)

# parakern's side, found by rule (bench/ppcg_points.py, not typed in): per kernel the emitted
# file, the case today's default dispatcher launches at our best point, emit's options, the
# point and its macros
declare -A PK=()
if [ -z "${NO_PARAKERN:-}" ]; then
    [ -s parakern/points.txt ] || { echo "run_gpu.sh: no parakern/points.txt: run python bench/ppcg_points.py and parakern/emit_all.sh first (or NO_PARAKERN=1)"; exit 2; }
    while read -r kernel file case _options _point defs; do
        [ -n "$kernel" ] && PK[$kernel]="$file $case $defs"
    done < <(sed 's/#.*//' parakern/points.txt)
fi

# ---- build: one command per program, run JOBS at a time
cmds=$BUILD/build-commands.txt
: > "$cmds"
progs=()
for k in $ONLY; do
    for vdir in out/$k/*/; do
        v=$(basename "$vdir")
        b=$BUILD/ppcg-$k-$v
        mkdir -p "$b"
        python3 driver/time_host.py "$vdir/${k}_host.cu" > "$b/${k}_host_timed.cu" || exit 1
        echo "$NVCC ${FLAGS[*]} -I$b -I$vdir '-DLABEL=\"ppcg $k/$v\"' driver/main_$k.cu $vdir/${k}_kernel.cu -o $b/run > $b/build.log 2>&1 || echo 'BUILD FAILED: $b (see $b/build.log)'" >> "$cmds"
        progs+=("$b/run")
    done
    if [ -z "${NO_PARAKERN:-}" ]; then
        [ -n "${PK[$k]:-}" ] || { echo "run_gpu.sh: parakern/points.txt has no line for $k"; exit 2; }
        [[ "${PK[$k]}" != *" - "* ]] || { echo "run_gpu.sh: parakern/points.txt has no case for $k (--no-cases)"; exit 2; }
        read -r file case defs <<< "${PK[$k]}"
        for src in "${file}_fix" "$file"; do
            tag=$([ "$src" = "$file" ] && echo "case$case" || echo "case$case-fix")
            b=$BUILD/parakern-$k-$tag
            mkdir -p "$b"
            echo "$NVCC ${FLAGS[*]} -Iparakern -DPARAKERN -DPK_SOURCE='\"$src.cu\"' -DPK_CASE=$case $defs '-DLABEL=\"parakern $k/$tag\"' driver/main_$k.cu -o $b/run > $b/build.log 2>&1 || echo 'BUILD FAILED: $b (see $b/build.log)'" >> "$cmds"
            progs+=("$b/run")
        done
    fi
done
if [ -n "${SKIP_BUILD:-}" ]; then   # built by an earlier BUILD_ONLY=1 run (the same BUILD)
    echo "# built earlier: ${#progs[@]} programs"
else
    tr '\n' '\0' < "$cmds" | xargs -0 -P "$JOBS" -I{} bash -c '{}'
    echo "# built ${#progs[@]} programs in $(( $(date +%s) - T0 )) s"
fi
missing=0
for p in "${progs[@]}"; do [ -x "$p" ] || { echo "not built: $(basename "$(dirname "$p")") (see $(dirname "$p")/build.log)"; missing=1; }; done
if [ -n "${BUILD_ONLY:-}" ]; then
    [ $missing = 0 ] && echo "# every program is built"
    exit $missing
fi

# ---- a device-to-device copy of 256 MiB, the yardstick of parakern's "of a copy"
cat > "$BUILD/copy.cu" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
int main() {
    size_t bytes = 256u << 20; void *a, *b; cudaMalloc(&a, bytes); cudaMalloc(&b, bytes);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1); float best = 1e30f;
    for (int r = 0; r < 21; r++) { cudaEventRecord(e0); cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1);
        if (r > 0 && ms < best) best = ms; }
    printf("%-22s best   %9.4f ms  %9.1f GB/s    (read + written)\n", "d2d copy 256MiB", best, 2.0 * bytes / (best * 1e-3) / 1e9);
    return 0; }
EOF
"$NVCC" -arch="$ARCH" "$BUILD/copy.cu" -o "$BUILD/copy" > /dev/null 2>&1 && "$BUILD/copy"

# ---- run, one at a time
fail=0
for p in "${progs[@]}"; do
    if [ ! -x "$p" ]; then echo "$(basename "$(dirname "$p")"): not built"; fail=1; continue; fi
    timeout 120 "$p" || { echo "$(basename "$(dirname "$p")"): exit $?"; fail=1; }
done
echo "# total $(( $(date +%s) - T0 )) s"
exit $fail

#!/usr/bin/env bash
# Everything parakern measures on a GPU, in one command (docs/bench/README.md):
#
#   bash bench/gpu_all.sh [PART ...]
#
# PART: env (machine, toolkit, versions), refs (copy, cuBLAS SGEMM, CuPy add/transpose),
# sanitize (compute-sanitizer on every case of every sample; sanitize:S1,S2 on some),
# serial:P1,P2 (the serial C of bench parts run ahead into the serial cache, in the background:
# a later part of the same sample waits for it), ppcg-build (in the background: parakern's side
# of the PPCG comparison found by rule, emitted and built with PPCG's), ppcg (bench/ppcg/run_gpu.sh:
# PPCG's kernels and our best case of each, into ppcg.txt), page (bench/gpu_page.py -> GPU.md),
# profile:SAMPLE:N=V,N=V (ncu on
# every case's kernel of SAMPLE at that point), tune (the time model against measured times:
# bench/gpu_tune.py on every sample; tune:S1,S2 on some), or a sample of
# bench/paper_gpu.py's SUITE (matmul, matmul+cache, jacobi1d, ...). Default: all of them.
# Results go to $RESULTS (default docs/bench/raw); when $OUT is set (the device tool), they
# are also packed into $OUT/results-<first part>.tar.gz. $DEADLINE (seconds, default none)
# stops starting new bench runs in time for the results to be packed; QUICK=1 benches tiny
# sizes (a check of the path, no figures).
#
# Offline GPU machines: put the wheels this needs (pycuda built for that Python, z3-solver,
# pycparser, pytools, platformdirs, mako, siphash24) in .whl/; they are installed into
# /tmp/parakern-site when pycuda or z3 cannot be imported.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
py="${PYTHON:-python3}"
results="${RESULTS:-docs/bench/raw}"
mkdir -p "$results" 2>/dev/null && [ -w "$results" ] || { echo "gpu_all: RESULTS=$results is not a folder it can write"; exit 2; }
case "${DEADLINE:-}" in ''|*[!0-9]*) [ -z "${DEADLINE:-}" ] || { echo "gpu_all: DEADLINE=$DEADLINE must be whole seconds"; exit 2; } ;; esac
start=$(date +%s)
export PYTHONUNBUFFERED=1

# pycuda has no binary wheels: its sdist in .whl/ is built here once (about a minute on 16
# cores) into a wheel beside it, which is also copied to $OUT so that later runs carry it.
build_pycuda() {
  local sdist work drv
  sdist=$(ls .whl/pycuda-*.tar.gz 2>/dev/null | head -1)
  [ -n "$sdist" ] || return 0
  ls .whl/pycuda-*.whl >/dev/null 2>&1 && return 0
  work=/tmp/parakern-pycuda; rm -rf "$work"; mkdir -p "$work/drv"; tar xzf "$sdist" -C "$work"
  # -lcuda needs an unversioned libcuda.so: the driver's, or the toolkit's stub
  drv=$(ls /usr/local/cuda/lib64/stubs/libcuda.so /usr/lib/x86_64-linux-gnu/libcuda.so* \
        /usr/local/nvidia/lib64/libcuda.so* /usr/lib64/libcuda.so* 2>/dev/null | head -1)
  [ -n "$drv" ] && ln -sf "$drv" "$work/drv/libcuda.so"
  echo "gpu_all: building $(basename "$sdist") (libcuda: ${drv:-none found})"
  (cd "$work"/pycuda-* && "$py" configure.py --cuda-root="${CUDA_ROOT:-/usr/local/cuda}" --no-cuda-enable-curand \
       --cudadrv-lib-dir="$work/drv" >/dev/null \
     && "$py" setup.py -q build_ext -j "$(nproc)" >"$work/build.log" 2>&1 \
     && "$py" -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$here/.whl" . >>"$work/build.log" 2>&1) \
    || { tail -20 "$work/build.log"; echo "gpu_all: pycuda did not build"; return 1; }
  [ -n "${OUT:-}" ] && cp .whl/pycuda-*.whl "$OUT/"
  return 0
}

parts=("$@")
if [ ${#parts[@]} -eq 0 ]; then   # all of them (QUICK=1: the samples its tiny sizes have)
  if [ -n "${QUICK:-}" ]; then parts=(matadd transpose jacobi1d polydiv matmul matmul+cache matmul+tiles)
  else parts=(env refs sanitize matadd transpose jacobi1d polydiv saxpy stencil2d matvec matmul matmul+cache matmul+tiles tune)
  fi
fi
left() { if [ -n "${DEADLINE:-}" ]; then echo $(( DEADLINE - ($(date +%s) - start) )); else echo 86400; fi; }
"$py" bench/gpu_plan.py ${DEADLINE:+--deadline "$DEADLINE"} "${parts[@]}" | tee "$results/plan.txt"
status=0

# Background parts (serial:..., ppcg-build) need the analysis (z3, pycparser), not pycuda: they
# start as soon as it imports, so that they run while pycuda builds and the GPU parts run.
prefill_pid=""; prefill_samples=""; ppcg_pid=""
ppcg=bench/ppcg
start_background() {
  local part s
  for part in "${parts[@]}"; do
    case "$part" in
      serial:*) IFS=, read -r -a some <<< "${part#serial:}"   # the serial C into the serial cache, on the CPU
        for s in "${some[@]}"; do s=${s%%@*}; prefill_samples="$prefill_samples ${s%%+*}"; done
        "$py" bench/serial_prefill.py --out "$results" ${QUICK:+--quick} "${some[@]}" > "$results/serial_prefill.log" 2>&1 &
        prefill_pid=$! ;;
      ppcg-build)   # our side found and emitted (the cases found beside the emits), every program built, on the CPU
        { "$py" bench/ppcg_points.py --no-cases \
            && { "$py" bench/ppcg_points.py & cases=$!
                 PARAKERN="$py -m parakern" MAIN="$here" bash $ppcg/parakern/emit_all.sh && wait $cases; } \
            && NVCC=$(type -ap nvcc | grep -v /tests/fakes/ | head -1) BUILD_ONLY=1 BUILD=/tmp/ppcg-peer-gpu \
               bash $ppcg/run_gpu.sh; } > "$results/ppcg_build.log" 2>&1 &
        ppcg_pid=$! ;;
    esac
  done
}

# an earlier run on the same machine installed them already
if ! "$py" -c "import pycuda, z3, pycparser" 2>/dev/null && [ -d /tmp/parakern-site ] \
   && PYTHONPATH="/tmp/parakern-site${PYTHONPATH:+:$PYTHONPATH}" "$py" -c "import pycuda, z3, pycparser" 2>/dev/null; then
  export PYTHONPATH="/tmp/parakern-site${PYTHONPATH:+:$PYTHONPATH}"
fi
install_wheels() {
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/parakern-site \
    "$@" || { echo "gpu_all: the wheels in .whl/ did not install"; exit 3; }
  export PYTHONPATH="/tmp/parakern-site${PYTHONPATH:+:$PYTHONPATH}"
}
started=""
if ! "$py" -c "import pycuda, z3, pycparser" 2>/dev/null; then
  # the analysis' wheels first, so that the background parts start while pycuda builds
  if ls .whl/*.whl >/dev/null 2>&1; then install_wheels .whl/*.whl; fi
  if "$py" -c "import z3, pycparser" 2>/dev/null; then
    PYTHONPATH="$here/server${PYTHONPATH:+:$PYTHONPATH}" start_background; started=1
  fi
  if ! "$py" -c "import pycuda" 2>/dev/null; then
    build_pycuda || exit 3
    if ls .whl/pycuda-*.whl >/dev/null 2>&1; then install_wheels .whl/pycuda-*.whl; fi
  fi
  "$py" -c "import pycuda, z3, pycparser" || { echo "gpu_all: pycuda, z3-solver and pycparser are needed: \
pip install -e '.[bench]' (or carry wheels in .whl/)"; exit 3; }
fi
export PYTHONPATH="$here/server${PYTHONPATH:+:$PYTHONPATH}"
[ -n "$started" ] || start_background

# a bench part whose serial C a background prefill is running waits for it (else both would run it)
wait_prefill() {
  local sample=${1%%@*}; sample=${sample%%+*}
  if [ -n "$prefill_pid" ] && [[ " $prefill_samples " == *" $sample "* ]]; then
    echo "gpu_all: $1 waits for the serial C prefill"; wait "$prefill_pid" || status=1; prefill_pid=""
  fi
}
for part in "${parts[@]}"; do   # in the order given
  if [ "$(left)" -lt 20 ] && [ "$part" != page ]; then   # the page (seconds) shows what was taken
    echo "gpu_all: $part not started, the deadline is reached"; status=1; continue
  fi
  case "$part" in
    env)
      { echo "date: $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
        nvcc --version | tail -2; "$py" --version; gcc --version | head -1
        lscpu | grep -E "Model name|^CPU\(s\)"; "$py" -c "import importlib.metadata as m, llvmlite, z3, numpy, sympy; print('pycuda', m.version('pycuda'), 'llvmlite', llvmlite.__version__, 'z3', z3.get_version_string(), 'numpy', numpy.__version__, 'sympy', sympy.__version__)"
        "$py" -c "import cupy; print('cupy', cupy.__version__)"; compute-sanitizer --version | head -2; ncu --version | tail -1
      } > "$results/environment.txt" 2>&1 || status=1
      cat "$results/environment.txt" ;;
    refs) "$py" bench/gpu_references.py --out "$results/references.json" || status=1 ;;
    sanitize) "$py" bench/gpu_sanitize.py --out "$results" --timeout "$(left)" || status=1 ;;
    sanitize:*) IFS=, read -r -a some <<< "${part#sanitize:}"
      "$py" bench/gpu_sanitize.py --out "$results" --timeout "$(left)" "${some[@]}" || status=1 ;;
    tune) "$py" bench/gpu_tune.py --out "$results" --deadline "$(left)" ${QUICK:+--quick} || status=1 ;;
    tune:*) IFS=, read -r -a some <<< "${part#tune:}"
      "$py" bench/gpu_tune.py --out "$results" --deadline "$(left)" ${QUICK:+--quick} "${some[@]}" || status=1 ;;
    profile:*:*) IFS=: read -r _ sample point <<< "$part"
      "$py" bench/gpu_profile.py "$sample" --point "$point" --out "$results" --timeout "$(left)" || status=1 ;;
    profile*) echo "gpu_all: $part: profile needs a sample and a point, e.g. profile:matadd:N=8192,B0=16,B1=8"; status=1 ;;
    serial:*|ppcg-build) ;;   # started in the background before the first part
    ppcg)   # PPCG's kernels beside our best case of each (bench/ppcg/README.md); the GPU's alone
      if [ -z "$ppcg_pid" ]; then
        { "$py" bench/ppcg_points.py && PARAKERN="$py -m parakern" MAIN="$here" bash $ppcg/parakern/emit_all.sh; } \
          > "$results/ppcg_build.log" 2>&1 || { cat "$results/ppcg_build.log"; status=1; continue; }
        skip=""
      else
        wait "$ppcg_pid" || { cat "$results/ppcg_build.log"; status=1; continue; }; skip=1; ppcg_pid=""
      fi
      cp $ppcg/parakern/points.txt "$results/ppcg_points.txt"
      if [ -n "${QUICK:-}" ]; then   # the emulated GPU runs no PPCG program: built (the real nvcc), none run
        NVCC=$(type -ap nvcc | grep -v /tests/fakes/ | head -1) BUILD_ONLY=1 SKIP_BUILD=$skip BUILD=/tmp/ppcg-peer-gpu \
          timeout "$(left)" bash $ppcg/run_gpu.sh
      else
        SKIP_BUILD=$skip BUILD=/tmp/ppcg-peer-gpu timeout "$(left)" bash $ppcg/run_gpu.sh
      fi > "$results/ppcg.txt" 2>&1 || status=1
      cat "$results/ppcg.txt" ;;
    page) "$py" bench/gpu_page.py "$results" --out "$results/GPU.md" || status=1
      [ -n "${OUT:-}" ] && cp "$results/GPU.md" "$OUT/" ;;
    *) wait_prefill "$part"
      "$py" bench/paper_gpu.py --out "$results" --deadline "$(left)" ${QUICK:+--quick} "$part" || status=1 ;;
  esac
done
[ -n "$prefill_pid" ] && { kill "$prefill_pid" 2>/dev/null; wait "$prefill_pid" 2>/dev/null; }
[ -n "$ppcg_pid" ] && { kill "$ppcg_pid" 2>/dev/null; wait "$ppcg_pid" 2>/dev/null; }
if [ -n "${OUT:-}" ]; then
  name="results-$(echo "${parts[0]}" | tr -c 'A-Za-z0-9_\n-' '_').tar.gz"
  tar czf "$OUT/$name" --exclude=serial-cache --exclude=variants -C "$results" . && ls -la "$OUT"
fi
echo "gpu_all: done in $(( $(date +%s) - start )) s, status $status"
exit $status

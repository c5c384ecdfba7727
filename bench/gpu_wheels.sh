#!/usr/bin/env bash
# Fills .whl/ with what bench/gpu_all.sh installs on a GPU machine that has no network (the
# device machines of this project: Ubuntu 24.04, Python 3.12, CUDA 13, CuPy, numpy, sympy,
# llvmlite; no pycuda, no z3): the binary wheels for that Python and pycuda's sdist, which
# gpu_all.sh builds there once. Run it here, with PyPI reachable, then carry .whl/:
#
#   bash bench/gpu_wheels.sh [PYTHON_VERSION]      (default 3.12)
set -eu
cd "$(dirname "$0")/.."
version="${1:-3.12}"
py="${PYTHON:-python3}"
mkdir -p .whl
# what pycuda, parakern's analysis and the bench import beyond the machine's own packages
log=$(mktemp)
"$py" -m pip download -q --only-binary=:all: --python-version "$version" --implementation cp --no-deps -d .whl \
  --platform manylinux_2_39_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  z3-solver pycparser pytools platformdirs mako markupsafe siphash24 typing-extensions >"$log" 2>&1 \
  || { grep -v "^WARNING: Location" "$log"; rm -f "$log"; echo "gpu_wheels: pip could not download the wheels"; exit 1; }
rm -f "$log"
# the sdist as PyPI serves it (`pip download` of an sdist would build its metadata, and with
# it numpy, from source)
"$py" - <<'PY'
import json, pathlib, urllib.request
release = json.load(urllib.request.urlopen("https://pypi.org/pypi/pycuda/json", timeout=60))
(url,) = [u["url"] for u in release["urls"] if u["packagetype"] == "sdist"]
target = pathlib.Path(".whl") / url.rsplit("/", 1)[1]
if not target.exists():
    target.write_bytes(urllib.request.urlopen(url, timeout=300).read())
PY
ls .whl/pycuda-*.tar.gz .whl/z3_solver-*.whl >/dev/null || { echo "gpu_wheels: pycuda's sdist or z3's wheel is missing"; exit 1; }
du -sh .whl && ls .whl

#!/usr/bin/env bash
# one-off: the staged kernels with stepped copy coordinates, on the points of docs/bench/h100
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/server PYTHONUNBUFFERED=1
r=$OUT/r; mkdir -p $r /tmp/v
cp samples/*.h /tmp/v/ 2>/dev/null
sed -E 's/meta_schedule[[:space:]]*\{/meta_schedule cache(a, b) {/' samples/matmul.c > /tmp/v/matmul.c
b() { name=$1; shift; start=$(date +%s); timeout "$T" python3 -m parakern bench "$@" --every-case --repeat 20 --serial-repeat 1 --markdown --json $r/$name.json > $r/$name.md 2>&1; echo "$name exit $? in $(( $(date +%s) - start )) s"; }
cd samples
T=100 b transpose_N8192 transpose.c --data N=8192 --sweep B0=8,16 --sweep B1=32 --sweep s=8,16
T=70 b stencil2d_N8192 stencil2d.c --data N=8192 --sweep Bx=32,64 --sweep By=4,8,16
cd /tmp/v
T=40 b matmul_cache_n1024 matmul.c --data n=1024 --sweep ub1=8,16,32,64 --sweep B0=4,8 --sweep s=2,4
ls -la $r

#!/bin/bash
# Emit parakern's CUDA for the kernels compared with PPCG, with today's code, at today's best
# points: every case (<file>.cu) and the compile-time instances at the point (<file>_fix.cu),
# for each line of points.txt (written by bench/ppcg_points.py: kernel, file, case, emit's
# options, the point, -DPK_<PARAMETER>=V ...). The emits run in parallel (JOBS at a time).
# Run from anywhere: PARAKERN=<venv>/bin/parakern MAIN=<parakern checkout> bash emit_all.sh
set -euo pipefail
cd "$(dirname "$0")"
PARAKERN=${PARAKERN:-parakern}
MAIN=${MAIN:?path of the parakern checkout}
JOBS=${JOBS:-$(nproc)}
[ -s points.txt ] || { echo "emit_all.sh: no points.txt here: run python bench/ppcg_points.py first"; exit 2; }
cp "$MAIN/samples/metafork.h" .
for s in matmul transpose matadd jacobi1d stencil2d matvec saxpy; do cp "$MAIN/samples/$s.c" .; done
# matmul+cache / matmul+tiles of the bench: the same file with cache(a, b) on its meta_schedule
sed 's/meta_schedule {/meta_schedule cache(a, b) {/' matmul.c > matmul_cache.c
cmds=()
while read -r kernel file case options point defs; do
    [ -n "$kernel" ] || continue
    [ "$options" = - ] && options=""
    cmds+=("$PARAKERN emit $file.c --target sm_90 $options -o $file.cu > $file.emit.log 2>&1"
           "$PARAKERN emit $file.c --target sm_90 $options --fix $point -o ${file}_fix.cu > ${file}_fix.emit.log 2>&1")
done < <(sed 's/#.*//' points.txt)
printf '%s\0' "${cmds[@]}" | xargs -0 -P "$JOBS" -I{} bash -c '{} || { echo "emit_all.sh: failed: {}"; exit 255; }'
echo "emit_all.sh: emitted $(( ${#cmds[@]} )) files"

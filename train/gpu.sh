#!/bin/sh
# train/gpu.sh: the GPU half of the training proof (issue #42 item 4), one
# prepared script for a lent GPU machine that regenerates RESULTS-gpu.md's
# runs, E1 and E2, inside one 10-minute command.
#
# On this side (a machine with Go):
#   make gpu-bundle            # .gpu/svbench.xz: the svbench binary, stripped and compressed to travel
# On the GPU machine (the device tool's run, carrying .gpu; $OUT is what comes back):
#   sh train/gpu.sh
# Back here, from the files that came back:
#   /usr/bin/python3 train/run.py gpu-results DIR --results train/RESULTS-gpu.md
#
# What it does, each step bounded so the whole fits GPU_BUDGET_S (540 s):
#   1. what the machine is: GPU, torch, `pip list`, and which RL trainers
#      (TRL, verl, OpenRLHF, NeMo RL, prime-rl) are installed;
#   2. the unit tests, the CUDA cases of train/tests/test_device.py included;
#   3. E1 (Makefile's E1_RECIPE, the CPU proof's, without the learned-RM arm,
#      whose labelling is CPU work the GPU does not speed) and E2 (E2_RECIPE)
#      side by side, the three seeds of each in worker processes sharing the
#      GPU; E2's seeds stop GRPO early enough to evaluate before the
#      deadline (--deadline: RESULTS says after how many steps), and an E1
#      arm not finished by then is stopped and named absent;
#   4. the run files (no checkpoints, no per-rollout rows) packed into
#      $OUT/gpu-runs.tar.xz with the logs.
#
# Knobs (environment): GPU_BUDGET_S, DEVICE (cuda), PYTHON (python3), SVBENCH
# (a binary to use instead of .gpu/svbench.xz), E1_ARMS, E1_EXTRA and E2_EXTRA
# (arguments appended to the recipes: the last value of a flag wins).
# `DEVICE=cpu SVBENCH=bin/svbench E1_EXTRA='…small…' sh train/gpu.sh` runs the
# same steps here on the CPU, which is how the script itself is checked.
set -u
cd "$(dirname "$0")/.." || exit 1
T0=$(date +%s)
BUDGET=${GPU_BUDGET_S:-540}
DEVICE=${DEVICE:-cuda}
PY=${PYTHON:-python3}
OUT=${OUT:-$PWD/train/out/gpu-device}
W=${GPU_WORK:-/tmp/svgpu}
E1_ARMS=${E1_ARMS:-format,format_per_component,format_gdpo,format_distill,format_random}
export PYTHONUNBUFFERED=1 CUBLAS_WORKSPACE_CONFIG=:4096:8
mkdir -p "$OUT" "$W"
say() { echo "gpu.sh $(( $(date +%s) - T0 ))s: $*"; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }

# 1. The machine.
{
	date -u
	if command -v nvidia-smi > /dev/null; then nvidia-smi -L; else echo "no nvidia-smi"; fi
	echo "cpus: $(nproc)"
	"$PY" -V
	"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")'
} > "$OUT/machine.txt" 2>&1
"$PY" -m pip list > "$OUT/pip-list.txt" 2>&1 || "$PY" -m pip freeze > "$OUT/pip-list.txt" 2>&1
# Which trainers svbench's adapters could be run with here (their names on PyPI).
grep -i -E '^(trl|verl|openrlhf|nemo[-_]rl|nemo[-_]gym|prime[-_]rl|vllm|deepspeed|transformers|peft|accelerate)[[:space:]]' "$OUT/pip-list.txt" > "$OUT/trainers.txt"
for t in trl verl openrlhf nemo_rl prime_rl; do
	"$PY" -c "import $t" > /dev/null 2>&1 && echo "importable: $t" >> "$OUT/trainers.txt" || echo "not installed: $t" >> "$OUT/trainers.txt"
done

# 2. svbench.
if [ -n "${SVBENCH:-}" ]; then
	SVB=$(cd "$(dirname "$SVBENCH")" && pwd)/$(basename "$SVBENCH")
else
	SVB=$W/svbench
	if ! xz -dc .gpu/svbench.xz > "$SVB"; then
		say "no .gpu/svbench.xz: run make gpu-bundle here and carry .gpu"
		exit 2
	fi
	chmod +x "$SVB"
fi
"$SVB" version >> "$OUT/machine.txt" 2>&1 || { say "svbench does not run here"; exit 2; }
say "machine: $(sed -n 2p "$OUT/machine.txt"); $(grep '^torch' "$OUT/machine.txt")"

# 3. The unit tests (their CUDA cases need this machine).
timeout 120 "$PY" -m unittest discover -s train/tests > "$OUT/unittest.txt" 2>&1
say "unit tests: $(tail -n 1 "$OUT/unittest.txt")"

# 4. E1 and E2 side by side, stopped at the deadline less the packing's time.
E1_RECIPE=$(sed -n 's/^E1_RECIPE := //p' Makefile)
E2_RECIPE=$(sed -n 's/^E2_RECIPE := //p' Makefile)
RUN_S=$(( $(left) - 30 ))
if [ "$RUN_S" -lt 30 ]; then
	say "only ${RUN_S}s left for training: raise GPU_BUDGET_S"
	exit 2
fi
say "E1 and E2 for at most ${RUN_S}s on $DEVICE"
# shellcheck disable=SC2086 # the recipes are word lists
timeout "$RUN_S" "$PY" train/run.py matrix --svbench "$SVB" --out "$W/e1" $E1_RECIPE --arms "$E1_ARMS" --device "$DEVICE" \
	--jobs 3 --threads 2 --checkpoint-every 0 --no-report ${E1_EXTRA:-} > "$OUT/e1.log" 2>&1 &
E1_PID=$!
# shellcheck disable=SC2086
timeout "$RUN_S" "$PY" train/run.py e2 --svbench "$SVB" --out "$W/e2" $E2_RECIPE --device "$DEVICE" \
	--jobs 3 --threads 1 --session-workers 16 --teacher-concurrency 8 --deadline "$(( $(date +%s) + RUN_S - 15 ))" \
	${E2_EXTRA:-} > "$OUT/e2.log" 2>&1 &
E2_PID=$!
wait $E1_PID; E1_RC=$?
wait $E2_PID; E2_RC=$?
say "E1 exit $E1_RC, E2 exit $E2_RC (124: stopped at the deadline)"
echo "e1 $E1_RC" > "$W/exit.txt"
echo "e2 $E2_RC" >> "$W/exit.txt"
cp "$OUT/machine.txt" "$OUT/trainers.txt" "$OUT/unittest.txt" "$W/" 2>/dev/null

# 5. Pack what finished: run files, no checkpoints, no per-rollout rows, no data.
tar -C "$W" -cJf "$OUT/gpu-runs.tar.xz" --exclude='*.pt' --exclude='checkpoint.pt*' --exclude=rollouts \
	--exclude='teacher-*' --exclude=pool --exclude=pool-generated --exclude=generated --exclude=baseline-train \
	--exclude=baseline-test --exclude=sft.jsonl --exclude='hf-scratch-*' \
	exit.txt machine.txt trainers.txt unittest.txt e1 e2
say "packed $(du -h "$OUT/gpu-runs.tar.xz" | cut -f1) into $OUT/gpu-runs.tar.xz"

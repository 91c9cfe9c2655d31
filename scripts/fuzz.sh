#!/usr/bin/env bash
# Runs the libFuzzer (atheris) targets in fuzz/ on the parsers of untrusted bytes:
# safetensors, lucid.load's checkpoint format, IDX, DLPack import, buffer-protocol import.
#
#   scripts/fuzz.sh [-t TARGETS] [-n RUNS] [-T SECONDS] [-o DIR] [LIBFUZZER ARGS...]
#
#   -t TARGETS   comma-separated, from: safetensors,load,idx,dlpack,buffer (default: all)
#   -n RUNS      executions per target, in total over all jobs (default 1000000)
#   -T SECONDS   stop each target after this long instead (-max_total_time); with -n too,
#                whichever comes first
#   -o DIR       scratch directory (default /tmp/lucid-fuzz): per target, a copy of the
#                seed corpus (libFuzzer adds the inputs it finds there, never in the
#                repository), crash/timeout/oom artifacts, logs and unclear errors
#   anything else goes to libFuzzer, e.g. -jobs=16 -workers=16 (RUNS is then split over
#   the jobs), -max_len=8192, -seed=1
#
# Each target runs with -timeout=10 -rss_limit_mb=4096. At the end it prints, per target,
# the executions (summed over jobs), seconds, executions per second, peak RSS (a leak
# shows as growth; the limit turns it into an artifact), artifacts (crashes, hangs,
# out-of-memory) and the distinct "unclear" exceptions the target noted (see
# fuzz/_harness.py). Exits 1 if any target left an artifact.
# Artifacts replay with: PYTHONPATH=python .venv/bin/python fuzz/fuzz_<target>.py ARTIFACT
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-$ROOT/.venv/bin/python}
# With -jobs/-workers libFuzzer starts each job by running the target script itself
# (argv[0]); its "#!/usr/bin/env python3" must find this interpreter.
export PATH="$(dirname "$PY"):$PATH"

targets=safetensors,load,idx,dlpack,buffer
runs=1000000
seconds=
out=/tmp/lucid-fuzz
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t) targets=$2; shift 2 ;;
    -n) runs=$2; shift 2 ;;
    -T) seconds=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) extra+=("$1"); shift ;;
  esac
done

if ! "$PY" -c "import atheris" 2>/dev/null; then
  echo "== installing atheris into $("$PY" -c 'import sys; print(sys.prefix)')"
  "$PY" -m pip install -q atheris || { echo "cannot install atheris" >&2; exit 2; }
fi

jobs=1
for a in "${extra[@]+"${extra[@]}"}"; do
  case "$a" in -jobs=*) jobs=${a#-jobs=} ;; esac
done
per_job=$(( (runs + jobs - 1) / jobs ))

declare -A dicts=([safetensors]=fuzz/safetensors.dict [load]=fuzz/load.dict)
status=0
summary=()
IFS=, read -ra list <<<"$targets"
for t in "${list[@]}"; do
  script=$ROOT/fuzz/fuzz_$t.py
  [ -f "$script" ] || { echo "no target $t (fuzz/fuzz_$t.py)" >&2; exit 2; }
  dir=$out/$t
  rm -rf "$dir" && mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/unclear"
  cp "$ROOT/fuzz/corpus/$t/"* "$dir/corpus/"
  args=(-runs="$per_job" -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$dir/artifacts/" -print_final_stats=1)
  [ -n "$seconds" ] && args+=(-max_total_time="$seconds")
  [ -n "${dicts[$t]:-}" ] && args+=(-dict="$ROOT/${dicts[$t]}")
  echo "== $t: $per_job runs per job x $jobs job(s)${seconds:+, at most ${seconds}s}; scratch $dir"
  start=$(date +%s)
  # libFuzzer's -jobs write fuzz-N.log into the working directory; a single process
  # logs to fuzz-0.log through tee.
  # the targets that read files (IDX, mmap loads) write each input there: tmpfs if any
  scratch=$( [ -w /dev/shm ] && echo "/dev/shm/lucid-fuzz-$t-$$" || echo "$dir/scratch")
  mkdir -p "$scratch"
  (cd "$dir" && LUCID_FUZZ_UNCLEAR_DIR="$dir/unclear" LUCID_FUZZ_SCRATCH="$scratch" PYTHONPATH="$ROOT/python" \
     "$PY" "$script" "${args[@]}" "${extra[@]+"${extra[@]}"}" "$dir/corpus" 2>&1 | tee "$dir/fuzz-main.log" |
     grep -aE --line-buffered "^(#[0-9]+ *(INITED|DONE|pulse)|Done|==[0-9]+== ERROR|ERROR|.*Uncaught|.*Finding|SUMMARY|.*deadly signal|stat::)";
     exit "${PIPESTATUS[0]}")
  rc=$?
  rm -rf "$scratch"
  elapsed=$(( $(date +%s) - start ))
  # executions: each process's "Done N runs" (or its last "#N" status line if it died)
  total=0
  for log in "$dir"/fuzz-*.log; do
    n=$(grep -aoE "^Done [0-9]+ runs" "$log" | awk '{s+=$2} END {print s+0}')
    if [ "$n" = 0 ]; then
      n=$(grep -aoE "^#[0-9]+" "$log" | tail -1 | tr -d '#')
      n=${n:-0}
    fi
    if [ "$log" = "$dir/fuzz-main.log" ] && ls "$dir"/fuzz-[0-9]*.log >/dev/null 2>&1; then
      continue  # with -jobs the main log only supervises
    fi
    total=$((total + n))
  done
  rss=$(grep -ahoE "^stat::peak_rss_mb: *[0-9]+" "$dir"/fuzz-*.log | awk '{if ($2 > m) m = $2} END {print m+0}')
  artifacts=$(find "$dir/artifacts" -type f | wc -l)
  # each job notes each kind once: count them once
  [ -f "$dir/unclear/unclear.tsv" ] && sort -u -t$'\t' -k1,3 "$dir/unclear/unclear.tsv" -o "$dir/unclear/unclear.tsv"
  unclear=$( [ -f "$dir/unclear/unclear.tsv" ] && wc -l <"$dir/unclear/unclear.tsv" || echo 0)
  rate=$(( elapsed > 0 ? total / elapsed : total ))
  summary+=("$(printf '%-12s %10d execs %6ds %7d exec/s  peak RSS %5d MB  artifacts %d  unclear %d' "$t" "$total" \
    "$elapsed" "$rate" "$rss" "$artifacts" "$unclear")")
  [ "$artifacts" -gt 0 ] && { status=1; find "$dir/artifacts" -type f | sed 's/^/   artifact: /'; }
  [ "$unclear" -gt 0 ] && sed 's/^/   unclear: /' "$dir/unclear/unclear.tsv"
  [ "$rc" -ne 0 ] && [ "$artifacts" -eq 0 ] && echo "   (libFuzzer exited with $rc; see $dir/fuzz-*.log)"
done

echo "== summary (executions summed over jobs)"
printf '%s\n' "${summary[@]}"
exit $status

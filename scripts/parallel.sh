#===- parallel.sh - Run a script's independent commands side by side -----===#
#
# Sourced by scripts (sanitize-runtime.sh, fuzz-runtime.sh) that compile
# many files one command each: `run_parallel CMD...` starts CMD in the
# background once fewer than PARALLEL_JOBS (default: the cores) are
# running; `wait_parallel` waits for every command started and fails if
# any failed.
#
#===----------------------------------------------------------------------===#
PARALLEL_JOBS=${PARALLEL_JOBS:-$(nproc)}
parallel_pids=()

run_parallel() {
  while (( $(jobs -rp | wc -l) >= PARALLEL_JOBS )); do
    wait -n || true # its status is kept for wait_parallel
  done
  "$@" &
  parallel_pids+=($!)
}

wait_parallel() {
  local pid status=0
  for pid in "${parallel_pids[@]}"; do
    wait "$pid" || status=1
  done
  parallel_pids=()
  return $status
}

#!/usr/bin/env bash
# Usage, inside scripts/emulated-cluster.sh:
#   cut_machine.sh kill|down PROGRAM DATA METRICS
# Trains PROGRAM (a training program for the cluster's ranks) on DATA
# through $CLUSTER_MPIRUN, waits until it has written 20 metrics records,
# then cuts off the last machine: `kill` kills every process of its
# namespace (ranks and OpenMPI daemon), `down` takes its link down. Prints
# the cut, the job's output, and how the job ended; exits 0 when it ended with a non-zero status within
# 60 s of the cut, 1 otherwise (still running, or a zero status).
set -uo pipefail
how=$1 program=$2 data=$3 metrics=$4
rm -f "$metrics"
# The job's output goes to a file, printed after the cut's line.
$CLUSTER_MPIRUN "$program" --data "$data" --metrics "$metrics" \
  --comm-timeout 30 --log-every 100000 > "$metrics.log" 2>&1 &
job=$!
for ((i = 0; i < 1200; ++i)); do
  [[ -f $metrics && $(wc -l < "$metrics") -ge 20 ]] && break
  kill -0 "$job" 2>/dev/null ||
    { cat "$metrics.log"; echo "cut_machine: the job ended before the cut"; exit 1; }
  sleep 0.1
done
last=${CLUSTER_HOSTS##*,}
ns=$(awk -v h="$last" '$1 == h { print $2 }' "$(dirname "$CLUSTER_AGENT")/namespaces")
echo "cut_machine: $how $last after $(wc -l < "$metrics") steps"
case $how in
kill) ip netns pids "$ns" | xargs -r kill -9 ;;
down) ip -n "$ns" link set "$(ip -n "$ns" -o link show | awk -F': ' '$2 !~ /^lo/ { sub(/@.*/, "", $2); print $2 }')" down ;;
*) echo "cut_machine: kill or down, not '$how'"; exit 2 ;;
esac
for ((i = 0; i < 600; ++i)); do
  if ! kill -0 "$job" 2>/dev/null; then
    wait "$job"
    status=$?
    cat "$metrics.log"
    echo "cut_machine: the job ended with status $status within $((i / 10 + 1)) s"
    [[ $status -ne 0 ]]
    exit
  fi
  sleep 0.1
done
cat "$metrics.log"
echo "cut_machine: the job still runs 60 s after the cut"
kill -9 "$job" 2>/dev/null
exit 1

#!/usr/bin/env bash
#===- emulated-cluster.sh - Several "machines" on this one, over TCP -----===#
#
# Usage (root): scripts/emulated-cluster.sh [--machines M] [--ranks G]
#                 [--rate RATE] [--delay DELAY] [--timeout SECONDS]
#                 -- COMMAND [ARG...]
#
# Makes M network namespaces ("machines") on a bridge, each with one veth
# NIC at 198.18.0.(10+i)/24 (the range reserved for network benchmarks),
# its egress shaped by tc to RATE (e.g. 1gbit, 10gbit; default unshaped)
# with an optional DELAY (e.g. 1ms), then runs COMMAND with, in its
# environment:
#   CLUSTER_MPIRUN  an mpirun command line that starts G ranks on each
#                   machine (M x G ranks, machine-major), through an rsh
#                   agent that enters the namespace owning each address,
#                   with OpenMPI's TCP transport restricted to the bridge
#                   (no shared memory between machines);
#   CLUSTER_HOSTS   the machines' addresses, comma-separated;
#   CLUSTER_RANKS   G;
#   CLUSTER_AGENT   the agent: `$CLUSTER_AGENT HOST COMMAND...` runs
#                   COMMAND (one shell string) inside HOST's namespace,
#                   for launchers other than mpirun (PyTorch's DDP).
# Everything it made is removed on every exit path (normal end, error,
# Ctrl-C, the timeout, default 600 s). Only traffic between its own
# namespaces is generated. Exits with COMMAND's status; 77 when this
# machine cannot make namespaces (not root, no ip/tc), saying why.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

MACHINES=2 RANKS=1 RATE="" DELAY="" TIMEOUT=600
while [[ $# -gt 0 ]]; do
  case $1 in
  --machines) MACHINES=$2; shift 2 ;;
  --ranks) RANKS=$2; shift 2 ;;
  --rate) RATE=$2; shift 2 ;;
  --delay) DELAY=$2; shift 2 ;;
  --timeout) TIMEOUT=$2; shift 2 ;;
  --) shift; break ;;
  *) echo "emulated-cluster: unknown option '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
if [[ $# -eq 0 ]]; then
  echo "emulated-cluster: no command after --" >&2
  exit 2
fi
if ! [[ $MACHINES =~ ^[0-9]+$ && $MACHINES -ge 1 && $MACHINES -le 200 ]]; then
  echo "emulated-cluster: --machines must be 1 to 200, got '$MACHINES'" >&2
  exit 2
fi

cannot() {
  echo "emulated-cluster: cannot emulate machines here: $1" >&2
  exit 77
}
[[ $(id -u) -eq 0 ]] || cannot "network namespaces need root"
command -v ip >/dev/null || cannot "no 'ip' (Debian iproute2)"
command -v tc >/dev/null || cannot "no 'tc' (Debian iproute2)"

# Names unique to this run (interface names have at most 15 characters).
TAG=px$$
BRIDGE=${TAG}br
WORK=$(mktemp -d /tmp/parallax-cluster.XXXXXX)
made=()

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for ns in "${made[@]}"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns delete "$ns" 2>/dev/null || true
  done
  ip link delete "$BRIDGE" 2>/dev/null || true
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip link add "$BRIDGE" type bridge || cannot "cannot create a bridge"
ip addr add 198.18.0.1/24 dev "$BRIDGE"
ip link set "$BRIDGE" up
hosts=()
for ((i = 0; i < MACHINES; i++)); do
  ns=${TAG}m$i
  ip netns add "$ns" || cannot "cannot create a network namespace"
  made+=("$ns")
  ip link add "${TAG}h$i" type veth peer name "${TAG}n$i"
  ip link set "${TAG}h$i" master "$BRIDGE" up
  ip link set "${TAG}n$i" netns "$ns"
  address=198.18.0.$((10 + i))
  ip -n "$ns" addr add "$address/24" dev "${TAG}n$i"
  ip -n "$ns" link set "${TAG}n$i" up
  ip -n "$ns" link set lo up
  # The delay (netem) first, the rate (token bucket) under it.
  parent=root
  if [[ -n $DELAY ]]; then
    ip netns exec "$ns" tc qdisc add dev "${TAG}n$i" root handle 1: \
      netem delay "$DELAY" 2>/dev/null ||
      cannot "tc's netem qdisc is not available in this kernel (--delay needs sch_netem)"
    parent="parent 1:1"
  fi
  if [[ -n $RATE ]]; then
    ip netns exec "$ns" tc qdisc add dev "${TAG}n$i" $parent handle 10: \
      tbf rate "$RATE" burst 256kb latency 100ms ||
      cannot "tc cannot shape to '$RATE'"
  fi
  echo "$address $ns" >> "$WORK/namespaces"
  hosts+=("$address")
done

# mpirun starts its daemons through this agent: `AGENT [options] HOST
# COMMAND...` runs COMMAND inside the namespace that owns HOST, with a
# temporary directory of that machine's own: OpenMPI keeps its session
# files there, and daemons of one host name sharing /tmp race on them (a
# daemon then dies, silently, and the job hangs).
cat > "$WORK/agent" <<EOF
#!/usr/bin/env bash
while [[ \$1 == -* ]]; do shift; done
ns=\$(awk -v h="\$1" '\$1 == h { print \$2 }' "$WORK/namespaces")
[[ -n \$ns ]] || { echo "emulated-cluster agent: unknown host '\$1'" >&2; exit 1; }
shift
mkdir -p "$WORK/tmp-\$ns"
exec ip netns exec "\$ns" env TMPDIR="$WORK/tmp-\$ns" sh -c "\$*"
EOF
chmod +x "$WORK/agent"

# OpenMPI's rsh launcher hangs its daemons when HOME is set without SHELL
# or USER (as under lit): give it both.
export SHELL=${SHELL:-/bin/bash} USER=${USER:-$(id -un)}
host_list=$(printf '%s:'"$RANKS"',' "${hosts[@]}")
export CLUSTER_HOSTS=$(IFS=,; echo "${hosts[*]}")
export CLUSTER_RANKS=$RANKS CLUSTER_AGENT=$WORK/agent
# mpirun reaches its daemons over TCP; with OpenMPI's default keepalive
# (300 s idle, then 9 probes 20 s apart) a machine cut off from the
# network left mpirun waiting for its daemon (past 2 minutes here) after the ranks
# had reported the silent peer. With probes after 2 s of silence, 1 s
# apart, mpirun ends the job naming the lost machine within seconds.
export CLUSTER_MPIRUN="mpirun --allow-run-as-root --host ${host_list%,} \
-np $((MACHINES * RANKS)) --map-by slot --bind-to none \
--mca plm_rsh_agent $WORK/agent --mca plm_rsh_no_tree_spawn 1 \
--mca btl self,tcp --mca btl_tcp_if_include 198.18.0.0/24 \
--mca oob_tcp_if_include 198.18.0.0/24 \
--mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1 \
--mca oob_tcp_keepalive_probes 3 \
-x OMPI_ALLOW_RUN_AS_ROOT=1 -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
echo "emulated-cluster: $MACHINES machine(s) x $RANKS rank(s) at ${CLUSTER_HOSTS}" \
  "${RATE:+(egress $RATE${DELAY:+, delay $DELAY})}" >&2
status=0
timeout --kill-after=10 "$TIMEOUT" "$@" || status=$?
if [[ $status -eq 124 ]]; then
  echo "emulated-cluster: '$*' did not finish within $TIMEOUT s" >&2
fi
exit "$status"

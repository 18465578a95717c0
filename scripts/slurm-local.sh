#!/usr/bin/env bash
# A local Slurm cluster for tests and trials: munge, slurmctld and two slurmd on this machine
# (`slurmd -N`), one node per test machine profile (conf/machine/fleet-a.yaml, fleet-b.yaml),
# each node's Features= naming its profile. No systemd: every daemon is started by hand with
# its state, sockets and logs in one private folder, so nothing under /etc is changed and a
# stop removes only the daemons this script started (by their pid files).
#
#   scripts/slurm-local.sh start  [--dir DIR] [--port PORT]   # prints SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-local.sh status [--dir DIR]
#   scripts/slurm-local.sh stop   [--dir DIR]
#
# PORT is slurmctld's port; the two slurmd use PORT+1 and PORT+2 (default 16817), so a second
# cluster in another folder can run beside this one.
set -euo pipefail

DIR=/tmp/tidemark-slurm
PORT=16817
NODES=(fleet-a fleet-b)  # node name = its feature = the machine profile it serves
# faketime: lets a test give one node's jobs a clock hours off (see write_task_prolog)
PACKAGES=(munge slurmctld slurmd slurm-client faketime)

usage() { echo "usage: $0 {start|stop|status} [--dir DIR] [--port PORT]" >&2; exit 2; }
[ $# -ge 1 ] || usage
ACTION=$1; shift
while [ $# -gt 0 ]; do
  case $1 in
    --dir) DIR=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    *) usage ;;
  esac
done
CONF=$DIR/slurm.conf

need_sudo() { if [ "$(id -u)" -ne 0 ]; then echo sudo; fi; }
SUDO=$(need_sudo)

install_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  export DEBIAN_FRONTEND=noninteractive
  # Other engineers may be installing at the same time: wait for the dpkg lock.
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
}

write_conf() {
  local host cpus i=0 nodes
  host=$(hostname -s)
  cpus=$(nproc)
  nodes=$(IFS=,; echo "${NODES[*]}")
  cat > "$CONF" <<EOF
# Written by scripts/slurm-local.sh: a two-node cluster on one host, one node per profile.
ClusterName=tidemark-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool-%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Finished jobs stay visible to squeue/scontrol for 10 minutes (there is no slurmdbd here).
MinJobAge=600
SlurmdTimeout=60
InactiveLimit=0
KillWait=10
# A node's jobs get the variables of DIR/env-NODE when that file exists (none by default): how a
# test gives one node's jobs a clock hours off (libfaketime) without touching this host's clock.
TaskProlog=$DIR/task-prolog.sh
EOF
  for node in "${NODES[@]}"; do
    i=$((i + 1))
    echo "NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 Port=$((PORT + i)) CPUs=$cpus RealMemory=1000 Features=$node State=UNKNOWN" >> "$CONF"
  done
  # A benchmark job owns its node: the partition never shares one.
  echo "PartitionName=bench Nodes=$nodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE" >> "$CONF"
}

write_task_prolog() {
  cat > "$DIR/task-prolog.sh" <<'EOF'
#!/bin/sh
# Slurm adds each "export NAME=VALUE" this prints to the task's environment.
env_file="$(dirname "$0")/env-$SLURMD_NODENAME"
[ -f "$env_file" ] && sed -n 's/^\([A-Z_][A-Z0-9_]*=.*\)$/export \1/p' "$env_file"
exit 0
EOF
  chmod 755 "$DIR/task-prolog.sh"
}

start_munge() {
  [ -f "$DIR/munge.key" ] || mungekey --create --keyfile="$DIR/munge.key" >/dev/null 2>&1 || \
    dd if=/dev/urandom of="$DIR/munge.key" bs=1024 count=1 status=none
  chmod 600 "$DIR/munge.key"
  # --force: munged refuses to run as root otherwise; this private instance serves only us.
  munged --force --key-file="$DIR/munge.key" --socket="$DIR/munge.socket" \
    --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" --seed-file="$DIR/munged.seed"
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_nodes_idle() {
  local deadline=$((SECONDS + 60)) states
  while [ $SECONDS -lt $deadline ]; do
    states=$(SLURM_CONF=$CONF sinfo -h -N -o '%N %t' 2>/dev/null || true)
    if [ "$(echo "$states" | grep -c ' idle$')" -eq ${#NODES[@]} ]; then
      return 0
    fi
    sleep 1
  done
  echo "slurm-local: nodes not idle after 60 s: $states (see $DIR/*.log)" >&2
  return 1
}

start() {
  install_packages
  mkdir -p "$DIR/state"
  chmod 700 "$DIR"
  write_conf
  write_task_prolog
  alive "$DIR/munged.pid" || start_munge
  alive "$DIR/slurmctld.pid" || slurmctld -f "$CONF"
  for node in "${NODES[@]}"; do
    mkdir -p "$DIR/spool-$node"
    alive "$DIR/slurmd-$node.pid" || slurmd -f "$CONF" -N "$node"
  done
  wait_nodes_idle
  echo "SLURM_CONF=$CONF"
}

stop() {
  local pidfile pid
  # slurmd first, then the controller, then munge: each by the pid file this script made.
  for pidfile in "$DIR"/slurmd-*.pid "$DIR/slurmctld.pid" "$DIR/munged.pid"; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
}

status() {
  if ! alive "$DIR/slurmctld.pid"; then
    echo "slurm-local: not running (no slurmctld in $DIR)"
    return 3
  fi
  SLURM_CONF=$CONF sinfo -N -o '%N %t %f'
  SLURM_CONF=$CONF squeue
}

case $ACTION in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac

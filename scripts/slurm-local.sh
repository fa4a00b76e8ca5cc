#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for CI: the grader's job
# arrays (`grader slurm`) run through the real sbatch, slurmctld and slurmd.
#
#   scripts/slurm-local.sh [start]   install (once), configure and start; waits
#                                    until the node is idle
#   scripts/slurm-local.sh stop      stop the daemons this script started
#
# Needs root (it writes /etc/slurm/slurm.conf and starts daemons) and
# Debian's slurmctld, slurmd, slurm-client and munge, which
# `scripts/setup.sh --dev` installs. Idempotent: a second start restarts the
# daemons with the same configuration. No cgroups: processes are tracked
# with proctrack/linuxproc and tasks are not confined (task/none), which is
# what a container allows.
set -euo pipefail

verb=${1:-start}
state=/var/lib/slurm-local
conf=/etc/slurm/slurm.conf
log=/var/log/slurm-local

die() { echo "slurm-local: $*" >&2; exit 1; }
say() { echo "slurm-local: $*" >&2; }

[[ $(id -u) == 0 ]] || die "run me as root: I write /etc/slurm and start daemons"

stop() {
    for daemon in slurmd slurmctld munged; do
        if [[ -f $state/$daemon.pid ]]; then
            pid=$(cat "$state/$daemon.pid")
            # Only the daemon this script started, by its id.
            if kill -0 "$pid" 2>/dev/null; then
                kill "$pid"
                for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            fi
            rm -f "$state/$daemon.pid"
        fi
    done
}

case $verb in
stop) stop; say "stopped"; exit 0 ;;
start) ;;
*) die "unknown verb '$verb'; use start or stop" ;;
esac

for tool in slurmctld slurmd sbatch munged; do
    command -v "$tool" >/dev/null || die "$tool is not installed: scripts/setup.sh --dev installs Slurm and munge"
done

stop
mkdir -p "$state" "$log" /etc/slurm /var/spool/slurmctld /var/spool/slurmd /run/munge /etc/munge /var/lib/munge /var/log/munge

# munge authenticates every Slurm message: one key, readable by munge only.
id munge >/dev/null 2>&1 || useradd --system --no-create-home munge
if [[ ! -s /etc/munge/munge.key ]]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown munge:munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge /etc/munge
chmod 400 /etc/munge/munge.key
chmod 700 /etc/munge /var/lib/munge /var/log/munge
chmod 755 /run/munge
runuser -u munge -- munged --force
pgrep -u munge -n -x munged >"$state/munged.pid"

host=$(hostname -s)
cpus=$(nproc)
# Leave some memory to the machine; slurmd refuses a node claiming more
# than it has.
memory=$(( $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) * 3 / 4 ))
cat >"$conf" <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster for CI.
ClusterName=local
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$log/slurmctld.log
SlurmdLogFile=$log/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MpiDefault=none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=30 State=UP
EOF
# An empty cgroup.conf: slurmd reads it even when no cgroup plugin is used.
: >/etc/slurm/cgroup.conf

# -c: a clean start, no jobs kept from an earlier one.
slurmctld -c
slurmd
say "waiting for node $host to be idle"
for _ in $(seq 60); do
    if [[ $(sinfo -h -N -n "$host" -o %t 2>/dev/null) == idle ]]; then
        sinfo
        exit 0
    fi
    sleep 1
done
sinfo -N -l >&2 || true
tail -n 20 "$log/slurmctld.log" "$log/slurmd.log" >&2 || true
die "node $host did not become idle within 60 s"

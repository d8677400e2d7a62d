# A single-node Slurm of Debian's packages (slurmctld, slurmd, munge) in a
# directory of its own, for tests/scale/slurm.sh and bench/slurm/overhead.sh.
# Sourced:
#
#	slurm_start DIR [SCHEDULER_PARAMETERS]
#	                  writes slurm.conf, gres.conf and a munge key into DIR
#	                  (an empty directory), starts munged, slurmctld and
#	                  slurmd in the foreground in the background (logs,
#	                  state, spool and pid files in DIR) and returns 0 once
#	                  the node is idle; else 1, the reason and the daemons'
#	                  last log lines in DIR/why. SCHEDULER_PARAMETERS, if
#	                  given, is slurm.conf's SchedulerParameters (the
#	                  default scheduler otherwise).
#	slurm_stop        cancels the cluster's jobs, stops the daemons and kills
#	                  any process still started with this SLURM_CONF (a job
#	                  step slurmd left behind); a second call does nothing.
#
# slurm_start exports SLURM_CONF (DIR/slurm.conf): sbatch, squeue, scontrol
# and the jobs read it. No accounting database (sacct has nothing): the job
# completion log, DIR/jobcomp.log, has a line per job, each array task one,
# with its JobState and ExitCode. Completed jobs leave slurmctld's memory
# after 2 s (MinJobAge), which keeps `sbatch --wait` polling every 2 s (under
# the default 300 s it backs off to 8 s, then 32 s). The cluster has one partition without a time
# limit, the machine's CPUs and as many GPUs, each a link to /dev/null: Slurm
# 22.05 drops a gpu GRES without a File, and wants a device there. It listens
# on two free ports in 20000-29999 (below the usual ephemeral range, clear of
# Slurm's 6817-6819), and runs its daemons and jobs as the current user:
# nothing here needs or touches a real installation, running or not.
# Its variables are named slurm_*, so that the sourcing script keeps its own.
slurm_dir=
slurm_procs=   # PID:NAME of each daemon
slurm_ctld=
slurm_node=aotc-node

# slurm_daemon NAME CMD...: CMD in the background, its stderr in DIR/NAME.err.
slurm_daemon() {
	slurm_name=$1
	shift
	"$@" 2>"$slurm_dir/$slurm_name.err" &
	slurm_procs="$slurm_procs $!:$slurm_name"
}

# slurm_why REASON: the reason and every daemon's last lines, into DIR/why.
slurm_why() {
	{
		printf '%s\n' "$1"
		# (In the foreground the daemons log to stderr too, from the start.)
		for slurm_f in munged.err slurmctld.err slurmd.err; do
			[ -s "$slurm_dir/$slurm_f" ] || continue
			printf '%s (last lines):\n' "$slurm_f"
			tail -8 "$slurm_dir/$slurm_f" | sed 's/^/  /'
		done
	} >"$slurm_dir/why"
}

slurm_start() {
	slurm_dir=$1
	slurm_sched=${2:-}
	for slurm_c in munged mungekey slurmctld slurmd sbatch; do
		command -v "$slurm_c" >/dev/null ||
			{ echo "$slurm_c is not installed (tools/setup.sh installs it)" >"$slurm_dir/why"; return 1; }
	done
	slurm_cpus=$(nproc)
	mkdir -p "$slurm_dir/state" "$slurm_dir/spool" "$slurm_dir/gpus"
	mkdir "$slurm_dir/munge"
	slurm_i=0
	while [ "$slurm_i" -lt "$slurm_cpus" ]; do
		ln -s /dev/null "$slurm_dir/gpus/gpu$slurm_i"
		slurm_i=$((slurm_i + 1))
	done
	slurm_ports=$(python3 -c '
import random, socket
ports = []
while len(ports) < 2:
    p = random.randrange(20000, 30000)
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", p))
        except OSError:
            continue
    if p not in ports:
        ports.append(p)
print(*ports)')
	set -- $slurm_ports
	cat >"$slurm_dir/slurm.conf" <<EOF
ClusterName=aotc-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$slurm_dir/munge/socket
StateSaveLocation=$slurm_dir/state
SlurmdSpoolDir=$slurm_dir/spool
SlurmctldPidFile=$slurm_dir/slurmctld.pid
SlurmdPidFile=$slurm_dir/slurmd.pid
SlurmctldLogFile=$slurm_dir/slurmctld.log
SlurmdLogFile=$slurm_dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$slurm_dir/jobcomp.log
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
MinJobAge=2
NodeName=$slurm_node NodeAddr=127.0.0.1 CPUs=$slurm_cpus Gres=gpu:$slurm_cpus State=UNKNOWN
PartitionName=aotc Nodes=$slurm_node Default=YES MaxTime=INFINITE State=UP
EOF
	[ -z "$slurm_sched" ] || echo "SchedulerParameters=$slurm_sched" >>"$slurm_dir/slurm.conf"
	echo "Name=gpu File=$slurm_dir/gpus/gpu[0-$((slurm_cpus - 1))]" >"$slurm_dir/gres.conf"
	export SLURM_CONF="$slurm_dir/slurm.conf"

	mungekey --create --keyfile="$slurm_dir/munge/munge.key" 2>"$slurm_dir/munged.err" ||
		{ slurm_why "mungekey failed"; return 1; }
	# --force: munged would refuse a socket in a directory that other users
	# cannot search (a mktemp one); everything here runs as one user.
	slurm_daemon munged munged --foreground --force --socket="$slurm_dir/munge/socket" \
		--key-file="$slurm_dir/munge/munge.key" --pid-file="$slurm_dir/munge/munged.pid" \
		--seed-file="$slurm_dir/munge/munged.seed"
	slurm_daemon slurmctld slurmctld -D
	slurm_ctld=$!
	slurm_daemon slurmd slurmd -D -N "$slurm_node"

	# The node registers within seconds; 60 s allows for a loaded machine.
	slurm_t0=$(date +%s)
	while :; do
		for slurm_p in $slurm_procs; do
			kill -0 "${slurm_p%%:*}" 2>/dev/null || { slurm_why "${slurm_p#*:} exited"; return 1; }
		done
		slurm_state=$(sinfo -h -n "$slurm_node" -o %T 2>/dev/null)
		[ "$slurm_state" = idle ] && return 0
		if [ $(($(date +%s) - slurm_t0)) -ge 60 ]; then
			slurm_why "the node is not idle after 60 s (sinfo: ${slurm_state:-no answer})"
			return 1
		fi
		sleep 0.2
	done
}

slurm_stop() {
	[ -n "$slurm_dir" ] || return 0
	# Jobs first, while slurmd can still end their steps (and only while
	# slurmctld runs: scancel would retry a dead one for seconds).
	if kill -0 "$slurm_ctld" 2>/dev/null && scancel --quiet --partition=aotc 2>/dev/null; then
		for _ in $(seq 50); do
			[ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
			sleep 0.1
		done
	fi
	for slurm_p in $slurm_procs; do kill "${slurm_p%%:*}" 2>/dev/null; done
	for slurm_p in $slurm_procs; do
		slurm_p=${slurm_p%%:*}
		for _ in $(seq 50); do kill -0 "$slurm_p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$slurm_p" 2>/dev/null
		wait "$slurm_p" 2>/dev/null
	done
	# What slurmd started and did not end: every process of this cluster
	# carries its SLURM_CONF from its start (this shell does not: it
	# exported it later).
	for slurm_e in /proc/[0-9]*/environ; do
		slurm_p=${slurm_e#/proc/}
		slurm_p=${slurm_p%/environ}
		tr '\0' '\n' 2>/dev/null <"$slurm_e" | grep -qxF "SLURM_CONF=$slurm_dir/slurm.conf" &&
			kill -KILL "$slurm_p" 2>/dev/null
	done
	slurm_dir=
	slurm_procs=
	slurm_ctld=
}

#!/bin/bash
# tests/cluster.sh - an emulated cluster on one machine, for the tests and
# the benchmarks: K nodes, each a network namespace with its own UTS
# namespace (host name), mount namespace (its own /dev/shm, /tmp,
# node-local directory, /proc, boot_id and machine-id), PID namespace and
# IPC namespace, joined to a bridge on the host by a veth pair.  MPI takes
# the nodes for separate hosts (UCX tells hosts apart by boot_id and
# cannot reach another node's processes or memory), so every byte between
# nodes, MPI's included, crosses the links; ranks of one node still share
# memory.
#
#   head (the host's network namespace): bridge BR  NET.1/24, mpiexec, gfmd
#     |-- veth --  node 1: NAME-n1  NET.11  gfsd, ranks
#     |-- veth --  node 2: NAME-n2  NET.12  gfsd, ranks  ...
#
#   tests/cluster.sh up K [--rate RATE] [--delay DELAY] [--disk RATE] [--no-gfarm] [--slurm]
#   tests/cluster.sh run [-n N] [-ppn P] [-nodes K] [MPIEXEC-OPTS..] CMD..
#   tests/cluster.sh orun [-n N] [-ppn P] [-nodes K] [MPIRUN-OPTS..] CMD..
#                                            the same with Open MPI's mpirun
#   tests/cluster.sh exec NODE|head CMD..    one command on a node
#   tests/cluster.sh env                     export lines for a shell (eval)
#   tests/cluster.sh sent NODE..             bytes the nodes sent on their links
#   tests/cluster.sh shape RATE [DELAY] | unshape
#   tests/cluster.sh disk RATE | off         every gfsd's I/O limited to RATE
#   tests/cluster.sh kill NODE               a node fails: its processes, link,
#                                            namespace and /dev/shm are gone
#   tests/cluster.sh revive NODE             it boots again (its disk kept)
#   tests/cluster.sh freeze NODE | thaw NODE its processes stopped and its link
#                                            down (a hung node), or back
#   tests/cluster.sh down
#
# NODE is a node's number (1..K) or host name.  Every node mounts, in its
# own mount namespace only:
#   /dev/shm       a tmpfs of its own (made once, kept across commands)
#   /tmp           DIR/nodeK/tmp
#   DIR/local      DIR/nodeK/local: the node-local directory, at the same
#                  path on every node, like /local on a real cluster
#   DIR/run        DIR/nodeK/run: its daemons' sockets (munged's)
# and sees everything else as the host does; DIR/shared is storage every
# node shares (a parallel file system's place).  Names resolve through
# /etc/netns/NS/hosts on the nodes and a hosts file bound over /etc/hosts
# in the head's own mount namespace (`exec head`, `run`): the host's
# /etc/hosts is never edited.
#
# With --slurm: munged in the head and on every node, slurmctld in the
# head, a slurmd on every node under its host name, one partition NAME of
# the K nodes (SLURM_CONF from `env`; section "Slurm" below).  A node
# sees the host's cgroup hierarchies, read-only, at /sys/fs/cgroup
# (slurmd will not start without them; proctrack/pgid and task/none make
# none).
#
# With Gfarm (the default): gfmd runs in the head, each node runs a gfsd
# registered under the node's host name, so a file a rank creates lands on
# its own node's gfsd; GFARM_CONFIG_FILE is DIR/gfarm/gfarm2.conf.
#
# A node's "disk" (--disk, `disk`): on one machine every gfsd spools to
# the same disk and page cache, so a node's own storage bandwidth is
# emulated where every byte to or from its gfsd passes: the gfsd port's
# traffic on lo (the node's own clients) and on eth0 (other nodes') is
# redirected through one ifb device per node, shaped by tbf to RATE for
# reads and writes together.  Gfarm clients then reach a local gfsd over
# TCP (direct_local_access disable) instead of opening its spool files;
# `disk off` gives them back their direct access.
#
# A node's namespaces are held by its init (tests/cluster-enter.c, built
# into DIR at `up`); `exec` and `run` enter them, so all of a node's
# processes, from any command, see each other.  `run` launches MPICH's
# hydra with a launcher that enters a node (tests/cluster-exec), so ranks
# see their node's name, shm, network, processes.  Every process on a
# node preloads tests/cluster-ucxfix.c (the node's /etc/ld.so.preload):
# MPICH 4.0.2 over UCX 1.13's TCP transport otherwise often hangs in
# MPI_Finalize (the file says why).
#
# Environment:
#   GFSPLIT_CLUSTER       the cluster's name           (gfc)
#   GFSPLIT_CLUSTER_NET   its /24 in 198.18.0.0/15     (198.18.1)
#   GFSPLIT_CLUSTER_DIR   its state dir                (/var/tmp/gfsplit-cluster.NAME)
#   GFSPLIT_CLUSTER_PORT  gfmd's port (20671); gfsd, slurmctld and slurmd
#                         take the next three
#   GFSPLIT_CLUSTER_SHM   size of each node's /dev/shm (25%, of RAM)
# Addresses are in the benchmarking range 198.18.0.0/15 (RFC 2544) only.
# `up` first removes what a crashed run left; `down` removes every
# namespace, link, mount, daemon and directory `up` made.  Exit status 77
# (and "SKIP: reason" on stderr) where the machine cannot build a cluster.
# shellcheck disable=SC2015 # a && b || die
set -u
PATH="$PATH:/usr/sbin:/sbin"
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=${GFSPLIT_CLUSTER:-gfc}
NET=${GFSPLIT_CLUSTER_NET:-198.18.1}
DIR=${GFSPLIT_CLUSTER_DIR:-/var/tmp/gfsplit-cluster.$NAME}
GFMD_PORT=${GFSPLIT_CLUSTER_PORT:-20671}
GFSD_PORT=$((GFMD_PORT + 1))
SHM_SIZE=${GFSPLIT_CLUSTER_SHM:-25%}
BR=${NAME}br
HEAD=$NAME-head

die() { echo "cluster: ERROR: $*" >&2; exit 1; }
skip() { echo "SKIP: cluster: $*" >&2; exit 77; }
say() { [ -n "${CLUSTER_QUIET:-}" ] || echo "cluster: $*" >&2; }

case $NAME in *[!a-z0-9]* | "" | ?????????*)
	die "GFSPLIT_CLUSTER '$NAME': 1-8 characters a-z 0-9" ;; esac
case $NET in 198.1[89].[0-9] | 198.1[89].[1-9][0-9] | 198.1[89].1[0-9][0-9] | \
	198.1[89].2[0-4][0-9] | 198.1[89].25[0-5]) ;;
*) die "GFSPLIT_CLUSTER_NET '$NET': must be a /24 in 198.18.0.0/15 (198.18.X or 198.19.X)" ;;
esac

node_ns() { echo "$NAME-n$1"; }
node_host() { echo "$NAME-n$1"; }
node_ip() { echo "$NET.$((10 + $1))"; }
head_ip() { echo "$NET.1"; }
veth() { echo "$NAME$1h"; }
# the bridge's MAC: locally administered, from NET (198.1Y.X -> 02:00:c6:1Y:X:01)
bridge_mac() {
	local o=${NET#198.} x
	x=${o#*.}
	printf '02:00:c6:%02x:%02x:01\n' "${o%%.*}" "$x"
}

node_alive() { [ -d "$DIR/node$1" ] && [ ! -e "$DIR/node$1/down" ]; }
# K of the running cluster (0 if none)
nodes() { [ -r "$DIR/K" ] && cat "$DIR/K" || echo 0; }

# node number from a number or host name, or die
node_num() {
	local k=${1#"$NAME"-n} n
	n=$(nodes)
	case $k in '' | *[!0-9]*) die "no node '$1' in cluster $NAME" ;; esac
	((k >= 1 && k <= n)) || die "no node '$1' in cluster $NAME (nodes 1..$n)"
	echo "$k"
}

# ---- can it be built here? -------------------------------------------------
can_build() {
	local c
	[ "$(id -u)" = 0 ] || skip "needs root (network, UTS and mount namespaces)"
	for c in ip unshare nsenter mount hostname; do
		command -v $c >/dev/null 2>&1 || skip "'$c' not found"
	done
	unshare --uts --mount true 2>/dev/null ||
		skip "cannot make UTS and mount namespaces (no CAP_SYS_ADMIN)"
	ip netns list >/dev/null 2>&1 || skip "'ip netns' does not work here"
}

# The state dir: ours (root's, not a symlink), or absent.
check_dir() {
	if [ -L "$DIR" ] || { [ -e "$DIR" ] && [ "$(stat -c %u "$DIR")" != 0 ]; }; then
		die "$DIR: not a directory of root's (a symlink or another user's); refusing it"
	fi
}

# ---- teardown ----------------------------------------------------------------
# Kill every process inside node k's network namespace.
kill_node_procs() {
	local ns pids t
	ns=$(node_ns "$1")
	for t in 1 2 3 4 5 6 7 8 9 10; do
		pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
		[ -n "${pids// /}" ] || return 0
		# shellcheck disable=SC2086 # a list of pids
		if ((t < 4)); then kill -TERM $pids 2>/dev/null; else kill -KILL $pids 2>/dev/null; fi
		sleep 0.2
	done
}
# node_gone K: what makes node K a node gone: every process in it, its
# link and namespace, its /dev/shm (its disk stays)
node_gone() {
	kill_node_procs "$1"
	ip link del "$(veth "$1")" 2>/dev/null
	ip netns del "$(node_ns "$1")" 2>/dev/null
	while mountpoint -q "$DIR/node$1/shm" 2>/dev/null; do umount -l "$DIR/node$1/shm" || break; done
	rm -f "$DIR/node$1/frozen"
}
stop_pidfile() {	# $1 pid file: the daemon, and its session or its children
	local pid p t
	pid=$(cat "$1" 2>/dev/null) || return 0
	[ -n "$pid" ] || return 0
	for p in $pid $(ps -eo pid=,sid=,ppid= | awk -v s="$pid" '$2 == s || $3 == s {print $1}'); do
		kill -TERM "$p" 2>/dev/null
	done
	for ((t = 0; t < 30; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	for p in $pid $(ps -eo pid=,sid=,ppid= | awk -v s="$pid" '$2 == s || $3 == s {print $1}'); do
		kill -KILL "$p" 2>/dev/null
	done
	rm -f "$1"
}
down() {
	local ns k
	check_dir
	for ns in $(ip netns list 2>/dev/null | awk -v p="$NAME-n" \
	    'index($1, p) == 1 && substr($1, length(p) + 1) ~ /^[0-9]+$/ {print $1}'); do
		node_gone "${ns#"$NAME"-n}"
		rm -rf "/etc/netns/$ns"
	done
	for k in $(ip -o link show 2>/dev/null | awk -F': ' -v p="$NAME" \
	    '{ n = $2; sub(/@.*/, "", n) } index(n, p) == 1 && substr(n, length(p) + 1) ~ /^[0-9]+h$/ {print n}'); do
		ip link del "$k" 2>/dev/null
	done
	ip link del "$BR" 2>/dev/null
	[ -e "$DIR/gfarm/gfmd.pid" ] && stop_pidfile "$DIR/gfarm/gfmd.pid"
	[ -e "$DIR/slurm/slurmctld.pid" ] && stop_pidfile "$DIR/slurm/slurmctld.pid"
	[ -e "$DIR/munge/munged.pid" ] && stop_pidfile "$DIR/munge/munged.pid"
	if [ -d "$DIR" ]; then
		for k in "$DIR"/node*/shm "$DIR"/local; do	# a node's namespace already gone
			while mountpoint -q "$k" 2>/dev/null; do umount -l "$k" || break; done
		done
		rm -rf "$DIR"
	fi
	return 0
}

# ---- entering a node -----------------------------------------------------------
# A node is a set of namespaces held by its init (tests/cluster-enter.c,
# PID 1 of the node): network (its link), UTS (host name), mount (its
# /tmp, /dev/shm, local directory, /proc, boot_id and machine-id), PID and
# IPC.  Every command on the node enters them, so the node's processes see
# each other (and nothing of the other nodes') for as long as it is up.
#
# node_start K: node K boots: its init, its mounts, a new boot_id.
node_start() {
	local k=$1 d=$DIR/node$1 t ns
	ns=$(node_ns "$k")
	rm -rf "$d/init.pid" "$d/etc-work"
	mkdir -p "$d/etc" "$d/etc-work" "$d/cgroup" "$d/run" "$DIR/run" || die "cannot make $d/etc"
	[ -s "$d/etc/machine-id" ] || { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; echo; } \
		>"$d/etc/machine-id" || die "cannot write $d/etc/machine-id"
	echo "$DIR/ucxfix.so" >"$d/etc/ld.so.preload" || die "cannot write $d/etc/ld.so.preload"
	cat /proc/sys/kernel/random/uuid >"$d/boot_id" || die "cannot write $d/boot_id"
	# The shell is PID 1 of the node from here; "read" is a builtin, so
	# /proc/self (still the host's /proc) is the shell: its host PID.
	# The node's /etc is the host's with the node's own files over it
	# (DIR/nodeK/etc: machine-id, ld.so.preload), its hosts file the one
	# `ip netns exec` bound, bound again over the overlay.
	# shellcheck disable=SC2016 # expanded by the inner shell
	nsenter --net="/run/netns/$ns" unshare --pid --fork --ipc --uts --mount --propagation private -- \
		/bin/sh -c 'read -r pid rest </proc/self/stat &&
			mount --rbind /sys/fs/cgroup "$2/cgroup" &&
			mount -t sysfs -o nosuid,nodev,noexec sysfs /sys &&
			mount --rbind "$2/cgroup" /sys/fs/cgroup && umount -l "$2/cgroup" &&
			for m in $(sed -n "s|^[^ ]* [^ ]* [^ ]* [^ ]* \(/sys/fs/cgroup[^ ]*\) .*|\1|p" \
			    /proc/self/mountinfo); do mount -o remount,bind,ro "$m" || exit 1; done &&
			hostname "$1" && mount -t proc -o nosuid,nodev,noexec proc /proc &&
			mount --bind "$2/boot_id" /proc/sys/kernel/random/boot_id &&
			mount -t overlay -o "lowerdir=/etc,upperdir=$2/etc,workdir=$2/etc-work" \
				gfsplit-etc /etc &&
			mount --bind "/etc/netns/$5/hosts" /etc/hosts &&
			mount --bind /tmp "$2/host-tmp" && mount --bind "$2/tmp" /tmp &&
			mount --bind "$2/shm" /dev/shm && mount --bind "$2/local" "$3" &&
			mount --bind "$2/run" "$3/../run" &&
			echo "$pid" >"$2/init.pid" && exec "$4" init' \
		cluster-node "$(node_host "$k")" "$d" "$DIR/local" "$DIR/enter" "$ns" \
		</dev/null >/dev/null 2>"$d/init.err" 9<&- &
	for ((t = 0; t < 100; t++)); do
		[ -s "$d/init.pid" ] && return 0
		kill -0 $! 2>/dev/null || break
		sleep 0.05
	done
	die "node $k did not start: $(cat "$d/init.err")"
}
# build_helpers: tests/cluster-enter.c and tests/cluster-ucxfix.c, into
# the state dir
build_helpers() {
	local cc=${CC:-cc}
	command -v "$cc" >/dev/null 2>&1 || skip "no C compiler ('$cc') to build tests/cluster-enter.c"
	"$cc" -O2 -Wall -o "$DIR/enter" "$TOP/tests/cluster-enter.c" &&
		"$cc" -O2 -Wall -shared -fPIC -o "$DIR/ucxfix.so" "$TOP/tests/cluster-ucxfix.c" ||
		die "cannot build tests/cluster-enter.c and tests/cluster-ucxfix.c"
	chmod 755 "$DIR/enter" "$DIR/ucxfix.so"
}
# exec_node K CMD..: CMD on node K, in the caller's directory if the node
# has it.  Paths under the host's /tmp that the node must still see (this
# tree, if it lives there, and $GFSPLIT_CLUSTER_KEEP) are bound into the
# node's /tmp from the host's, once.
exec_node() {
	local k=$1 keep='' p pid
	shift
	node_alive "$k" || die "node $k of cluster $NAME is down"
	pid=$(cat "$DIR/node$k/init.pid" 2>/dev/null) || die "node $k of cluster $NAME has no init"
	for p in "$TOP" ${GFSPLIT_CLUSTER_KEEP:-}; do
		case $p in /tmp/?*) keep="$keep ${p#/tmp/}" ;; esac
	done
	# shellcheck disable=SC2016 # expanded by the inner shell
	[ -z "$keep" ] || "$DIR/enter" "$pid" / /bin/sh -c 'for p in $2; do
			mountpoint -q "/tmp/$p" || { mkdir -p "/tmp/$p" &&
				mount --bind "$1/host-tmp/$p" "/tmp/$p"; } || exit 1
		done' cluster-keep "$DIR/node$k" "$keep" || die "cannot bind $keep into node $k's /tmp"
	exec "$DIR/enter" "$pid" "$PWD" "$@"
}
# exec_head CMD..: CMD in the host's network, with the cluster's names.
exec_head() {
	[ -r "$DIR/hosts" ] || die "cluster $NAME is not up (no $DIR/hosts)"
	# shellcheck disable=SC2016
	exec unshare --mount --propagation private -- /bin/sh -c \
		'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
		cluster-exec "$DIR/hosts" "$@"
}

# ---- links -------------------------------------------------------------------------
# shape_dev DEV RATE DELAY [NS]: RATE (tbf) and DELAY (netem) on DEV's egress
shape_dev() {
	local dev=$1 rate=$2 delay=$3 ex=()
	[ -n "${4:-}" ] && ex=(ip netns exec "$4")
	"${ex[@]}" tc qdisc del dev "$dev" root 2>/dev/null
	if [ -n "$delay" ] && [ -n "$rate" ]; then
		"${ex[@]}" tc qdisc add dev "$dev" root handle 1: netem delay "$delay" limit 10000 &&
			"${ex[@]}" tc qdisc add dev "$dev" parent 1: handle 2: tbf rate "$rate" \
				burst 256kb latency 100ms
	elif [ -n "$rate" ]; then
		# a bucket of at least one (GSO) packet; 256 KiB is 2 ms at 1 Gbit/s
		"${ex[@]}" tc qdisc add dev "$dev" root tbf rate "$rate" burst 256kb latency 100ms
	elif [ -n "$delay" ]; then
		"${ex[@]}" tc qdisc add dev "$dev" root netem delay "$delay" limit 10000
	fi
}
shape() {	# RATE [DELAY]: every node's link, both ways
	local k n rate=${1:-} delay=${2:-}
	n=$(nodes)
	((n > 0)) || die "cluster $NAME is not up"
	if [ -n "$rate$delay" ]; then
		command -v tc >/dev/null 2>&1 || skip "'tc' not found (iproute2)"
	fi
	for ((k = 1; k <= n; k++)); do
		node_alive "$k" && shape_node "$k" "$rate" "$delay"
	done
	printf '%s %s\n' "${rate:--}" "${delay:--}" >"$DIR/shape"
}
shape_node() {	# K RATE DELAY: node K's link, both ways
	shape_dev "$(veth "$1")" "$2" "$3" && shape_dev eth0 "$2" "$3" "$(node_ns "$1")" ||
		die "tc cannot shape node $1's link (rate '$2', delay '$3'): sch_tbf/sch_netem?"
}

# disk_node K RATE: node K's gfsd serves at most RATE (tbf on an ifb
# that every packet to or from the gfsd port passes); RATE '' removes it
disk_node() {
	local ex=(ip netns exec "$(node_ns "$1")") rate=$2 f
	"${ex[@]}" tc qdisc del dev lo clsact 2>/dev/null
	"${ex[@]}" tc qdisc del dev eth0 clsact 2>/dev/null
	"${ex[@]}" ip link del disk0 2>/dev/null
	[ -n "$rate" ] || return 0
	"${ex[@]}" ip link add disk0 type ifb && "${ex[@]}" ip link set disk0 up &&
		"${ex[@]}" tc qdisc add dev disk0 root tbf rate "$rate" burst 256kb latency 100ms &&
		"${ex[@]}" tc qdisc add dev lo clsact && "${ex[@]}" tc qdisc add dev eth0 clsact ||
		die "cannot give node $1 a disk of $rate (ifb, sch_tbf, sch_clsact?)"
	for f in "lo ingress dport" "lo ingress sport" "eth0 ingress dport" "eth0 egress sport"; do
		# shellcheck disable=SC2086 # three words
		set -- $f
		"${ex[@]}" tc filter add dev "$1" "$2" protocol ip u32 match ip "$3" "$GFSD_PORT" 0xffff \
			action mirred egress redirect dev disk0 ||
			die "cannot pass the gfsd's traffic ($f) through its disk (act_mirred?)"
	done
}
# disk RATE | off: every node's gfsd.  With a disk, Gfarm clients reach a
# local gfsd over TCP too (the emulated disk is on the way to the gfsd):
# direct_local_access is disabled in the configuration clients read at
# start, and enabled again by "off".
disk() {
	local k n rate=$1 conf=$DIR/gfarm/gfarm2.conf
	n=$(nodes)
	((n > 0)) || die "cluster $NAME is not up"
	[ -r "$conf" ] || die "disk: cluster $NAME has no Gfarm (up without --no-gfarm)"
	[ "$rate" = off ] && rate=
	if [ -n "$rate" ]; then
		grep -qx 'direct_local_access disable' "$conf" ||
			echo 'direct_local_access disable' >>"$conf" || die "cannot write $conf"
	else
		sed -i '/^direct_local_access disable$/d' "$conf" || die "cannot write $conf"
	fi
	for ((k = 1; k <= n; k++)); do
		node_alive "$k" && disk_node "$k" "$rate"
	done
	echo "${rate:--}" >"$DIR/disk"
}

# ---- up ------------------------------------------------------------------------------
hosts_file() {	# the names of head and nodes, for /etc/hosts
	local k
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n%s\t%s\n' "$(head_ip)" "$HEAD"
	for ((k = 1; k <= $1; k++)); do
		printf '%s\t%s\n' "$(node_ip "$k")" "$(node_host "$k")"
	done
}
make_net() {
	local k=$1 ns v
	ns=$(node_ns "$k")
	v=$(veth "$k")
	ip netns add "$ns" || skip "cannot create network namespace $ns"
	ip link add "$v" type veth peer name "${v%h}c" || skip "cannot create a veth pair"
	ip link set "${v%h}c" netns "$ns" &&
		ip link set "$v" master "$BR" &&
		ip link set "$v" up &&
		ip netns exec "$ns" ip link set "${v%h}c" name eth0 &&
		ip netns exec "$ns" ip addr add "$(node_ip "$k")/24" dev eth0 &&
		ip netns exec "$ns" ip link set eth0 up &&
		ip netns exec "$ns" ip link set lo up ||
		die "cannot configure node $k's link"
	mkdir -p "/etc/netns/$ns" && hosts_file "$K" >"/etc/netns/$ns/hosts" ||
		die "cannot write /etc/netns/$ns/hosts"
}
make_fs() {
	local k=$1 d=$DIR/node$1
	mkdir -p "$d/tmp" "$d/shm" "$d/local" "$d/host-tmp" && chmod 1777 "$d/tmp" "$d/local" &&
		mount -t tmpfs -o "size=$SHM_SIZE,mode=1777,nosuid,nodev" "gfsplit-$NAME-n$k" "$d/shm" ||
		die "cannot make node $k's /tmp, /dev/shm and local directory under $d"
}
ping_all() {	# every node reaches the head and the next node
	local k t
	for ((k = 1; k <= K; k++)); do
		for t in 1 2 3 4 5 6 7 8 9 10; do
			ip netns exec "$(node_ns "$k")" ping -c 1 -W 1 "$(head_ip)" >/dev/null 2>&1 && break
			sleep 0.2
		done
		((t < 10)) || die "node $k cannot reach the head at $(head_ip) (bridge filtered?)"
	done
	if ((K > 1)); then
		ip netns exec "$(node_ns 1)" ping -c 1 -W 1 "$(node_ip 2)" >/dev/null 2>&1 ||
			die "node 1 cannot reach node 2 (bridge netfilter drops bridged traffic?)"
	fi
}

gfarm_conf() {
	local g=$DIR/gfarm common
	mkdir -p "$g/run" "$g/log" "$g/journal" && chmod 700 "$g" || die "cannot make $g"
	common="auth enable sharedsecret *
shared_key_file $g/shared_key
sockopt keepalive
sockopt tcp_nodelay
minimum_free_disk_space 16M
schedule_busy_load_thresh 50"
	# one client configuration for the head and every node; fail fast when
	# a daemon is down instead of retrying for 30 s
	cat >"$g/gfarm2.conf" <<EOF
metadb_server_host $HEAD
metadb_server_port $GFMD_PORT
$common
gfmd_reconnection_timeout 5
no_file_system_node_timeout 5
EOF
	printf '_gfarmfs root\n_gfarmmd root\n' >"$g/usermap"
	cat >"$g/gfmd.conf" <<EOF
metadb_server_host $HEAD
metadb_server_port $GFMD_PORT
admin_user root
$common
local_user_map $g/usermap
metadb_replication disable
metadb_journal_dir $g/journal
EOF
	cat >"$g/gfsd.conf" <<EOF
metadb_server_host $HEAD
metadb_server_port $GFMD_PORT
$common
local_user_map $g/usermap
spool_check_level disable
EOF
	chmod 644 "$g/gfarm2.conf" && chmod 600 "$g/gfmd.conf" "$g/gfsd.conf"
}
# every gfsd authenticated and reporting a load average
gfsd_up() {
	local up k
	up=$(timeout 15 "$0" exec head gfhost -l 2>/dev/null |
	    awk '$2 ~ /^[sgG]$/ && $1 ~ /\// {print $5}') || return 1
	for ((k = 1; k <= K; k++)); do
		grep -Fqx "$(node_host "$k")" <<<"$up" || return 1
	done
}
gfsd_wait() {	# up to 30 s for every gfsd
	local t
	for ((t = 0; t < 150; t++)); do gfsd_up && return 0; sleep 0.2; done
	die "gfsd(s) did not come up: $(timeout 10 "$0" exec head gfhost -l 2>&1 | tr '\n' ';')"
}
gfsd_start() {	# K: node K's gfsd, inside node K
	local g=$DIR/gfarm k=$1
	"$0" exec "$k" gfsd -f "$g/gfsd.conf" -h "$(node_host "$k")" -l "$(node_ip "$k")" \
		-r "$g/spool$k" -P "$g/gfsd$k.pid" -F "$g/log/gfsd$k.log" -L info \
		</dev/null >/dev/null 2>&1 9<&- || die "gfsd of node $k failed to start"
}
gfarm_up() {
	local g=$DIR/gfarm k t arch
	for c in gfmd gfsd gfkey gfhost gfls gfmkdir; do
		command -v $c >/dev/null 2>&1 || die "'$c' not found (the Gfarm packages: tools/install-deps.sh)"
	done
	export GFARM_CONFIG_FILE=$g/gfarm2.conf
	gfarm_conf
	(exec 3<>"/dev/tcp/127.0.0.1/$GFMD_PORT") 2>/dev/null &&
		die "port $GFMD_PORT is in use (GFSPLIT_CLUSTER_PORT)"
	gfkey -f -p 31536000 >/dev/null 2>&1 || die "gfkey failed"
	# no daemon inherits a caller's descriptors beyond stdio
	"$0" exec head gfmd -f "$g/gfmd.conf" -P "$g/gfmd.pid" -F "$g/log/gfmd.log" -L info \
		</dev/null >/dev/null 2>&1 9<&- || die "gfmd failed to start (see $g/log/gfmd.log)"
	for ((t = 0; t < 100; t++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$GFMD_PORT") 2>/dev/null && break
		sleep 0.1
	done
	timeout 20 "$0" exec head gfls / >/dev/null || die "gfmd does not answer (see $g/log/gfmd.log)"
	arch=$(gfarm.arch.guess 2>/dev/null || echo x86_64-unknown-linux)
	for ((k = 1; k <= K; k++)); do
		mkdir -p "$g/spool$k" && chmod 700 "$g/spool$k"
		timeout 20 "$0" exec head gfhost -c -a "$arch" -p "$GFSD_PORT" -n "$(nproc)" \
			"$(node_host "$k")" || die "gfhost -c $(node_host "$k") failed"
		gfsd_start "$k"
	done
	gfsd_wait
}

# ---- Slurm (up --slurm) ----------------------------------------------------------
# munged in the head and on every node, one key; slurmctld in the head
# (in a UTS namespace named NAME-head, the name slurm.conf gives it);
# slurmd on every node under the node's host name, its own spool dir.  A
# node's munged listens on DIR/run/munge.socket.2 in the node's own DIR/run
# (DIR/nodeK/run), so each node's daemons ask their own munged.  Slurm's
# files are DIR/slurm: slurm.conf (SLURM_CONF), state/, spool/NODE/,
# log/ (slurmctld.log, slurmd.NODE.log); burst_buffer.lua beside
# slurm.conf is gfsplit's (packaging/slurm/burst_buffer.lua).
SLURMCTLD_PORT=$((GFMD_PORT + 2))
SLURMD_PORT=$((GFMD_PORT + 3))
slurm_conf() {
	local s=$DIR/slurm k cpus
	mkdir -p "$s/state" "$s/log" "$s/spool" && chmod 700 "$s/state" || die "cannot make $s"
	cpus=$(nproc)
	((cpus >= 8)) || cpus=8
	cat >"$s/slurm.conf" <<EOF
# the emulated cluster $NAME (tests/cluster.sh up --slurm)
ClusterName=$NAME
SlurmctldHost=$HEAD($(head_ip))
SlurmctldPort=$SLURMCTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$DIR/run/munge.socket.2
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool/%n
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/spool/%n/slurmd.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# no cgroups: the nodes see the host's hierarchies read-only
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
SlurmdParameters=config_overrides
ReturnToService=2
# a node whose slurmd is gone is DOWN within 6-12 s
SlurmdTimeout=6
SlurmctldTimeout=10
MessageTimeout=5
KillWait=5
InactiveLimit=0
MinJobAge=3600
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
EOF
	# gfsplit's burst buffer, its helper running the commands of BIN
	# (the tests' build) and its spool in the state dir (every node sees it)
	if [ -r "$TOP/packaging/slurm/burst_buffer.lua" ]; then
		mkdir -p "$s/bb" && chmod 700 "$s/bb" &&
			sed "s|@GFSPLIT_BB@|$s/gfsplit-bb|" "$TOP/packaging/slurm/burst_buffer.lua" \
				>"$s/burst_buffer.lua" &&
			sed "s|@BINDIR@|${BIN:-$TOP/bin}|; s|@SPOOL@|$s/bb|" "$TOP/packaging/slurm/gfsplit-bb" \
				>"$s/gfsplit-bb" && chmod 755 "$s/gfsplit-bb" &&
			printf 'BurstBufferType=burst_buffer/lua\nPrologFlags=Alloc\nProlog=%s\nEpilog=%s\n' \
				"$s/gfsplit-bb" "$s/gfsplit-bb" >>"$s/slurm.conf" &&
			printf 'StageInTimeout=600\nStageOutTimeout=600\nOtherTimeout=600\n' \
				>"$s/burst_buffer.conf" ||
			die "cannot install packaging/slurm/burst_buffer.lua and gfsplit-bb in $s"
	fi
	for ((k = 1; k <= K; k++)); do
		mkdir -p "$s/spool/$(node_host "$k")" || die "cannot make $s/spool"
		echo "NodeName=$(node_host "$k") NodeAddr=$(node_ip "$k") CPUs=$cpus RealMemory=1024 State=UNKNOWN"
	done >>"$s/slurm.conf"
	echo "PartitionName=$NAME Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$s/slurm.conf"
	chmod 644 "$s/slurm.conf"
}
# munged_start K|head: node K's munged (or the head's), on DIR/run
munged_start() {
	local w=$DIR/node$1 ip
	[ "$1" = head ] && w=$DIR/munge ip=$(head_ip) || ip=$(node_ip "$1")
	"$0" exec "$1" munged --key-file="$DIR/munge/munge.key" --socket="$DIR/run/munge.socket.2" \
		--origin="$ip" \
		--pid-file="$w/munged.pid" --log-file="$w/munged.log" --seed-file="$w/munged.seed" \
		</dev/null >/dev/null 2>&1 9<&- || die "munged of $1 failed to start (see $w/munged.log)"
}
slurmd_start() {	# K: node K's munged and slurmd, inside node K
	munged_start "$1"
	SLURM_CONF=$DIR/slurm/slurm.conf "$0" exec "$1" slurmd -N "$(node_host "$1")" \
		</dev/null >/dev/null 2>&1 9<&- ||
		die "slurmd of node $1 failed to start (see $DIR/slurm/log/slurmd.$(node_host "$1").log)"
}
# slurm_wait K..: up to 30 s for the nodes to be idle in slurmctld's eyes
slurm_wait() {
	local t k st
	for ((t = 0; t < 60; t++)); do
		for k in "$@"; do
			st=$(SLURM_CONF=$DIR/slurm/slurm.conf timeout 10 "$0" exec head \
				sinfo -h -N -n "$(node_host "$k")" -o %t 2>/dev/null)
			case $st in idle* | mix* | alloc*) ;; *) sleep 0.5; continue 2 ;; esac
		done
		return 0
	done
	die "slurmd(s) did not register: $(SLURM_CONF=$DIR/slurm/slurm.conf timeout 10 "$0" exec head sinfo -N 2>&1 | tr '\n' ';')"
}
slurm_up() {
	local c k
	for c in munged slurmctld slurmd srun sbatch sinfo scontrol; do
		command -v $c >/dev/null 2>&1 || skip "'$c' not found (Slurm and munge: tools/install-deps.sh)"
	done
	(exec 3<>"/dev/tcp/127.0.0.1/$SLURMCTLD_PORT") 2>/dev/null &&
		die "port $SLURMCTLD_PORT is in use (GFSPLIT_CLUSTER_PORT + 2)"
	mkdir -p "$DIR/munge" && chmod 700 "$DIR/munge" &&
		head -c 1024 /dev/urandom >"$DIR/munge/munge.key" && chmod 400 "$DIR/munge/munge.key" ||
		die "cannot make the munge key $DIR/munge/munge.key"
	slurm_conf
	munged_start head
	# shellcheck disable=SC2016 # expanded by the inner shell
	SLURM_CONF=$DIR/slurm/slurm.conf "$0" exec head unshare --uts -- /bin/sh -c \
		'hostname "$1" && exec slurmctld -i' slurmctld "$HEAD" </dev/null >/dev/null 2>&1 9<&- ||
		die "slurmctld failed to start (see $DIR/slurm/log/slurmctld.log)"
	for ((k = 1; k <= K; k++)); do slurmd_start "$k"; done
	slurm_wait $(seq 1 "$K")
}

up() {
	local rate='' delay='' gfarm=1 slurm='' k
	K=${1:-} DISK=
	case $K in '' | *[!0-9]*) die "usage: cluster.sh up K [--rate RATE] [--delay DELAY] [--disk RATE] [--no-gfarm] [--slurm]" ;; esac
	((K >= 1 && K <= 64)) || die "K must be 1..64"
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--rate) rate=${2:?}; shift ;;
		--delay) delay=${2:?}; shift ;;
		--disk) DISK=${2:?}; shift ;;
		--no-gfarm) gfarm= ;;
		--slurm) slurm=1 ;;
		*) die "up: unknown option '$1'" ;;
		esac
		shift
	done
	can_build
	check_dir
	down	# what a crashed run left
	if ip -4 -o addr show | grep -q " inet $NET\."; then
		die "addresses in $NET.0/24 are in use here (GFSPLIT_CLUSTER_NET)"
	fi
	mkdir -p "$DIR" && chmod 755 "$DIR" || die "cannot make $DIR"
	trap 'down' EXIT
	mkdir -p "$DIR/shared" "$DIR/local" && chmod 1777 "$DIR/shared" || die "cannot make $DIR/shared"
	hosts_file "$K" >"$DIR/hosts"
	ip link add "$BR" type bridge || skip "cannot create a bridge"
	# an address of its own: a bridge left to take its ports' lowest one
	# changes it when a node's veth goes (kill), and the other nodes'
	# ARP entries for the head then point nowhere for half a minute
	ip link set "$BR" address "$(bridge_mac)" &&
		ip addr add "$(head_ip)/24" dev "$BR" && ip link set "$BR" up ||
		die "cannot configure bridge $BR"
	echo "$K" >"$DIR/K"
	build_helpers
	for ((k = 1; k <= K; k++)); do
		make_fs "$k"
		make_net "$k"
		node_start "$k"
	done
	ping_all
	[ -n "$rate$delay" ] && shape "$rate" "$delay"
	[ -n "$DISK" ] && [ -z "$gfarm" ] && die "--disk is a gfsd's: not with --no-gfarm"
	[ -n "$gfarm" ] && gfarm_up
	[ -n "$DISK" ] && disk "$DISK"
	[ -n "$slurm" ] && slurm_up
	trap - EXIT
	say "up: $K nodes $(node_host 1)..$(node_host "$K") on $NET.0/24 (bridge $BR), state $DIR${gfarm:+, Gfarm on port $GFMD_PORT}${slurm:+, Slurm on port $SLURMCTLD_PORT}"
}

# ---- run --------------------------------------------------------------------------
# run_args [-n N] [-ppn P] [-nodes K] [LAUNCHER-OPTS..] CMD..: sets
# RUN_N (N ranks, default P on each of the K nodes), RUN_HOSTS
# ("host:P,..." of the first K nodes that are up: all by default, 1 per
# node), RUN_OPTS (the launcher's own options, passed on) and RUN_CMD
run_args() {
	local ppn=1 k i
	k=$(nodes)
	((k > 0)) || die "cluster $NAME is not up"
	RUN_N='' RUN_HOSTS='' RUN_OPTS=()
	while [ $# -gt 0 ]; do
		case $1 in
		-n | -np) RUN_N=$2; shift 2 ;;
		-ppn) ppn=$2; shift 2 ;;
		-nodes) k=$2; shift 2 ;;
		--) shift; break ;;
		-genv | -env) RUN_OPTS+=("$1" "$2" "$3"); shift 3 ;;
		-*) RUN_OPTS+=("$1" "$2"); shift 2 ;;
		*) break ;;
		esac
	done
	[ $# -gt 0 ] || die "run: no command"
	RUN_CMD=("$@")
	for ((i = 1; i <= k; i++)); do
		node_alive "$i" && RUN_HOSTS="$RUN_HOSTS${RUN_HOSTS:+,}$(node_host "$i"):$ppn"
	done
	[ -n "$RUN_HOSTS" ] || die "run: no node is up"
	: "${RUN_N:=$((k * ppn))}"
}

# run [-n N] [-ppn P] [-nodes K] [MPIEXEC-OPTS..] CMD..: N ranks, P per
# node, on the first K nodes (default: all nodes, 1 per node), by MPICH's
# hydra
run() {
	run_args "$@"
	# the launcher enters each node (tests/cluster-exec); the proxies reach
	# mpiexec over the bridge; nothing is forked on the head
	HYDRA_LAUNCHER_AUTOFORK=0 GFSPLIT_CLUSTER=$NAME GFSPLIT_CLUSTER_DIR=$DIR \
		GFSPLIT_CLUSTER_NET=$NET GFSPLIT_CLUSTER_PORT=$GFMD_PORT \
		exec_head mpiexec -launcher rsh -launcher-exec "$TOP/tests/cluster-exec" \
		-iface "$BR" -hosts "$RUN_HOSTS" -n "$RUN_N" "${RUN_OPTS[@]}" "${RUN_CMD[@]}"
}

# orun [-n N] [-ppn P] [-nodes K] [MPIRUN-OPTS..] CMD..: the same by Open
# MPI's mpirun: its rsh agent enters each node (tests/cluster-exec) to
# start its daemon there; daemons and ranks talk over the bridge's
# network only (the two _if_include parameters, as a site names its
# cluster network); nothing is forked on the head.  Open MPI hands
# environment variables on with -x NAME[=VALUE]
orun() {
	run_args "$@"
	GFSPLIT_CLUSTER=$NAME GFSPLIT_CLUSTER_DIR=$DIR \
		GFSPLIT_CLUSTER_NET=$NET GFSPLIT_CLUSTER_PORT=$GFMD_PORT \
		exec_head mpirun.openmpi --mca plm_rsh_agent "$TOP/tests/cluster-exec" \
		--mca oob_tcp_if_include "$NET.0/24" --mca btl_tcp_if_include "$NET.0/24" \
		--host "$RUN_HOSTS" -n "$RUN_N" "${RUN_OPTS[@]}" "${RUN_CMD[@]}"
}

# sent K..: the bytes nodes K.. sent over their links, summed (what the
# host side of each veth received)
sent() {
	local k sum=0
	for k in "$@"; do
		k=$(node_num "$k")
		sum=$((sum + $(cat "/sys/class/net/$(veth "$k")/statistics/rx_bytes")))
	done
	echo "$sum"
}

env_lines() {
	echo "export GFSPLIT_CLUSTER=$NAME GFSPLIT_CLUSTER_DIR=$DIR GFSPLIT_CLUSTER_NET=$NET GFSPLIT_CLUSTER_PORT=$GFMD_PORT"
	[ -r "$DIR/gfarm/gfarm2.conf" ] && echo "export GFARM_CONFIG_FILE=$DIR/gfarm/gfarm2.conf"
	[ -r "$DIR/slurm/slurm.conf" ] && echo "export SLURM_CONF=$DIR/slurm/slurm.conf"
	echo "CLUSTER_K=$(nodes) CLUSTER_SHARED=$DIR/shared CLUSTER_LOCAL=$DIR/local"
}

# kill K: node K fails: every process in it killed (its ranks, its gfsd),
# its link and namespace gone, its memory (/dev/shm) lost; its disk (/tmp,
# the local dir, the gfsd spool) stays for `revive`
kill_node() {
	local k
	k=$(node_num "$1")
	node_gone "$k"
	rm -f "$DIR/gfarm/gfsd$k.pid"
	touch "$DIR/node$k/down"
	say "node $k ($(node_host "$k")) killed"
}
# revive K: node K boots again (empty /dev/shm, its disk as it was, its gfsd)
revive_node() {
	local k rate delay
	k=$(node_num "$1")
	[ -e "$DIR/node$k/down" ] || die "node $k is not down"
	K=$(nodes)
	node_gone "$k"		# what a failed revive left
	# a boot empties /tmp; the local dir and the gfsd spool are disk
	find "$DIR/node$k/tmp" -mindepth 1 -delete 2>/dev/null
	make_fs "$k"
	make_net "$k"
	node_start "$k"
	rm -f "$DIR/node$k/down"
	[ -r "$DIR/shape" ] && read -r rate delay <"$DIR/shape" &&
		shape_node "$k" "${rate#-}" "${delay#-}"
	[ -r "$DIR/disk" ] && read -r rate <"$DIR/disk" && disk_node "$k" "${rate#-}"
	if [ -d "$DIR/gfarm" ]; then
		export GFARM_CONFIG_FILE=$DIR/gfarm/gfarm2.conf
		gfsd_start "$k"
		gfsd_wait
	fi
	if [ -r "$DIR/slurm/slurm.conf" ]; then
		slurmd_start "$k"
		slurm_wait "$k"
	fi
	say "node $k ($(node_host "$k")) up again"
}

# freeze K: node K hangs: every process on it stopped, its link down
freeze_node() {
	local k pids
	k=$(node_num "$1")
	node_alive "$k" || die "node $k is down"
	ip link set "$(veth "$k")" down || die "cannot take node $k's link down"
	pids=$(ip netns pids "$(node_ns "$k")" | tr '\n' ' ')
	# shellcheck disable=SC2086 # a list of pids
	[ -z "${pids// /}" ] || kill -STOP $pids
	touch "$DIR/node$k/frozen"
	say "node $k ($(node_host "$k")) frozen"
}
# thaw K: node K goes on where it stopped
thaw_node() {
	local k j t pids
	k=$(node_num "$1")
	[ -e "$DIR/node$k/frozen" ] || die "node $k is not frozen"
	pids=$(ip netns pids "$(node_ns "$k")" | tr '\n' ' ')
	# shellcheck disable=SC2086
	[ -z "${pids// /}" ] || kill -CONT $pids
	ip link set "$(veth "$k")" up || die "cannot bring node $k's link up"
	rm -f "$DIR/node$k/frozen"
	# what the others learnt while it was gone (neighbour entries FAILED:
	# "unreachable" for a while) is forgotten, and it is heard again
	ip neigh flush to "$(node_ip "$k")" 2>/dev/null
	for ((j = 1; j <= $(nodes); j++)); do
		node_alive "$j" && ip netns exec "$(node_ns "$j")" ip neigh flush all 2>/dev/null
	done
	for ((t = 0; t < 25; t++)); do
		ip netns exec "$(node_ns "$k")" ping -c 1 -W 1 "$(head_ip)" >/dev/null 2>&1 && break
		sleep 0.2
	done
	say "node $k ($(node_host "$k")) thawed"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
up) up "$@" ;;
down) down ;;
run) run "$@" ;;
orun) orun "$@" ;;
exec)
	[ $# -ge 2 ] || die "usage: cluster.sh exec NODE|head CMD.."
	if [ "$1" = head ] || [ "$1" = "$HEAD" ]; then shift; exec_head "$@"; fi
	k=$(node_num "$1")
	shift
	exec_node "$k" "$@" ;;
env) env_lines ;;
sent) sent "${@:?usage: cluster.sh sent NODE..}" ;;
shape) shape "${1:?usage: cluster.sh shape RATE [DELAY]}" "${2:-}" ;;
unshape) shape "" "" ;;
disk) disk "${1:?usage: cluster.sh disk RATE|off}" ;;
kill) kill_node "${1:?usage: cluster.sh kill NODE}" ;;
revive) revive_node "${1:?usage: cluster.sh revive NODE}" ;;
freeze) freeze_node "${1:?usage: cluster.sh freeze NODE}" ;;
thaw) thaw_node "${1:?usage: cluster.sh thaw NODE}" ;;
-h | --help | help | "")
	sed -n '2,/^# shellcheck/p' "$0" | sed '$d; s/^# \{0,1\}//'
	[ -n "$cmd" ] ;;
*) die "unknown command '$cmd' (up, run, orun, exec, env, sent, shape, unshape, disk, kill, revive, freeze, thaw, down)" ;;
esac

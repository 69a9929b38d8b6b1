# bench/lib.sh - helpers of the benchmark scripts (sourced, bash), above all
# the emulated Gfarm cluster that gfarm_scale.sh, mpiio.sh and cache.sh
# build, and the timed, recorded run of mpiio.sh and cache.sh (at the end).
#
# On one machine every gfsd shares one disk, so the cluster gives each of
# K gfsd "nodes" its own network namespace behind a veth link whose rate
# tc limits in both directions, like a node's local disk in the seed paper:
#
#   root namespace: gfmd (all addresses, port GFMD_PORT), MPI ranks
#     PFXKr  NET.(4K+1)/30 --[tbf RATE each way]-- NET.(4K+2)/30  PFXKn
#                                              PFX-nodeK: gfsd -l NET.(4K+2)
#
# NET is a /24 of the benchmarking range 198.18.0.0/15 (RFC 2544), three
# octets (198.19.31); a node's link is a /30 of it, so K <= 63.  Nothing
# else is accepted: never a private or a public range.
#
# The caller sets, before cluster_up:
#   K, RATE, NET, GFMD_PORT    the cluster
#   TOP                        the source tree (for tests/cluster.sh's address rule)
#   CB                         its state dir (wiped by cluster_teardown)
#   CPFX                       name prefix of namespaces and veths, so that
#                              two scripts' clusters never meet
#   CTAG                       message prefix ("gfarm_scale")
#   CERR                       (optional) a file whose tail cluster_die shows
# and defines cluster_skip MSG: what to do when the machine cannot build
# the cluster at all (no namespaces, veths or tc).  cluster_up sets HOSTS
# (the node addresses, comma-separated) and GFARM_CONFIG_FILE.
# shellcheck shell=bash disable=SC2015 # a && b || die

GFSD_PORT=20600
CHILD=			# the running timed command, stopped at teardown

# bench_start NAME ARGS..: what mpiio.sh and cache.sh do first: sbin on
# PATH, mpiexec launching locally, no gfsplit selection, fault or preload
# inherited from the caller (plain must be plain), MODES from ARGS
# (posix, gfarm; default posix; anything else: usage, exit 2), say and
# skip that name the bench, CTAG, and cluster_skip failing the run
bench_start() {
	BENCH_NAME=$1
	shift
	PATH="$PATH:/usr/sbin:/sbin"
	export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}
	unset GFSPLIT_SPLIT_FILES GFSPLIT_GFARM_HOSTS GFSPLIT_VERBOSE GFSPLIT_FAULT
	case ${LD_PRELOAD:-} in *gfsplit*) unset LD_PRELOAD ;; esac
	MODES=${*:-posix}
	for _m in $MODES; do
		case $_m in posix | gfarm) ;; *)
			echo "usage: bench/$BENCH_NAME.sh [posix] [gfarm]" >&2; exit 2 ;;
		esac
	done
	CTAG="$BENCH_NAME: gfarm"
	say() { echo "$BENCH_NAME: $*"; }
	skip() { echo "SKIP: $BENCH_NAME: $*"; }
	cluster_skip() { cluster_die "$@"; }
}

alive() {	# exists and is not a zombie
	local st
	[ -n "${1:-}" ] && st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) &&
		[ "$st" != Z ]
}
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
size_bytes() {	# 4M, 4MiB, 4Ki, 4096 -> bytes
	local s=${1%[iI][bB]} m=1
	s=${s%[bB]}
	s=${s%[iI]}
	case $s in
	*[kK]) m=1024 ;; *[mM]) m=$((1 << 20)) ;; *[gG]) m=$((1 << 30)) ;;
	esac
	s=${s%[kKmMgG]}
	echo $((s * m))
}
node_ns() { echo "$CPFX-node$1"; }
root_ip() { echo "$NET.$((4 * $1 + 1))"; }
node_ip() { echo "$NET.$((4 * $1 + 2))"; }

# ---- teardown: by pid/session, by name we created, always ---------------
stop_session() {	# $1 pid file, $2 expected comm
	local pid p t
	pid=$(cat "$1" 2>/dev/null) || return 0
	rm -f "$1"
	[ -n "$pid" ] || return 0
	members() { ps -eo pid=,sid= | awk -v s="$pid" '$2 == s {print $1}'; }
	for p in $(members); do
		alive "$p" || continue
		# pid-reuse guard: a session that is not the daemon is not ours
		[ "$(cat /proc/"$p"/comm 2>/dev/null)" = "$2" ] || return 0
	done
	alive "$pid" && kill -TERM "$pid" 2>/dev/null
	for ((t = 0; t < 50; t++)); do alive "$pid" || break; sleep 0.1; done
	alive "$pid" && kill -KILL "$pid" 2>/dev/null
	for ((t = 0; t < 20; t++)); do
		[ -z "$(for p in $(members); do alive "$p" && echo "$p"; done)" ] && break
		sleep 0.1
	done
	for p in $(members); do alive "$p" && kill -KILL "$p" 2>/dev/null; done
	return 0
}
stop_child() {
	local t
	[ -n "$CHILD" ] && alive "$CHILD" || return 0
	kill -TERM "$CHILD" 2>/dev/null	# timeout passes it on
	for ((t = 0; t < 50; t++)); do alive "$CHILD" || break; sleep 0.1; done
	if alive "$CHILD"; then
		# shellcheck disable=SC2046 # a list of pids
		kill -KILL $(ps -o pid= --ppid "$CHILD") 2>/dev/null
		kill -KILL "$CHILD" 2>/dev/null
	fi
}
cluster_teardown() {
	local k pf ns
	stop_child
	if [ -d "$CB/run" ]; then
		for pf in "$CB"/run/gfsd*.pid; do
			[ -e "$pf" ] && stop_session "$pf" gfsd
		done
		[ -e "$CB/run/gfmd.pid" ] && stop_session "$CB/run/gfmd.pid" gfmd
	fi
	# gfsd's hard-coded local socket dirs (a clean exit removes them)
	rm -rf /tmp/.gfarm-gfsd"$NET".*-"$GFSD_PORT"
	for ns in $(ip netns list 2>/dev/null | awk -v p="$CPFX-node" \
	    'index($1, p) == 1 && substr($1, length(p) + 1) ~ /^[0-9]+$/ {print $1}'); do
		k=${ns#"$CPFX"-node}
		ip link del "$CPFX${k}r" 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	for k in $(ip -o link show 2>/dev/null | awk -F': ' -v p="$CPFX" \
	    'index($2, p) == 1 { n = substr($2, length(p) + 1); sub(/@.*/, "", n)
	     if (n ~ /^[0-9]+r$/) print p n }'); do
		ip link del "$k" 2>/dev/null
	done
	rm -rf "$CB"
}
cluster_die() {
	local f
	echo "$CTAG: ERROR: $*" >&2
	for f in "$CB"/log/*.log ${CERR:-}; do
		[ -s "$f" ] && { echo "--- tail $f" >&2; tail -n 12 "$f" >&2; }
	done
	exit 1
}
# The cluster can be built here (root, ip netns, tc, the Gfarm daemons and
# tools, and the commands CMD... the caller needs); else says why and fails.
cluster_check() {	# CMD...
	local c
	[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces and tc)"; return 1; }
	for c in ip tc gfmd gfsd gfkey gfhost gfls gfrm gfmkdir flock setsid "$@"; do
		command -v "$c" >/dev/null 2>&1 || { echo "'$c' not found"; return 1; }
	done
	ip netns list >/dev/null 2>&1 || { echo "'ip netns' does not work here"; return 1; }
}
# The address range and gfmd port are free; else says why and fails.
cluster_free() {
	local why
	# the rule of tests/cluster.sh: a /24 of the benchmarking range
	why=$(GFSPLIT_CLUSTER_NET=$NET "$TOP/tests/cluster.sh" env 2>&1 >/dev/null) ||
		{ echo "${why#cluster: ERROR: }"; return 1; }
	((K <= 63)) || { echo "at most 63 nodes in a /24"; return 1; }
	if ip -4 -o addr show | grep -q " inet $NET\."; then
		echo "addresses in $NET.0/24 are in use here"
		return 1
	fi
	if port_open 127.0.0.1 "$GFMD_PORT"; then
		echo "port $GFMD_PORT is in use"
		return 1
	fi
}

# ---- the network: one namespace and veth pair per node -------------------
# tbf needs a bucket of at least one (GSO) packet; 256 KiB is 20 ms at
# 100 Mbit/s, nothing against runs of seconds
shape() {	# $1 device, [netns]
	local ex=()
	[ -n "${2:-}" ] && ex=(ip netns exec "$2")
	"${ex[@]}" tc qdisc replace dev "$1" root tbf rate "$RATE" burst 256kb latency 100ms
}
unshape() {
	local ex=()
	[ -n "${2:-}" ] && ex=(ip netns exec "$2")
	"${ex[@]}" tc qdisc del dev "$1" root 2>/dev/null
	return 0
}
cluster_net() {
	local k ns
	HOSTS=
	for ((k = 1; k <= K; k++)); do
		ns=$(node_ns $k)
		ip netns add "$ns" || cluster_skip "cannot create network namespace $ns"
		ip link add "$CPFX${k}r" type veth peer name "$CPFX${k}n" ||
			cluster_skip "cannot create a veth pair"
		ip link set "$CPFX${k}n" netns "$ns" &&
			ip addr add "$(root_ip $k)/30" dev "$CPFX${k}r" &&
			ip link set "$CPFX${k}r" up &&
			ip netns exec "$ns" ip addr add "$(node_ip $k)/30" dev "$CPFX${k}n" &&
			ip netns exec "$ns" ip link set "$CPFX${k}n" up &&
			ip netns exec "$ns" ip link set lo up ||
			cluster_die "cannot configure the link of node $k"
		shape "$CPFX${k}r" && shape "$CPFX${k}n" "$ns" ||
			cluster_skip "tc tbf does not work here (sch_tbf)"
		HOSTS="$HOSTS${HOSTS:+,}$(node_ip $k)"
	done
}
# Rate limits on again (cluster_net shapes every link when it makes it).
cluster_shape() {
	local k
	for ((k = 1; k <= K; k++)); do
		shape "$CPFX${k}r" && shape "$CPFX${k}n" "$(node_ns $k)" || return 1
	done
}
# Rate limits off: the plain Gfarm underneath.
cluster_unshape() {
	local k
	for ((k = 1; k <= K; k++)); do
		unshape "$CPFX${k}r"
		unshape "$CPFX${k}n" "$(node_ns $k)"
	done
}

# ---- Gfarm: gfmd in the root namespace, gfsd k inside PFX-nodek ----------
# No sockopt tcp_nodelay here (tests/gfarm/start.sh sets it: without it a
# small request after a bulk transfer can wait 40 ms for a delayed ACK): the
# figures of gfarm_scale, mpiio, cache and stage in bench/README.md were
# measured without it, and stay comparable until they are measured again.
cluster_conf() {
	local k ME=root common
	common="auth enable sharedsecret *
shared_key_file $CB/etc/shared_key
sockopt keepalive
minimum_free_disk_space 64M
schedule_busy_load_thresh 50"
	# clients (the ranks, the gf* tools) reach gfmd on loopback; fail fast
	# instead of retrying for 30 s when a daemon is down
	cat >"$CB/etc/gfarm2.conf" <<EOF
metadb_server_host 127.0.0.1
metadb_server_port $GFMD_PORT
$common
gfmd_reconnection_timeout 5
no_file_system_node_timeout 5
EOF
	printf '_gfarmfs %s\n_gfarmmd %s\n' "$ME" "$ME" >"$CB/etc/usermap"
	# no postgresql_* / ldap_*: metadata backend "none", in gfmd's memory
	cat >"$CB/etc/gfmd.conf" <<EOF
metadb_server_host 127.0.0.1
metadb_server_port $GFMD_PORT
admin_user $ME
$common
local_user_map $CB/etc/usermap
metadb_replication disable
metadb_journal_dir $CB/journal
EOF
	for ((k = 1; k <= K; k++)); do
		# node k reaches gfmd over its own link
		cat >"$CB/etc/gfsd$k.conf" <<EOF
metadb_server_host $(root_ip $k)
metadb_server_port $GFMD_PORT
$common
local_user_map $CB/etc/usermap
spool_check_level disable
EOF
		mkdir -p "$CB/spool$k"
	done
	chmod 700 "$CB"/spool* && chmod 600 "$CB"/etc/*.conf
}
nodes_up() {	# every node authenticated and reporting a load average
	local up k
	up=$(timeout 15 gfhost -l 2>/dev/null |
	    awk '$1 ~ /^[0-9.]+\/[0-9.]+\/[0-9.]+$/ && $2 ~ /^[sgG]$/ {print $5}') || return 1
	for ((k = 1; k <= K; k++)); do
		grep -Fqx "$(node_ip $k)" <<<"$up" || return 1
	done
}
cluster_daemons() {
	local k ip t arch ncpu
	export GFARM_CONFIG_FILE="$CB/etc/gfarm2.conf"
	gfkey -f -p 31536000 >/dev/null 2>&1 || cluster_die "gfkey failed"
	# no daemon may inherit a caller's lock on fd 9 (9<&-)
	gfmd -f "$CB/etc/gfmd.conf" -P "$CB/run/gfmd.pid" -F "$CB/log/gfmd.log" -L info 9<&- ||
		cluster_die "gfmd failed to start"
	for ((t = 0; t < 100; t++)); do port_open 127.0.0.1 "$GFMD_PORT" && break; sleep 0.1; done
	port_open 127.0.0.1 "$GFMD_PORT" || cluster_die "gfmd is not listening on $GFMD_PORT"
	timeout 20 gfls / >/dev/null || cluster_die "gfmd does not answer"
	arch=$(gfarm.arch.guess 2>/dev/null || echo x86_64-unknown-linux)
	ncpu=$(nproc 2>/dev/null || echo 1)
	for ((k = 1; k <= K; k++)); do
		ip=$(node_ip $k)
		timeout 20 gfhost -c -a "$arch" -p "$GFSD_PORT" -n "$ncpu" "$ip" ||
			cluster_die "gfhost -c $ip failed"
		ip netns exec "$(node_ns $k)" gfsd -f "$CB/etc/gfsd$k.conf" -h "$ip" -l "$ip" \
			-r "$CB/spool$k" -P "$CB/run/gfsd$k.pid" -F "$CB/log/gfsd$k.log" -L info 9<&- ||
			cluster_die "gfsd $k failed to start"
	done
	for ((t = 0; t < 150; t++)); do nodes_up && break; sleep 0.2; done
	nodes_up || cluster_die "gfsd(s) did not come up: $(timeout 10 gfhost -l 2>&1 | tr '\n' ';')"
	timeout 20 gfmkdir /bench || cluster_die "gfmkdir /bench failed"
}
cluster_up() {
	mkdir -p "$CB/etc" "$CB/run" "$CB/log" "$CB/journal" "$CB/tmp"
	cluster_net
	cluster_conf
	cluster_daemons
}

# ---- between and after runs -----------------------------------------------
# gfrm -rf of the bench's outputs between runs (untimed)
gclean() { timeout 60 gfrm -rf "$@" >/dev/null 2>&1; return 0; }
# where_parts OUT PATH N FIELDS: placement of split file PATH (written by N
# ranks) as gfmd tells, appended to OUT as one JSON record: FIELDS (a JSON
# object) plus "path", "ranks" and "parts" {"part.R": host}
where_parts() {
	timeout 30 gfwhere -r "$2" 2>/dev/null | awk '
		/:$/ { sub(/:$/, ""); f = $0; next }
		NF && f != "" { print f, $1; f = "" }' >"$CB/where.txt"
	python3 - "$2" "$CB/where.txt" "$3" "$4" >>"$1" <<'EOF'
import json, sys
rows = [l.split() for l in open(sys.argv[2]) if l.strip()]
rec = json.loads(sys.argv[4])
rec.update(path=sys.argv[1], ranks=int(sys.argv[3]), parts={p: h for p, h in rows})
print(json.dumps(rec))
EOF
}

# ---- running and recording (mpiio.sh, cache.sh) ----------------------------
# The caller sets WORK (a scratch dir), LIMIT (seconds one run may take) and
# FAILED (failed runs so far), and defines say MSG.  RUN_POST, if set, names
# a function called after every run: what it prints (a JSON fragment
# starting with a comma, or nothing) joins the run's record.
#
# run_timed REC PART VARIANT N REP EXTRA CMD...: bounded, after a sync; the
# last JSON line of stdout and the wall time become one record in REC.
# EXTRA is a JSON fragment (",\"regions\":4096" or "").  A failure is
# recorded with its stderr, and the bench goes on.
run_timed() {
	local rec=$1 part=$2 var=$3 n=$4 rep=$5 extra=$6 t0 t1 rc js err=null load rq post=
	shift 6
	sync
	# other work on the machine: none of ours runs now, so processes
	# runnable besides this reader belong to someone else
	read -r load _ _ rq _ </proc/loadavg
	rq=$((${rq%/*} - 1))
	t0=$(date +%s.%N)
	timeout -k 5 "$LIMIT" "$@" >"$WORK/cmd.out" 2>"$WORK/cmd.err" 9<&- &
	CHILD=$!
	wait "$CHILD"
	rc=$?
	CHILD=
	t1=$(date +%s.%N)
	js=$(grep '^{' "$WORK/cmd.out" | tail -n 1)
	if ((rc != 0)); then
		FAILED=$((FAILED + 1))
		echo >&2
		say "FAILED ($var, N=$n, rep $rep, exit $rc): $*" >&2
		tail -n 8 "$WORK/cmd.err" | sed 's/^/    /' >&2
		err=$(tail -n 8 "$WORK/cmd.err" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')
	fi
	[ -n "${RUN_POST:-}" ] && post=$("$RUN_POST")
	printf '{"part":"%s","variant":"%s","ranks":%d,"rep":%d,"rc":%d,"wall":%s,"load1":%s,"others_runnable":%d,"err":%s%s%s,"out":%s}\n' \
		"$part" "$var" "$n" "$rep" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" \
		"${load:-null}" "$rq" "$err" "$extra" "$post" "${js:-null}" >>"$rec"
	return $rc
}
# the contenders of one step in the order of repetition REP: rotated by one
# each time, so that none always runs right after the same other
order() {	# REP NAME...
	local rep=$1 i
	shift
	for ((i = 0; i < $#; i++)); do
		echo "${@:$(((rep - 1 + i) % $# + 1)):1}"
	done
}

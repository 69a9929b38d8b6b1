# bench/lib.sh - helpers of the benchmark scripts (sourced, bash): the
# emulated cluster that gfarm_scale.sh, mpiio.sh, cache.sh and stage.sh run
# their Gfarm modes on (tests/cluster.sh, the tests' own: nodes with their
# own network, host name, /dev/shm and /tmp, a gfsd each, the ranks on the
# nodes; links shaped with tc, and each gfsd's rate limited as a node's own
# disk would be), and the timed, recorded run of mpiio.sh and cache.sh (at
# the end).
# shellcheck shell=bash disable=SC2015 # a && b || die

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
# ---- the timed command, stopped at teardown -------------------------------
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
# ---- the emulated cluster: tests/cluster.sh, the one the tests use ----------
# The caller sets, before cluster_up:
#   TOP                 the source tree
#   CNAME               the cluster's name (GFSPLIT_CLUSTER: a-z0-9, <= 8),
#                       so that two scripts' clusters never meet
#   NET, GFMD_PORT      its /24 of 198.18.0.0/15 and gfmd's port
#   K                   compute nodes; (optional) RATE, each node link's rate
#                       each way, DISK, each node's gfsd's rate (reads
#                       and writes together: a node's own disk), and SLURM
#                       (non-empty: Slurm too, up --slurm)
#   CTAG                message prefix ("gfarm_scale")
#   CERR                (optional) a file whose tail cluster_die shows
# and defines cluster_skip MSG: what to do when the machine cannot build
# the cluster at all (not root, no namespaces, veths or tc).  cluster_up
# sets HOSTS (the node host names, comma-separated), SHARED (a directory
# every node sees at the same path: the bench's files go there) and
# GFARM_CONFIG_FILE, and makes gfarm:///bench.  Ranks run on the nodes
# (crun), Gfarm's tools in the head (chead) or on a node (cnode).
CL=$TOP/tests/cluster.sh
cluster_env() {
	export GFSPLIT_CLUSTER=$CNAME GFSPLIT_CLUSTER_NET=$NET GFSPLIT_CLUSTER_PORT=$GFMD_PORT
	unset GFSPLIT_CLUSTER_DIR
}
node_host() { echo "$CNAME-n$1"; }
chead() { "$CL" exec head "$@"; }
cnode() { "$CL" exec "$@"; }		# NODE CMD..
# crun [-n N] [-ppn P] [-nodes K] [-genv NAME VALUE].. CMD..: an MPI job on
# the nodes (tests/cluster.sh run), whatever launcher the caller set;
# CRUN: the same as a command (for timeout, or an array of launchers)
CRUN=(env -u HYDRA_LAUNCHER -u HYDRA_LAUNCHER_EXEC "$CL" run)
crun() { "${CRUN[@]}" "$@"; }
# prog CMD..: PROG=(CMD..) as timeout can run it: timeout runs programs,
# so a function of this file (crun, chead, cnode) runs in a bash sourcing it
prog() {
	PROG=("$@")
	[ "$(type -t "$1")" != function ] ||
		PROG=(bash -c 'TOP=$0 && . "$TOP/bench/lib.sh" && "$@"' "$TOP" "$@")
}
cluster_die() {
	local f
	echo "$CTAG: ERROR: $*" >&2
	for f in ${CERR:-}; do
		[ -s "$f" ] && { echo "--- tail $f" >&2; tail -n 12 "$f" >&2; }
	done
	exit 1
}
# The commands CMD.. the caller needs besides the cluster's; else says why
# and fails (tests/cluster.sh up checks root, namespaces and addresses).
cluster_check() {	# CMD...
	local c
	for c in ip tc gfmd gfsd gfhost gfls gfrm gfmkdir "$@"; do
		command -v "$c" >/dev/null 2>&1 || { echo "'$c' not found"; return 1; }
	done
}
cluster_up() {
	local opts=() err rc k
	cluster_env
	[ -n "${RATE:-}" ] && opts+=(--rate "$RATE")
	[ -n "${DISK:-}" ] && opts+=(--disk "$DISK")
	[ -n "${SLURM:-}" ] && opts+=(--slurm)
	err=$(CLUSTER_QUIET=1 "$CL" up "$K" "${opts[@]}" 2>&1 >/dev/null)
	rc=$?
	case $rc in
	0) ;;
	77) cluster_skip "${err#SKIP: cluster: }" ;;
	*) cluster_die "tests/cluster.sh up $K ${opts[*]}: ${err#cluster: ERROR: }" ;;
	esac
	eval "$("$CL" env)"
	# shellcheck disable=SC2034 # the caller's
	SHARED=$CLUSTER_SHARED
	HOSTS=
	for ((k = 1; k <= K; k++)); do HOSTS="$HOSTS${HOSTS:+,}$(node_host "$k")"; done
	timeout 20 "$CL" exec head gfmkdir /bench || cluster_die "gfmkdir /bench failed"
}
cluster_teardown() {
	stop_child
	[ -n "${CNAME:-}" ] || return 0
	cluster_env
	"$CL" down
}
# Rate limits off (the plain Gfarm underneath, e.g. to upload data) and on.
cluster_unshape() {
	"$CL" unshape || return 1
	[ -z "${DISK:-}" ] || "$CL" disk off
}
cluster_shape() {
	[ -z "${RATE:-}" ] || "$CL" shape "$RATE" || return 1
	[ -z "${DISK:-}" ] || "$CL" disk "$DISK"
}

# ---- between and after runs -----------------------------------------------
# gfrm -rf of the bench's outputs between runs (untimed)
gclean() { timeout 60 "$CL" exec head gfrm -rf "$@" >/dev/null 2>&1; return 0; }
# where_parts OUT PATH N FIELDS: placement of split file PATH (written by N
# ranks) as gfmd tells, appended to OUT as one JSON record: FIELDS (a JSON
# object) plus "path", "ranks" and "parts" {"part.R": host}
where_parts() {
	timeout 30 "$CL" exec head gfwhere -r "$2" 2>/dev/null | awk '
		/:$/ { sub(/:$/, ""); f = $0; next }
		NF && f != "" { print f, $1; f = "" }' >"$WORK/where.txt"
	python3 - "$2" "$WORK/where.txt" "$3" "$4" >>"$1" <<'PY'
import json, sys
rows = [l.split() for l in open(sys.argv[2]) if l.strip()]
rec = json.loads(sys.argv[4])
rec.update(path=sys.argv[1], ranks=int(sys.argv[3]), parts={p: h for p, h in rows})
print(json.dumps(rec))
PY
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
	prog "$@"
	t0=$(date +%s.%N)
	timeout -k 5 "$LIMIT" "${PROG[@]}" >"$WORK/cmd.out" 2>"$WORK/cmd.err" 9<&- &
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

#!/bin/bash
# bench/cache.sh - the cooperative cache (libcore/cache/cache.c) against
# plain pread by every rank: the same program (bench/cache_bench), the same
# reads, the same run, with and without --plain; the cooperative cache paper's (Anco)
# figures 1-4.
#
#   bash bench/cache.sh [posix] [gfarm]        (default: posix)
#
# Every experiment runs `mpiexec -n N cache_bench PATTERN FILE [--groups G]
# [--cache C] ...` (cache) and `... --plain` (pread, no cache), N = 2, 4, 8
# (more ranks than the 2 cores here: oversubscribed; on Gfarm the ranks
# are on the cluster's nodes):
#   seq      figure 2: every rank reads the whole SEQ_FILE in order, in
#            SEQ_READ pieces (concentrated access), G = 1 and 4 (capped at
#            N).  Target: storage bytes read / file size <= G and no block
#            read from storage more than G times (max_storage_reads_per_block)
#   random   figure 3: every rank reads RANDOM_READS pieces of 1 MiB at
#            random 1 MiB-aligned offsets (as IOR's) of a file of FACTOR x
#            the total cache (RANDOM_CACHE per rank x N): 0.5 (below the
#            total cache) and 2 (above)
#   strided  figure 4: IOR's strided read of STRIDED_FILE, rank r reading
#            pieces r, r+N, ... of 16K, 256K and 4M, G = 1 and 4
#   ratio    figure 1: the singlet ratio swept (0.0 .. 0.9) on the random
#            pattern at N = RATIO_RANKS, the file (RATIO_FACTOR x the total
#            cache) above one rank's cache and below the total
#   warm     cache-warm first (untimed, its own record), then seq through
#            a cache that publishes the warmed local tier (--local-dir),
#            against the cold cache and plain, N = WARM_RANKS, G = 1:
#            the warmed job reads nothing from shared storage
# The files (random bytes) are made once, before the repetitions (untimed).
# The first repetition runs every cache contender with --verify: the bytes
# it read are checked against plain preads of the same pieces (untimed).
# posix: files in a temporary directory under $TMPDIR or /tmp.  On one
# machine the page cache is shared, so after the first rank's read every
# other rank's pread is a memory copy: plain is the strongest baseline
# there is, and every cache block copied from a peer pays the one-sided
# transport (named in the output) between oversubscribed ranks.
# gfarm (root): the same experiments on gfarm:// files, on the emulated
# cluster of tests/cluster.sh (through bench/lib.sh, under its own names,
# torn down at exit, interrupt included): the ranks on NODES compute nodes
# of their own (tests/cluster.sh run: N <= NODES ranks on N nodes x 1,
# more on NODES nodes x ceil(N / NODES): 2 -> 2x1, 4 -> 4x1, 8 -> 4x2),
# every file on the gfsd of storage node NODES + 1 (gfreg -h there, with
# the limits lifted while the files are made), that gfsd limited to DISK
# for its reads and writes together (the storage's own bandwidth; every
# link RATE each way): the shared storage is the bottleneck that the cache
# is for.  Besides the cache's counters, every run records the bytes the
# storage node sent on its link (storage_link_bytes; its files' bytes plus
# Gfarm's protocol).  The warm step's tier is each compute node's own
# node-local directory ($CLUSTER_LOCAL/cache-tier, made 0700 by the root
# ranks); the ranks' rusage and the work files are in the cluster's
# shared directory, which every node sees.
#
# Every repetition runs the contenders of one step (cache with each G or
# ratio, plain) back to back, in an order that rotates from one repetition
# to the next.  Before every run the page cache is dropped (sync; echo 3 >
# /proc/sys/vm/drop_caches, untimed; only as root, else said once).  Rates
# are medians of REPS runs, each from the program's own clock (barrier to
# the last rank's end, MPI start-up and the cache's creation excluded; the
# wall clock of the whole mpiexec is in the JSON too); the cache's counters
# are medians too, the target checks take the worst run.  Each rank runs
# under /usr/bin/time: peak RSS (max over ranks; for the cache this counts
# the pages of the peers' windows a rank copied from, which MPICH maps
# shared) and CPU time (summed over ranks).  A failed run is recorded with
# its stderr and the summary marks it; the script then exits 1.  Human
# tables on stdout, JSON in $BENCH_OUT/cache.json (posix) and
# $BENCH_OUT/cache_gfarm.json (gfarm).  The cluster must not be built while
# other MPI jobs start: creating veths makes UCX's MPI_Init fail elsewhere.
#
# Tunables (environment; quick-mode defaults in brackets):
#   BENCH_CACHE_QUICK          1: one tiny repetition of everything, a smoke
#                              test, not a measurement                  (0)
#   BENCH_CACHE_REPS           repetitions, median taken (BENCH_REPS or 3) [1]
#   BENCH_CACHE_RANKS          rank counts                      ("2 4 8")
#   BENCH_CACHE_GROUPS         G of seq and strided, capped at N  ("1 4")
#   BENCH_CACHE_SIZE           cache per rank, seq and strided   (64M) [4M]
#   BENCH_CACHE_BLOCK          cache block size         (the cache's: 1M)
#   BENCH_CACHE_TRANSPORT      cache transport: mpi, shm, verbs (the
#                              cache's choice, "auto": shm on one node)
#   BENCH_CACHE_SEQ_FILE       seq file                          (64M) [4M]
#   BENCH_CACHE_SEQ_READ       seq read size                   (256K)
#   BENCH_CACHE_RANDOM_CACHE   cache per rank, random and ratio  (8M) [2M]
#   BENCH_CACHE_RANDOM_FACTORS random files, x the total cache ("0.5 2")
#   BENCH_CACHE_RANDOM_READS   1 MiB reads per rank               (32) [4]
#   BENCH_CACHE_STRIDED_FILE   strided file                      (32M) [8M]
#   BENCH_CACHE_STRIDED_SIZES  strided piece sizes      ("16K 256K 4M")
#   BENCH_CACHE_RATIO_RANKS    rank counts of the ratio sweep        ("4")
#   BENCH_CACHE_RATIOS         singlet ratios      ("0.0 0.3 0.5 0.6 0.9")
#   BENCH_CACHE_RATIO_FACTOR   its file, x the total cache          (0.5)
#   BENCH_CACHE_RATIO_READS    1 MiB reads per rank               (64) [8]
#   BENCH_CACHE_WARM_RANKS     rank counts of the warm step          ("4")
#   BENCH_CACHE_DIR            POSIX work dir (wiped)          (mktemp -d)
#   BENCH_CACHE_PAGECACHE      cold: drop it before every run; warm
#                              (POSIX): read every data file just before
#                              instead                           (cold)
#   BENCH_CACHE_GFARM_REPS     repetitions on Gfarm                 (3) [1]
#   BENCH_CACHE_GFARM_SIZE     cache per rank, seq and strided   (16M) [4M]
#   BENCH_CACHE_GFARM_SEQ_FILE, _GFARM_STRIDED_FILE          (16M, 16M) [4M]
#   BENCH_CACHE_GFARM_RANDOM_READS, _GFARM_RATIO_READS         (16, 32) [4, 8]
#   BENCH_CACHE_GFARM_NODES    compute nodes; the storage node is one more (4)
#   BENCH_CACHE_GFARM_DISK     the storage gfsd's rate, reads and writes
#                              together                          (100mbit)
#   BENCH_CACHE_GFARM_RATE     every node's link, each way         (1gbit)
#   BENCH_CACHE_GFARM_NET, _GFARM_GFMD_PORT   the cluster gfbc's /24 and
#                              gfmd's port            (198.19.33, 20653)
#   BENCHBIN, BENCH_OUT  as in bench/run.sh
# shellcheck disable=SC2015,SC2046,SC2086 # a && b || die; lists are split on purpose
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BENCHBIN=${BENCHBIN:-"$TOP/build/release/bench"}
OUTDIR=${BENCH_OUT:-"$TOP/bench/out"}
QUICK=${BENCH_CACHE_QUICK:-0}
q() { [ "$QUICK" = 1 ] && echo "$2" || echo "$1"; }	# FULL QUICK
REPS=${BENCH_CACHE_REPS:-$(q "${BENCH_REPS:-3}" 1)}
RANKS=${BENCH_CACHE_RANKS:-"2 4 8"}
GLIST=${BENCH_CACHE_GROUPS:-"1 4"}
CSIZE=${BENCH_CACHE_SIZE:-$(q 64M 4M)}
BLOCK=${BENCH_CACHE_BLOCK:-}
TRANSPORT=${BENCH_CACHE_TRANSPORT:-}
SEQ_FILE=${BENCH_CACHE_SEQ_FILE:-$(q 64M 4M)}
SEQ_READ=${BENCH_CACHE_SEQ_READ:-256K}
RND_CACHE=${BENCH_CACHE_RANDOM_CACHE:-$(q 8M 2M)}
RND_FACTORS=${BENCH_CACHE_RANDOM_FACTORS:-"0.5 2"}
RND_READS=${BENCH_CACHE_RANDOM_READS:-$(q 32 4)}
STR_FILE=${BENCH_CACHE_STRIDED_FILE:-$(q 32M 8M)}
STR_SIZES=${BENCH_CACHE_STRIDED_SIZES:-"16K 256K 4M"}
RAT_RANKS=${BENCH_CACHE_RATIO_RANKS:-4}
RATIOS=${BENCH_CACHE_RATIOS:-"0.0 0.3 0.5 0.6 0.9"}
RAT_FACTOR=${BENCH_CACHE_RATIO_FACTOR:-0.5}
RAT_READS=${BENCH_CACHE_RATIO_READS:-$(q 64 8)}
WARM_RANKS=${BENCH_CACHE_WARM_RANKS:-4}
G_REPS=${BENCH_CACHE_GFARM_REPS:-$(q 3 1)}
G_CSIZE=${BENCH_CACHE_GFARM_SIZE:-$(q 16M 4M)}
G_SEQ_FILE=${BENCH_CACHE_GFARM_SEQ_FILE:-$(q 16M 4M)}
G_STR_FILE=${BENCH_CACHE_GFARM_STRIDED_FILE:-$(q 16M 4M)}
G_RND_READS=${BENCH_CACHE_GFARM_RANDOM_READS:-$(q 16 4)}
G_RAT_READS=${BENCH_CACHE_GFARM_RATIO_READS:-$(q 32 8)}
NODES=${BENCH_CACHE_GFARM_NODES:-4}
RATE=${BENCH_CACHE_GFARM_RATE:-1gbit}
DISK=${BENCH_CACHE_GFARM_DISK:-100mbit}
NET=${BENCH_CACHE_GFARM_NET:-198.19.33}
GFMD_PORT=${BENCH_CACHE_GFARM_GFMD_PORT:-20653}
CNAME=gfbc
S=$((NODES + 1))	# the storage node
K=$S			# the cluster's nodes (cluster_up)
LIMIT=300		# seconds any one run may take
CBB="$BENCHBIN/cache_bench"
WARMB="${BIN:-$TOP/bin}/cache-warm"
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
# no preload or hook inherited (bench_start); the emulated cluster under
# this script's names
bench_start cache "$@"
HOSTS=
FAILED=0
ONCLUSTER=0		# 1: the ranks on the cluster's nodes (gfarm)
mkdir -p "$OUTDIR"

# ---- running and recording (run_timed, order: bench/lib.sh) -----------------
# every rank under /usr/bin/time, appending one line each to $WORK/rusage
# (O_APPEND: the ranks' lines do not mix); rusage_fields, run_timed's
# RUN_POST, turns them into the record's "rss_kib" and "cpu_s" (per rank),
# and on the cluster adds "storage_link_bytes": what the storage node sent
# on its link since link_mark
TIMEV=()
if [ -x /usr/bin/time ] && /usr/bin/time -f '%M' true >/dev/null 2>&1; then
	TIMEV=(/usr/bin/time -a -o RUSAGE -f 'rusage %M %U %S')
fi
# shellcheck disable=SC2317 # called through RUN_POST
rusage_fields() {
	[ -n "$SENT0" ] && printf ',"storage_link_bytes":%d' $(($("$CL" sent "$S") - SENT0))
	[ -e "$WORK/rusage" ] || return 0
	awk '$1 == "rusage" { r = r s $2; c = c s ($3 + $4); s = "," }
	     END { if (s != "") printf ",\"rss_kib\":[%s],\"cpu_s\":[%s]", r, c }' "$WORK/rusage"
	rm -f "$WORK/rusage"
}
SENT0=
link_mark() { SENT0=; [ "$ONCLUSTER" = 1 ] && SENT0=$("$CL" sent "$S"); return 0; }
RUN_POST=rusage_fields
DROP=false
[ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ] && DROP=true
# BENCH_CACHE_PAGECACHE=warm (POSIX): instead of dropping the page cache,
# read every data file into it before each run, so that plain pread copies
# from memory: what a cache hit must cost against (one copy)
PAGECACHE=${BENCH_CACHE_PAGECACHE:-cold}
[ "$PAGECACHE" = warm ] && DROP=false
drop_caches() {
	sync
	if [ "$PAGECACHE" = warm ] && [ "${ONCLUSTER:-0}" != 1 ]; then
		cat "$HWORK"/seq "$HWORK"/strided "$HWORK"/random.* "$HWORK"/ratio.* >/dev/null 2>&1
	else
		$DROP && echo 3 >/proc/sys/vm/drop_caches
	fi
	return 0
}

# launch N: the command that starts N ranks, in LAUNCH: mpiexec here, or
# on the cluster tests/cluster.sh run (lib.sh's CRUN) on
# the first compute nodes, as few ranks a node as NODES allow
launch() {
	local n=$1 p
	if [ "$ONCLUSTER" = 1 ]; then
		p=$(((n + NODES - 1) / NODES))
		LAUNCH=("${CRUN[@]}" -n "$n" -ppn "$p" -nodes $(((n + p - 1) / p)))
	else
		LAUNCH=(mpiexec -n "$n")
	fi
}
layout() {	# N..: "N:NODESxPPN" for each N once, as launch places them
	local n p out=
	for n in $(printf '%s\n' "$@" | sort -nu); do
		p=$(((n + NODES - 1) / NODES))
		out="$out${out:+ }$n:$(((n + p - 1) / p))x$p"
	done
	echo "$out"
}
# the warm step's tier, emptied: here, or on every compute node
tier_clear() {
	local k
	if [ "$ONCLUSTER" = 1 ]; then
		for ((k = 1; k <= NODES; k++)); do "$CL" exec "$k" rm -rf "$TIER"; done
	else
		rm -rf "$TIER"
	fi
}

# one PART VARIANT N REP EXTRA PATTERN FILE OPTION...: one timed cache_bench,
# after dropping the page cache
one() {
	local part=$1 var=$2 n=$3 rep=$4 extra=$5
	shift 5
	rm -f "$WORK/rusage"
	drop_caches
	launch "$n"
	link_mark
	run_timed "$REC" "$part" "$var" "$n" "$rep" "$extra" \
		"${LAUNCH[@]}" "${TIMEV[@]/RUSAGE/$WORK/rusage}" "$CBB" "$@"
}
# the group counts of N ranks: GLIST capped at N, once each
groups_of() {	# N
	local g out=" "
	for g in $GLIST; do
		((g > $1)) && g=$1
		[[ $out == *" $g "* ]] || out="$out$g "
	done
	echo $out
}
# a number as JSON spells it (.5 -> 0.5)
num() { awk -v x="$1" 'BEGIN { print x + 0 }'; }
# bytes of FACTOR x the total cache of N ranks of C bytes each
times_total() {	# FACTOR N C
	awk -v f="$1" -v n="$2" -v c="$(size_bytes "$3")" 'BEGIN { printf "%d", f * n * c }'
}

# ---- the experiments, on POSIX paths or gfarm:// URLs -------------------------
# The files: NAME SIZE lines, made once before the repetitions (mkfiles).
file_list() {
	local n f
	echo "seq $(size_bytes "$SEQ_FILE")"
	echo "strided $(size_bytes "$STR_FILE")"
	for n in $RANKS; do
		for f in $RND_FACTORS; do
			echo "random.$n.$f $(times_total "$f" "$n" "$RND_CACHE")"
		done
	done
	for n in $RAT_RANKS; do
		echo "ratio.$n $(times_total "$RAT_FACTOR" "$n" "$RND_CACHE")"
	done
}
# bench REPS FILEPREFIX: every experiment, REPS times, records in $REC
bench() {
	local reps=$1 F=$2 rep n f s v x co0=() co=() wo=()
	# the cache's own options, the same for every cache run
	[ -n "$BLOCK" ] && co0+=(--block "$BLOCK") wo+=(--block-size "$BLOCK")
	[ -n "$TRANSPORT" ] && co0+=(--transport "$TRANSPORT") wo+=(--transport "$TRANSPORT")
	for ((rep = 1; rep <= reps; rep++)); do
		co=("${co0[@]}")
		((rep == 1)) && co+=(--verify)
		for n in $RANKS; do
			# seq (figure 2)
			x=",\"step\":\"seq\",\"cache_arg\":\"$CSIZE\""
			for v in $(order "$rep" $(groups_of "$n") plain); do
				case $v in
				plain) one seq plain "$n" "$rep" "$x" seq "$F/seq" \
					--size "$SEQ_READ" --plain ;;
				*) one seq cache "$n" "$rep" "$x,\"groups\":$v" seq "$F/seq" \
					--size "$SEQ_READ" --cache "$CSIZE" --groups "$v" "${co[@]}" ;;
				esac
			done
			# random (figure 3): below and above the total cache
			for f in $RND_FACTORS; do
				x=",\"step\":\"random x$f\",\"factor\":$(num "$f"),\"cache_arg\":\"$RND_CACHE\""
				for v in $(order "$rep" cache plain); do
					case $v in
					plain) one random plain "$n" "$rep" "$x" random "$F/random.$n.$f" \
						--reads "$RND_READS" --plain ;;
					cache) one random cache "$n" "$rep" "$x,\"groups\":1" random \
						"$F/random.$n.$f" --reads "$RND_READS" --cache "$RND_CACHE" \
						"${co[@]}" ;;
					esac
				done
			done
			# strided (figure 4)
			for s in $STR_SIZES; do
				x=",\"step\":\"strided $s\",\"size_arg\":\"$s\",\"cache_arg\":\"$CSIZE\""
				for v in $(order "$rep" $(groups_of "$n") plain); do
					case $v in
					plain) one strided plain "$n" "$rep" "$x" strided "$F/strided" \
						--size "$s" --plain ;;
					*) one strided cache "$n" "$rep" "$x,\"groups\":$v" strided \
						"$F/strided" --size "$s" --cache "$CSIZE" --groups "$v" \
						"${co[@]}" ;;
					esac
				done
			done
			printf '.'
		done
		# the singlet ratio (figure 1)
		for n in $RAT_RANKS; do
			x=",\"step\":\"ratio\",\"factor\":$(num "$RAT_FACTOR"),\"cache_arg\":\"$RND_CACHE\""
			for v in $(order "$rep" $RATIOS plain); do
				case $v in
				plain) one ratio plain "$n" "$rep" "$x" random "$F/ratio.$n" \
					--reads "$RAT_READS" --plain ;;
				*) one ratio cache "$n" "$rep" "$x,\"groups\":1,\"ratio\":$(num "$v")" random \
					"$F/ratio.$n" --reads "$RAT_READS" --cache "$RND_CACHE" \
					--ratio "$v" "${co[@]}" ;;
				esac
			done
			printf '.'
		done
		# warm: cache-warm into a local tier, then the job
		for n in $WARM_RANKS; do
			x=",\"step\":\"warm\",\"cache_arg\":\"$CSIZE\""
			tier_clear
			drop_caches
			launch "$n"
			link_mark
			run_timed "$REC" warm cache-warm "$n" "$rep" "$x" \
				"${LAUNCH[@]}" "$WARMB" --json -q -d "$TIER" "${wo[@]}" "$F/seq"
			for v in $(order "$rep" warm cold plain); do
				case $v in
				plain) one warm plain "$n" "$rep" "$x" seq "$F/seq" \
					--size "$SEQ_READ" --plain ;;
				cold) one warm cache "$n" "$rep" "$x,\"groups\":1,\"tier\":false" seq \
					"$F/seq" --size "$SEQ_READ" --cache "$CSIZE" "${co[@]}" ;;
				warm) one warm cache-tier "$n" "$rep" "$x,\"groups\":1,\"tier\":true" seq \
					"$F/seq" --size "$SEQ_READ" --cache "$CSIZE" \
					--local-dir "$TIER" "${co[@]}" ;;
				esac
			done
			tier_clear
			printf '.'
		done
	done
	echo
}
# the settings of this run, for the summary
settings() {	# storage reps
	printf '{"storage":"%s","reps":%d,"quick":%s,"ranks":"%s","groups":"%s",' \
		"$1" "$2" "$([ "$QUICK" = 1 ] && echo true || echo false)" "$RANKS" "$GLIST"
	printf '"cache_size":"%s","block":"%s","transport":"%s","seq_file":"%s","seq_read":"%s",' \
		"$CSIZE" "${BLOCK:-default}" "${TRANSPORT:-auto}" "$SEQ_FILE" "$SEQ_READ"
	printf '"random_cache":"%s","random_factors":"%s","random_reads":%d,' \
		"$RND_CACHE" "$RND_FACTORS" "$RND_READS"
	printf '"strided_file":"%s","strided_sizes":"%s","ratio_ranks":"%s",' \
		"$STR_FILE" "$STR_SIZES" "$RAT_RANKS"
	printf '"ratios":"%s","ratio_factor":%s,"ratio_reads":%d,"warm_ranks":"%s",' \
		"$RATIOS" "$(num "$RAT_FACTOR")" "$RAT_READS" "$WARM_RANKS"
	printf '"drop_caches":%s,"page_cache":"%s","rusage":%s' \
		"$DROP" "$PAGECACHE" "$([ ${#TIMEV[@]} -gt 0 ] && echo true || echo false)"
	[ "$1" = gfarm ] &&
		printf ',"nodes":%d,"layout":"%s","storage_node":"%s","disk":"%s","rate_per_link":"%s","hosts":"%s"' \
			"$NODES" "$(layout $RANKS $RAT_RANKS $WARM_RANKS)" "$(node_host "$S")" \
			"$DISK" "$RATE" "$HOSTS"
	echo '}'
}

# ---- posix ------------------------------------------------------------------
posix_bench() {
	local name bytes TIER=$WORK/tier
	REC="$WORK/posix.jsonl"
	: >"$REC"
	say "POSIX in $WORK; ranks $RANKS; $REPS reps$([ "$QUICK" = 1 ] && echo ", QUICK (a smoke test)")"
	while read -r name bytes; do
		head -c "$bytes" /dev/urandom >"$WORK/$name" ||
			{ say "cannot make $WORK/$name" >&2; FAILED=$((FAILED + 1)); return; }
	done < <(file_list)
	bench "$REPS" "$WORK"
	rm -f "$WORK"/seq "$WORK"/strided "$WORK"/random.* "$WORK"/ratio.*
	summarize "$REC" "$OUTDIR/cache.json" "$(settings posix "$REPS")"
}

# ---- gfarm: the emulated cluster (tests/cluster.sh through bench/lib.sh) ----
gfarm_can_run() {
	local why
	[ "$(id -u)" = 0 ] || { skip "gfarm: needs root (tests/cluster.sh)"; return 1; }
	why=$(cluster_check gfreg) || { skip "gfarm: $why"; return 1; }
	ldd "$CBB" 2>/dev/null | grep -q libgfarm ||
		{ skip "gfarm: $CBB is built without libgfarm (./configure --with-gfarm)"; return 1; }
}
gfarm_bench() {
	# the Gfarm sizes, for bench, file_list and settings (dynamic scope);
	# the ranks on the nodes, their files where every node sees them
	local name bytes CSIZE=$G_CSIZE SEQ_FILE=$G_SEQ_FILE STR_FILE=$G_STR_FILE
	local RND_READS=$G_RND_READS RAT_READS=$G_RAT_READS ONCLUSTER=1 WORK=$WORK TIER
	gfarm_can_run || return 0
	# one at a time: the names are fixed so that a run killed with SIGKILL
	# is cleaned up by the next one; no daemon may inherit the lock (9<&-)
	exec 9<"$0"
	flock -n 9 || { skip "gfarm: another bench/cache.sh gfarm is running"; return 0; }
	cluster_teardown
	trap 'cluster_teardown; rm -rf "$HWORK"' EXIT
	cluster_up
	WORK=$SHARED/cache TIER=$CLUSTER_LOCAL/cache-tier CERR=$SHARED/cache/cmd.err
	mkdir -p "$WORK" || cluster_die "cannot make $WORK"
	REC="$WORK/gfarm.jsonl"
	: >"$REC"
	say "gfarm: cluster up: compute nodes $(node_host 1)..$(node_host "$NODES"), storage node $(node_host "$S") (its gfsd at $DISK), $RATE per link and way"
	# the files, on the storage node, without the limits (untimed)
	cluster_unshape || cluster_die "cannot lift the rate limits"
	timeout 20 "$CL" exec head gfmkdir /bench/cache || cluster_die "gfmkdir /bench/cache failed"
	while read -r name bytes; do
		head -c "$bytes" /dev/urandom >"$WORK/file" &&
			timeout 120 "$CL" exec "$S" gfreg -h "$(node_host "$S")" "$WORK/file" \
				"gfarm:///bench/cache/$name" </dev/null 9<&- ||
			cluster_die "cannot make gfarm:///bench/cache/$name"
	done < <(file_list)
	rm -f "$WORK/file"
	[ "$(timeout 20 "$CL" exec head gfwhere /bench/cache/seq)" = "$(node_host "$S")" ] ||
		cluster_die "gfarm:///bench/cache/seq is not on $(node_host "$S") alone"
	cluster_shape || cluster_die "cannot limit the links and the disk again"
	say "gfarm: files on $(node_host "$S"); ranks $(layout $RANKS $RAT_RANKS $WARM_RANKS) (N:nodes x ranks); $G_REPS reps$([ "$QUICK" = 1 ] && echo ", QUICK (a smoke test)")"
	bench "$G_REPS" gfarm:///bench/cache
	summarize "$REC" "$OUTDIR/cache_gfarm.json" "$(settings gfarm "$G_REPS")"
	say "gfarm: tearing down"
	cluster_teardown
	trap 'stop_child; rm -rf "$HWORK"' EXIT
}

# ---- the summary ------------------------------------------------------------
summarize() {	# REC OUT SETTINGS
	python3 - "$@" <<'EOF'
import json, statistics, sys
recf, outf, cfg = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
recs = [json.loads(l) for l in open(recf) if l.strip()]
MiB = 1 << 20
med = statistics.median
gfarm = cfg["storage"] == "gfarm"

def sel(part, n, step, var, groups=None, ratio=None):
    return [r for r in recs if r.get("part") == part and r.get("ranks") == n
            and r.get("step") == step and r.get("variant") == var
            and (groups is None or r.get("groups") == groups)
            and (ratio is None or r.get("ratio") == ratio)]

def cell(rs):
    """medians of the runs of one contender of one step"""
    if not rs:
        return None
    ok = [r for r in rs if r["rc"] == 0 and r.get("out")]
    d = {"runs": len(rs), "failed": len(rs) - len(ok)}
    if d["failed"]:
        d["errors"] = sorted({(r.get("err") or "").strip() for r in rs if r["rc"] != 0})
    if not ok:
        return d
    o = ok[0]["out"]
    secs = [r["out"]["seconds"] for r in ok]
    d.update(file_size=o["file_size"], piece=o["piece"], bytes=o["bytes"],
             seconds=med(secs), runs_seconds=secs,
             mib_s=o["bytes"] / MiB / med(secs) if med(secs) > 0 else None,
             wall_seconds=med(r["wall"] for r in ok))
    rss = [max(r["rss_kib"]) for r in ok if r.get("rss_kib")]
    cpu = [sum(r["cpu_s"]) for r in ok if r.get("cpu_s")]
    d["peak_rss_kib"] = med(rss) if rss else None
    d["cpu_seconds"] = med(cpu) if cpu else None
    # the storage node's link bytes: of the runs without --verify (whose
    # plain re-reads cross the link too) when there are any
    lr = [r for r in ok if r.get("storage_link_bytes") is not None]
    lu = [r for r in lr if "verified" not in r["out"]]
    if lr:
        ln = med(r["storage_link_bytes"] for r in lu or lr)
        d["storage_link_bytes"] = ln
        d["storage_link_over_file"] = ln / (o["file_size"] or 1)
        d["storage_link_with_verify"] = not lu
    cs = [r["out"]["cache"] for r in ok if r["out"].get("cache")]
    if cs:
        fs = o["file_size"] or 1
        d["transport"] = o.get("transport")
        d["cache"] = {k: med(c.get(k, 0) for c in cs) for k in cs[0]}
        d["storage_over_file"] = med(c["storage_bytes_read"] / fs for c in cs)
        d["storage_over_file_worst"] = max(c["storage_bytes_read"] / fs for c in cs)
        d["max_storage_reads_per_block"] = max(c["max_storage_reads_per_block"] for c in cs)
    return d

def rate(d):
    return d.get("mib_s") if d else None

def div(a, b):
    return a / b if a is not None and b else None

def f(x, w=8, p=1):
    return ("%*.*f" % (w, p, x)) if x is not None else "%*s" % (w, "-")

def rc(d, w=8):
    """a rate cell: FAILED, or the rate with '!' when some runs failed"""
    if d and d.get("failed") and rate(d) is None:
        return "%*s" % (w, "FAILED")
    return f(rate(d), w) + ("!" if d and d.get("failed") else "")

def mib(x):
    return x / MiB

def rss(d):
    return "%d" % round(d["peak_rss_kib"] / 1024) if d and d.get("peak_rss_kib") else "-"

def lk(d):
    """bytes the storage node sent on its link / the file's size; v: with
    --verify's re-reads"""
    if not d or d.get("storage_link_over_file") is None:
        return "-"
    return f(d["storage_link_over_file"], 1, 2) + ("v" if d["storage_link_with_verify"] else "")

def st(d, k):
    return "%d" % d["cache"][k] if d and d.get("cache") else "-"

def peer(d):
    """blocks copied whole from peers + reads served from their slots"""
    if not d or not d.get("cache"):
        return "-"
    c = d["cache"]
    return "%d" % (c["peer_copies"] + c.get("peer_pieces", 0))

def groups_of(n):
    out = []
    for g in (int(x) for x in cfg["groups"].split()):
        g = min(g, n)
        if g not in out:
            out.append(g)
    return out

ranks = [int(x) for x in cfg["ranks"].split()]
where = ("emulated cluster, ranks on %d nodes (N:nodes x ranks %s), every file on storage "
         "node %s, its gfsd at %s, links %s" % (cfg["nodes"], cfg["layout"],
                                                cfg["storage_node"], cfg["disk"],
                                                cfg["rate_per_link"])
         if gfarm else "POSIX, one machine (the page cache is shared by the plain readers)")
out = {"benchmark": "cache_gfarm" if gfarm else "cache", "settings": cfg,
       "clock": "mib_s: bytes returned to all ranks / the program's own time (barrier to "
                "the last rank's end; MPI start-up and cache creation excluded), median "
                "of reps; peak_rss_kib: max over ranks of /usr/bin/time %M (for the "
                "cache it includes the pages of peers' windows a rank copied from), "
                "median of reps; cpu_seconds: user+sys summed over ranks"}
print("cache bench: %s; median of %d%s" % (where, cfg["reps"],
      "; QUICK: a smoke test, not a measurement" if cfg["quick"] else ""))
if gfarm:
    print("link/file: the bytes the storage node sent on its link / the file's size (v: only "
          "runs with --verify, whose plain re-reads it includes)")
targets = []

# seq (figure 2)
print()
print("seq (figure 2): every rank reads the whole %s file in order, %s reads; cache %s per "
      "rank; aggregate MiB/s" % (cfg["seq_file"], cfg["seq_read"], cfg["cache_size"]))
print("   N |  G |    plain |    cache | cache/plain | storage/file | max reads/block | "
      "RSS MiB plain/cache" + (" | link/file plain/cache" if gfarm else ""))
tab = []
for n in ranks:
    p = cell(sel("seq", n, "seq", "plain"))
    for g in groups_of(n):
        c = cell(sel("seq", n, "seq", "cache", groups=g))
        row = {"ranks": n, "groups": g, "plain_mib_s": rate(p), "cache_mib_s": rate(c),
               "cache_over_plain": div(rate(c), rate(p)), "plain": p, "cache": c}
        tab.append(row)
        sf = c.get("storage_over_file_worst") if c else None
        mx = c.get("max_storage_reads_per_block") if c else None
        if sf is not None:
            t = {"experiment": "seq", "ranks": n, "groups": g,
                 "storage_over_file_worst": sf, "max_storage_reads_per_block": mx,
                 "met": sf <= g + 1e-9 and mx <= g}
            targets.append(t)
        print("  %2d | %2d | %s | %s | %11s | %5s %-6s | %6s %-8s | %6s / %s" % (
            n, g, rc(p), rc(c), f(row["cache_over_plain"], 11, 2), f(sf, 5, 2),
            "" if sf is None else ("(<=%d)" % g if sf <= g + 1e-9 else "(>%d!)" % g),
            "-" if mx is None else mx,
            "" if mx is None else ("(<=%d)" % g if mx <= g else "(>%d!)" % g),
            rss(p), rss(c)) + (" | %5s / %s" % (lk(p), lk(c)) if gfarm else ""))
out["seq"] = tab

# random (figure 3)
print()
print("random (figure 3): every rank reads %d pieces of 1 MiB at random offsets; cache %s per "
      "rank, total = %s x N; aggregate MiB/s; block counts summed over ranks" % (
          cfg["random_reads"], cfg["random_cache"], cfg["random_cache"]))
print("   N |  file MiB | /total | /1 rank |    plain |    cache | cache/plain |  hits |  "
      "peer | storage | storage/file | RSS MiB plain/cache")
tab = []
for n in ranks:
    for fac in cfg["random_factors"].split():
        step = "random x" + fac
        p, c = cell(sel("random", n, step, "plain")), cell(sel("random", n, step, "cache"))
        fs = (c or {}).get("file_size") or (p or {}).get("file_size")
        row = {"ranks": n, "factor": float(fac), "file_size": fs, "plain_mib_s": rate(p),
               "cache_mib_s": rate(c), "cache_over_plain": div(rate(c), rate(p)),
               "plain": p, "cache": c}
        tab.append(row)
        print("  %2d | %9s | %6.2f | %7.2f | %s | %s | %11s | %5s | %5s | %7s | %12s | %6s / %s" % (
            n, f(mib(fs) if fs else None, 9, 1), float(fac), float(fac) * n,
            rc(p), rc(c), f(row["cache_over_plain"], 11, 2), st(c, "hits"),
            peer(c), st(c, "storage_reads"),
            f(c.get("storage_over_file") if c else None, 12, 2), rss(p), rss(c)))
out["random"] = tab

# strided (figure 4)
print()
print("strided (figure 4): rank r reads pieces r, r+N, ... of the %s file; cache %s per "
      "rank; aggregate MiB/s" % (cfg["strided_file"], cfg["cache_size"]))
print("   N |   size |  G |    plain |    cache | cache/plain | storage/file | "
      "RSS MiB plain/cache")
tab = []
for n in ranks:
    for s in cfg["strided_sizes"].split():
        step = "strided " + s
        p = cell(sel("strided", n, step, "plain"))
        for g in groups_of(n):
            c = cell(sel("strided", n, step, "cache", groups=g))
            row = {"ranks": n, "size": s, "groups": g, "plain_mib_s": rate(p),
                   "cache_mib_s": rate(c), "cache_over_plain": div(rate(c), rate(p)),
                   "plain": p, "cache": c}
            tab.append(row)
            print("  %2d | %6s | %2d | %s | %s | %11s | %12s | %6s / %s" % (
                n, s, g, rc(p), rc(c), f(row["cache_over_plain"], 11, 2),
                f(c.get("storage_over_file") if c else None, 12, 2), rss(p), rss(c)))
out["strided"] = tab

# the singlet ratio (figure 1)
tab = []
for n in (int(x) for x in cfg["ratio_ranks"].split()):
    fac = float(cfg["ratio_factor"])
    p = cell(sel("ratio", n, "ratio", "plain"))
    cs = {r: cell(sel("ratio", n, "ratio", "cache", ratio=float(r)))
          for r in cfg["ratios"].split()}
    fs = next((d["file_size"] for d in [p] + list(cs.values()) if d and d.get("file_size")),
              None)
    print()
    print("singlet ratio (figure 1): random, N=%d, %d pieces of 1 MiB per rank; file %s MiB "
          "= %.2fx one rank's cache (%s), %.2fx the total" % (
              n, cfg["ratio_reads"], f(mib(fs) if fs else None, 1, 1), fac * n,
              cfg["random_cache"], fac))
    print("  ratio |    MiB/s | seconds | vs plain |  hits |  peer | storage | "
          "evicted LRU/FIFO | to singlet | RSS MiB")
    print("  plain | %s | %7s |          |       |       |         |                  |"
          "            | %s" % (rc(p), f(p.get("seconds") if p else None, 7, 2), rss(p)))
    for r, c in cs.items():
        row = {"ranks": n, "ratio": float(r), "file_size": fs, "cache_mib_s": rate(c),
               "plain_mib_s": rate(p), "cache_over_plain": div(rate(c), rate(p)),
               "seconds": c.get("seconds") if c else None, "cache": c}
        tab.append(row)
        print("  %5s | %s | %7s | %8s | %5s | %5s | %7s | %7s / %-6s | %10s | %s" % (
            r, rc(c), f(row["seconds"], 7, 2), f(row["cache_over_plain"], 8, 2),
            st(c, "hits"), peer(c), st(c, "storage_reads"),
            st(c, "evict_general"), st(c, "evict_singlet"), st(c, "to_singlet"), rss(c)))
    out.setdefault("ratio_plain", {})[str(n)] = p
out["ratio"] = tab

# warm: cache-warm, then the job
tab = []
wr = [int(x) for x in cfg.get("warm_ranks", "").split()]
if wr:
    print()
    print("warm: cache-warm of the %s seq file into a local tier, then seq through the cache "
          "publishing it (tier), the cold cache, plain; G=1; aggregate MiB/s" % cfg["seq_file"])
    print("   N | warm-up s |    plain |     cold |     tier | tier/plain | tier/cold | "
          "storage reads cold / tier | setup s cold / tier"
          + (" | link/file cold / tier" if gfarm else ""))
for n in wr:
    w = sel("warm", n, "warm", "cache-warm")
    wok = [r for r in w if r["rc"] == 0 and r.get("out")]
    wsec = med(r["out"]["seconds"] for r in wok) if wok else None
    p = cell(sel("warm", n, "warm", "plain"))
    c = cell(sel("warm", n, "warm", "cache"))
    t = cell(sel("warm", n, "warm", "cache-tier"))
    def setup(d):
        ok = [r for r in recs if r.get("part") == "warm" and r.get("ranks") == n
              and r.get("variant") == d and r["rc"] == 0 and r.get("out")]
        return med(r["out"]["setup_seconds"] for r in ok) if ok else None
    row = {"ranks": n, "warm_seconds": wsec, "plain_mib_s": rate(p), "cold_mib_s": rate(c),
           "tier_mib_s": rate(t), "tier_over_plain": div(rate(t), rate(p)),
           "tier_over_cold": div(rate(t), rate(c)), "plain": p, "cold": c, "tier": t,
           "warm_failed": len(w) - len(wok),
           "cold_setup_seconds": setup("cache"), "tier_setup_seconds": setup("cache-tier")}
    tab.append(row)
    if t and t.get("cache"):
        targets.append({"experiment": "warm", "ranks": n, "groups": 1,
                        "tier_storage_reads": t["cache"]["storage_reads"],
                        "met": t["cache"]["storage_reads"] == 0})
    print("  %2d | %8s | %s | %s | %s | %10s | %9s | %11s / %-11s | %s / %s" % (
        n, f(wsec, 8, 2), rc(p), rc(c), rc(t), f(row["tier_over_plain"], 10, 2),
        f(row["tier_over_cold"], 9, 2), st(c, "storage_reads"), st(t, "storage_reads"),
        f(row["cold_setup_seconds"], 5, 2), f(row["tier_setup_seconds"], 5, 2))
        + (" | %5s / %s" % (lk(c), lk(t)) if gfarm else ""))
out["warm"] = tab

print()
bad = [t for t in targets if not t["met"]]
print("  targets (seq, every run: storage bytes read <= G x the file, no block read from "
      "storage more than G times; warm: no storage reads): %s" % (
          "none measured" if not targets else "met (%d cases)" % len(targets) if not bad
          else "NOT met in %d of %d cases: %s" % (len(bad), len(targets), ", ".join(
              "%s N=%d G=%d" % (t["experiment"], t["ranks"], t["groups"]) for t in bad))))
out["targets"] = targets
tr = sorted({r["out"].get("transport") for r in recs if r.get("out") and r["out"].get("transport")})
print("  transport: %s; page cache dropped before every run: %s; peak RSS: %s" % (
    ", ".join(tr) or "-", "yes" if cfg["drop_caches"] else
    "no: warm, every data file read just before" if cfg.get("page_cache") == "warm" else
    "NO (not root)",
    "max over ranks of /usr/bin/time %M; the cache's includes pages of peers' windows"
    if cfg["rusage"] else "not measured (no /usr/bin/time)"))
# the 1-min load average includes this bench's own ranks; the processes
# runnable at the instant before each run (none of ours) are other work
rq = [r["others_runnable"] for r in recs if r.get("others_runnable") is not None]
if rq:
    busy = sum(1 for x in rq if x > 0) / len(rq)
    print("  other work on the machine: something else runnable before %d%% of the runs%s"
          % (round(100 * busy), "; only the ratios within this run mean much"
             if busy >= 0.25 else ""))
    out["other_work"] = {"runs_with_others_runnable": busy,
                         "load1_median": med(r["load1"] for r in recs
                                             if r.get("load1") is not None)}
nfail = sum(1 for r in recs if r.get("rc", 0) != 0)
if nfail:
    print("  %d runs FAILED (cells marked FAILED or with '!'); errors are in the JSON" % nfail)
out["failed_runs"] = nfail
json.dump(out, open(outf, "w"), indent=1)
print("cache: wrote %s" % outf)
EOF
}

# ---- main ---------------------------------------------------------------------
[ -x "$CBB" ] || { echo "cache: $CBB not built (make)" >&2; exit 1; }
for c in mpiexec python3 timeout awk; do
	command -v $c >/dev/null 2>&1 || { skip "'$c' not found"; exit 0; }
done
if [ -n "${BENCH_CACHE_DIR:-}" ]; then
	WORK=$BENCH_CACHE_DIR
	rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
else
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/gfsplit-cache.XXXXXX") || exit 1
fi
HWORK=$WORK		# this host's (the cluster's runs work in its shared dir)
trap 'stop_child; rm -rf "$HWORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
$DROP || say "not root: the page cache is not dropped between runs"
[ ${#TIMEV[@]} -gt 0 ] || say "no /usr/bin/time: peak RSS and CPU time are not measured"
for m in $MODES; do
	case $m in
	posix) posix_bench ;;
	gfarm) gfarm_bench ;;
	esac
done
((FAILED == 0)) || { say "$FAILED run(s) failed"; exit 1; }
exit 0

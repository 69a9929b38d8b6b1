#!/bin/bash
# cluster_faults.sh - a node fails mid-run on the emulated cluster
# (tests/cluster.sh kill: every process in the node killed, its ranks and
# its gfsd, its link and namespace gone, its /dev/shm lost), 3 nodes of 2
# ranks, links shaped so that the runs last seconds:
#   - stage-in to the nodes' local dirs: the job ends with an error within
#     the test's bound (no rank hangs), and no file on the surviving nodes
#     is torn under its final name; after the node is back (`revive`), the
#     same command again completes the tree everywhere and resumes (files
#     already there are skipped);
#   - pcp-split to Gfarm: the job ends with an error, nothing under the
#     final name; after `revive`, the same command writes it whole, each
#     part on its writer's node;
#   - stage-out into DEST/NODE/: the same, and the rerun resumes (files
#     installed are skipped, chunks written are taken from the journal);
#   - cache-warm: no tier holds an entry of the unfinished warm; after
#     `revive`, warming again fills every node's tier whole;
#   - stage-out --async, node 2 fails while its mover writes back: the
#     other nodes' movers finish (--wait), nothing torn on node 2's side;
#     after `revive`, stage-out again resumes from the dead mover's journal;
#   - node 3 freezes (processes stopped, link down) while a program reads
#     a file through libgfsplit-cache.so (tcp transport) with
#     GFSPLIT_TIMEOUT=4: the other nodes' ranks give up on its ranks,
#     read what they held from storage (every byte right), and the job
#     ends by itself with an error naming node 3; thawed, it reads again;
#   - the same during cache-warm --timeout 4 (links at 40 Mbit/s, so that
#     the warm lasts): the job ends by itself with an error naming node
#     3's ranks; thawed, the warm completes.
#
# LONG_WAITS=no leaves out the last case (make check-asan: the sanitized
# pass; its code paths, the one-sided give-up of the cache's tcp transport
# and the --timeout watch, are the frozen read's before it and stuck.sh's
# first case; it is the longest, 24 MiB warmed on 3 nodes twice)
. "$(dirname "$0")/../lib.sh"
need_gfarm
need_cluster 3 --rate 100mbit
J=$TMPD/j.json
LIM=$(scaled 60)

# killed_mid DESC NODE WHEN CMD..: CMD runs in the background; node NODE
# is killed once the shell command WHEN is true (polled for up to 20 s);
# ok if CMD then ends by itself, with an error, within LIM seconds (its
# output in $TMPD/k.out)
killed_mid() {
	_d=$1 _n=$2 _w=$3; shift 3
	timeout -k 5 $LIM "$@" >"$TMPD/k.out" 2>&1 &
	_p=$!
	_t=0
	until eval "$_w" || [ $_t -ge 100 ]; do sleep 0.2; _t=$((_t + 1)); done
	CLUSTER_QUIET=1 "$CLUSTER" kill "$_n"
	wait $_p
	_rc=$?
	sed -n '1,4s/^/#   /p' "$TMPD/k.out"
	if [ $_rc -ne 0 ] && [ $_rc -ne 124 ] && [ $_rc -ne 137 ]; then
		ok "$_d (exit $_rc)"
	else
		not_ok "$_d" "exit $_rc (124/137: killed by the test's bound of $LIM s)" "$(tail -n 8 "$TMPD/k.out")"
	fi
}
# frozen_mid DESC WHEN LIM OUT CMD..: CMD runs in the background (output
# in OUT); node 3 freezes WHEN seconds in, or (WHEN a command) once WHEN
# is true, polled for up to LIM s; ok if CMD then ends by itself, with an
# error, within LIM seconds (scaled); node 3 is thawed after either way
frozen_mid() {
	local d=$1 when=$2 lim=$3 out=$4 p t=0 rc
	shift 4
	lim=$(scaled "$lim")
	"$@" >"$out" 2>&1 &
	p=$!
	case $when in
	*[!0-9.]*)
		while ! $when && kill -0 $p 2>/dev/null && [ $t -lt $((lim * 5)) ]; do
			sleep 0.2; t=$((t + 1))
		done
		t=0 ;;
	*) sleep "$when" ;;
	esac
	CLUSTER_QUIET=1 "$CLUSTER" freeze 3
	while kill -0 $p 2>/dev/null && [ $t -lt $((lim * 5)) ]; do sleep 0.2; t=$((t + 1)); done
	if kill -0 $p 2>/dev/null; then
		not_ok "$d within $lim s" "$(tail -n 8 "$out")"
		CLUSTER_QUIET=1 "$CLUSTER" thaw 3
		wait $p
	else
		wait $p
		rc=$?
		[ $rc -ne 0 ] && [ $rc -ne 124 ] && ok "$d, exit $rc, in $((t / 5)) s" ||
			not_ok "$d with an error" "exit $rc: $(tail -n 8 "$out")"
		CLUSTER_QUIET=1 "$CLUSTER" thaw 3
	fi
}
# no_torn DESC SRC DIR..: every regular file under each DIR whose name is
# a source file's holds exactly the source's bytes
no_torn() {
	_d=$1 _s=$2; shift 2
	if python3 - "$_s" "$@" >"$TMPD/torn" 2>&1 <<'EOF'
import os, sys
src = sys.argv[1]
seen = 0
for d in sys.argv[2:]:
    for top, dirs, files in os.walk(d):
        for n in files:
            if n.startswith("."):
                continue	# temporaries, under their own names
            p = os.path.join(top, n)
            s = os.path.join(src, os.path.relpath(p, d))
            assert open(p, "rb").read() == open(s, "rb").read(), "torn: " + p
            seen += 1
print(seen, "final names checked")
EOF
	then ok "$_d: $(cat "$TMPD/torn")"; else not_ok "$_d" "$(cat "$TMPD/torn")"; fi
}

# node_results DIR PREFIX N: node k's DIR gets PREFIX1..PREFIXN, the first
# 4 MiB + k bytes of the sources f1..fN
node_results() {
	local k
	for k in 1 2 3; do
		cexec "$k" sh -c "mkdir -p $1 && for i in \$(seq $3); do head -c $((4 * 1048576 + k)) $S/f\$i > $1/$2\$i; done" ||
			not_ok "results written on node $k"
	done
}
# results_home DESC DIR DEST PREFIX N: every node's DIR/PREFIXi is in
# DEST/NODE/, byte for byte
results_home() {
	local k i bad=""
	for k in 1 2 3; do
		for i in $(seq "$5"); do
			cmp -s "$CLUSTER_DIR/node$k/local/${2#"$CLUSTER_LOCAL"/}/$4$i" "$3/$(node_host "$k")/$4$i" ||
				bad="$bad $(node_host "$k")/$4$i;"
		done
	done
	[ -z "$bad" ] && ok "$1" || not_ok "$1" "$bad"
}

# ---- stage-in, node 3 fails
S=$CW/src
mkdir -p "$S"
for i in 1 2 3 4 5 6; do make_file "$S/f$i" $((6 * 1048576 + i)) "$i"; done
L=$CLUSTER_LOCAL/in
# node 3 fails once some file is installed on every node (the others are
# still coming: 8 MiB/s a node); a file counts as there only where every
# node has it, and the data passes the nodes in a chain, so node 1 having
# a file says nothing of node 3
mac0=$(cat "/sys/class/net/${GFSPLIT_CLUSTER}br/address")
killed_mid "stage-in with node 3 killed mid-run ends with an error" 3 \
	'for f in 1 2 3 4 5 6; do [ -e "$CLUSTER_DIR/node1/local/in/src/f$f" ] &&
		[ -e "$CLUSTER_DIR/node2/local/in/src/f$f" ] &&
		[ -e "$CLUSTER_DIR/node3/local/in/src/f$f" ] && break; done' \
	"$CLUSTER" run -ppn 2 "$BIN/stage-in" --chunk-size=1M --bwlimit 8M "$S" "$L"
no_torn "  no torn file under a final name on nodes 1 and 2" "$S" \
	"$CLUSTER_DIR/node1/local/in/src" "$CLUSTER_DIR/node2/local/in/src"
# the nodes' ARP entries for the head stay right: the bridge keeps its MAC
mac1=$(cat "/sys/class/net/${GFSPLIT_CLUSTER}br/address")
[ "$mac0" = "$mac1" ] && ok "  the head's MAC did not change with node 3's link gone" ||
	not_ok "  the head's MAC did not change with node 3's link gone" "$mac0 -> $mac1"
check "node 3 boots again" "$CLUSTER" revive 3
if crun -ppn 2 "$BIN/stage-in" --json --chunk-size=1M "$S" "$L" >"$J" 2>"$TMPD/err"; then
	ok "the same stage-in again completes"
else
	not_ok "the same stage-in again completes" "$(tail -n 8 "$TMPD/err")"
fi
total=$(cat "$S"/f? | wc -c)
json_true "  resuming: files already installed are skipped, the rest read once" \
	"j['skipped'] > 0 and j['planned_bytes'] < $total and j['bytes_read'] == j['planned_bytes']"
bad=""
for k in 1 2 3; do
	for i in 1 2 3 4 5 6; do
		cmp -s "$S/f$i" "$CLUSTER_DIR/node$k/local/in/src/f$i" || bad="$bad node$k/f$i;"
	done
done
[ -z "$bad" ] && ok "  every node has the whole tree" || not_ok "  every node has the whole tree" "$bad"

# ---- pcp-split to Gfarm, node 2 fails
make_file "$CW/big" $((24 * 1048576)) 9
cexec head gfmkdir /t || not_ok "gfmkdir /t"
# rank 0 (node 1) hangs in a write after 4 MiB (a stuck file system), so
# node 2 fails while the job is still writing
killed_mid "pcp-split to Gfarm with node 2 killed mid-run ends with an error" 2 'sleep 1.5' \
	env GFSPLIT_FAULT=hang:0:4194304 "$CLUSTER" run -ppn 2 "$BIN/pcp-split" "$CW/big" gfarm:///t/out
if cexec head gfls -d /t/out >/dev/null 2>&1; then
	not_ok "  nothing under the final name" "$(cexec head gfls -l /t/out 2>&1)"
else
	ok "  nothing under the final name"
fi
check "node 2 boots again" "$CLUSTER" revive 2
check "the same pcp-split again completes" crun -ppn 2 "$BIN/pcp-split" "$CW/big" gfarm:///t/out
check "  merged, it is the source" cexec 1 "$BIN/gfsplit-merge" gfarm:///t/out "$CW/back"
same_bytes "  byte for byte" "$CW/big" "$CW/back"
got=$(cexec head "$BIN/stat-layout" --json gfarm:///t/out 2>&1 |
	python3 -c 'import json,sys; j=json.load(sys.stdin); print(all(r["on_writer_node"] for r in j["parts"]), len(j["parts"]))' 2>&1)
[ "$got" = "True 6" ] && ok "  every part on its writer's node" || not_ok "  every part on its writer's node" "$got"
# ---- stage-out, node 2 fails; the rerun resumes from its journal
RES=$CLUSTER_LOCAL/res
node_results "$RES" r 3
O=$CW/out
killed_mid "stage-out with node 2 killed mid-run ends with an error" 2 \
	'ls "$O/$(node_host 1)"/r? >/dev/null 2>&1' \
	"$CLUSTER" run -ppn 1 "$BIN/stage-out" --chunk-size=1M --bwlimit 4M "$RES" "$O"
no_torn "  no torn file under a final name" "$CLUSTER_DIR/node1/local/res" "$O/$(node_host 1)"
check "node 2 boots again" "$CLUSTER" revive 2
crun_ok "the same stage-out again completes" -ppn 1 "$BIN/stage-out" --json --chunk-size=1M "$RES" "$O"
json_true "  resuming: installed files skipped or written chunks taken from the journal" \
	'j["skipped"] > 0 or j["bytes_resumed"] > 0'
results_home "  every node's results in DEST/NODE/" "$RES" "$O" r 3

# ---- cache-warm, node 3 fails while the tiers fill
make_file "$CW/data" $((24 * 1048576)) 4	# (--keep all: every node's tier gets all of it)
check "a data file on node 1's gfsd" cexec 1 gfreg -h "$(node_host 1)" "$CW/data" /t/data
TB=gfsplit-cache-$(id -u)
killed_mid "cache-warm with node 3 killed mid-run ends with an error" 3 \
	'ls "$CLUSTER_DIR"/node3/shm/'"$TB"'/.*.data.tmp >/dev/null 2>&1' \
	"$CLUSTER" run -ppn 2 "$BIN/cache-warm" -b 1M --keep all gfarm:///t/data
bad=""
for k in 1 2; do
	ls "$CLUSTER_DIR/node$k/shm/$TB/"*.map >/dev/null 2>&1 && bad="$bad node $k has an entry;"
done
[ -z "$bad" ] && ok "  no tier holds an entry of the unfinished warm" ||
	not_ok "  no tier holds an entry of the unfinished warm" "$bad"
check "node 3 boots again" "$CLUSTER" revive 3
check "the same cache-warm again completes" crun -ppn 2 "$BIN/cache-warm" -b 1M --keep all gfarm:///t/data
TIER_BYTES=$CW/data tiers_hold "  every node's tier holds the whole file, byte for byte" gfarm:///t/data all \
	"$CLUSTER_DIR/node1/shm/$TB" "$CLUSTER_DIR/node2/shm/$TB" "$CLUSTER_DIR/node3/shm/$TB"

# ---- stage-out --async, node 2 fails while its mover writes back
MV=$CLUSTER_LOCAL/mv
node_results "$MV" m 2
MO=$CW/mvout
crun_ok "stage-out --async: a mover on each of 3 nodes" \
	-ppn 1 "$BIN/stage-out" --async --interval 1 --chunk-size=1M --bwlimit 4M "$MV" "$MO"
# node 2 fails once its mover has written a chunk of a file
M2=$MO/$(node_host 2)
_t=0
until [ -n "$(find "$M2" -name '.m*' -size +1023k 2>/dev/null)" ] || [ $_t -ge 100 ]; do
	sleep 0.2; _t=$((_t + 1))
done
sleep 0.3
CLUSTER_QUIET=1 "$CLUSTER" kill 2
crun_ok "stage-out --wait on nodes 1 and 3: their movers finish" \
	-n 2 -ppn 1 "$BIN/stage-out" --wait --json "$MV"
no_torn "  nothing torn under a final name of node 2's" "$CLUSTER_DIR/node2/local/mv" "$M2"
check "node 2 boots again" "$CLUSTER" revive 2
crun_ok "stage-out again completes" -ppn 1 "$BIN/stage-out" --json --chunk-size=1M "$MV" "$MO"
json_true "  resuming the dead mover's chunks from its journal" 'j["bytes_resumed"] > 0'
results_home "  every node's files in DEST/NODE/" "$MV" "$MO" m 2

# ---- the cache preload, node 3 freezes mid-read
make_file "$CW/cdata" $((32 * 1048576)) 6
ref=$(timeout 60 "$MPIEXEC" -n 1 "$UNIT/mpi_readapp" solo "$CW/cdata" | awk '{print $4}')
preload_of "${CACHE_LIB:-$TOP/lib/libgfsplit-cache.so}"
creader() {
	crun -ppn 2 env LD_PRELOAD="$PRE" GFSPLIT_CACHE_FILES="$CW/*" GFSPLIT_CACHE_SIZE=64M \
		GFSPLIT_CACHE_BLOCK=1M GFSPLIT_TIMEOUT=4 "$UNIT/mpi_readapp" solo "$CW/cdata"
}
# every rank has the file open: the job is past MPI_Init (a node frozen
# before it, as a loaded machine's slow start let happen, hangs MPICH's
# start, which no bound of ours covers) and reading
creading() {
	local p n=0
	for p in $(pgrep -f "mpi_readapp solo $CW/cdata"); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -q " $CW/cdata\$" && n=$((n + 1))
	done
	[ "$n" -ge 6 ]
}
frozen_mid "node 3 frozen mid-read: the job ends by itself" creading 40 "$TMPD/fz.out" creader
output_has_in() { grep -Eq -- "$2" "$TMPD/fz.out" && ok "$1" || not_ok "$1" "no /$2/ in:" "$(head -c 2000 "$TMPD/fz.out")"; }
output_has_in "  a rank says it gave up on node 3 and ends the job" \
	"gfsplit-cache: rank [0-3]: .* \(tcp, node $(node_host 3) at .*no answer within 4 s.*cannot end normally"
_good=$(grep -c "^rank [0-3] fnv $ref bytes $((32 * 1048576))$" "$TMPD/fz.out")
_bad=$(grep "^rank [0-9]* fnv" "$TMPD/fz.out" | grep -vc " fnv $ref ")
[ "$_good" -ge 1 ] && [ "$_bad" -eq 0 ] &&
	ok "  ranks on nodes 1-2 read every byte right past it ($_good of 4 done before the end)" ||
	not_ok "  ranks on nodes 1-2 read every byte right past it" "$_good right, $_bad wrong: $(grep fnv "$TMPD/fz.out")"
if creader >"$TMPD/fz2.out" 2>&1 && [ "$(grep -c " fnv $ref bytes " "$TMPD/fz2.out")" -eq 6 ]; then
	ok "thawed, the same job reads every byte on every rank"
else
	not_ok "thawed, the same job reads every byte on every rank" "$(tail -n 8 "$TMPD/fz2.out")"
fi

# ---- cache-warm --timeout, node 3 freezes mid-warm
if ! long_wait "cache-warm --timeout 4, node 3 frozen mid-warm"; then
	finish
	exit $?
fi
CLUSTER_QUIET=1 "$CLUSTER" shape 40mbit
frozen_mid "cache-warm --timeout 4, node 3 frozen mid-warm: ends by itself" 1.5 60 "$TMPD/fw.out" \
	timeout -k 5 120 "$CLUSTER" run -ppn 2 "$BIN/cache-warm" -b 1M --keep all --force --timeout 4 \
	gfarm:///t/data
sed -n '1,6s/^/#   /p' "$TMPD/fw.out"
grep -Eq "rank [45]|$(node_host 3)" "$TMPD/fw.out" &&
	ok "  naming node 3 or its ranks" || not_ok "  naming node 3 or its ranks" "$(head -c 2000 "$TMPD/fw.out")"
CLUSTER_QUIET=1 "$CLUSTER" shape 100mbit
check "thawed, cache-warm again completes" crun -ppn 2 "$BIN/cache-warm" -b 1M --keep all --force gfarm:///t/data
finish

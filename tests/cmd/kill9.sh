#!/bin/bash
# kill9.sh - a kill -9 matrix: pcp-split, gfsplit-merge, stage-in,
# stage-out and the asynchronous mover, each killed (SIGKILL, injected by
# GFSPLIT_FAULT=crash:RANK:BYTES at the write that passes BYTES) at
# KILL_POINTS points (default 16) drawn from KILL_SEED (default 1).  After
# each kill:
#   - nothing under a final name is torn: the destination is absent or
#     whole (a split file that stat-layout --check passes and that merges
#     to the source; staged files byte for byte the source's);
#   - a rerun without the fault completes with byte-identical results;
#   - after the rerun no temporary of the killed run is left: it was
#     resumed or removed.
# The seed and each point are printed, so a failure can be replayed:
#   KILL_SEED=7 KILL_POINTS=50 tests/run.sh kill9
. "$(dirname "$0")/../lib.sh"

SEED=${KILL_SEED:-1}
POINTS=${KILL_POINTS:-16}
echo "# seed $SEED, $POINTS points a command"

F=$TMPD/src
make_file "$F" $((3 * 1048576 + 12345)) 1
S=$TMPD/tree
mkdir -p "$S/d1/d2" "$TMPD/loc/nA/sub" "$TMPD/loc/nB"
make_file "$S/big" $((3 * 1048576 + 777)) 2
make_file "$S/d1/small" 5000 3
make_file "$S/d1/d2/mid" 600000 4
ln -s d1/small "$S/link"
make_file "$TMPD/loc/nA/big" $((2 * 1048576 + 5)) 5
make_file "$TMPD/loc/nA/sub/s" 70000 6
make_file "$TMPD/loc/nB/big" $((2 * 1048576 + 9)) 7
mpirun_n 3 "$BIN/pcp-split" -b 64K "$F" "$TMPD/good.split" >/dev/null 2>&1 ||
	not_ok "the reference split file is made"

# points N MAXBYTES NRANKS: N lines "RANK BYTES" from the seed
points() {
	python3 -c '
import random, sys
n, top, nr, seed, salt = map(int, sys.argv[1:6])
r = random.Random(seed * 1000 + salt)
for _ in range(n):
    print(r.randrange(nr), r.randrange(top))' "$1" "$2" "$3" "$SEED" "$4"
}
# leftovers DIR PATTERN: names under DIR matching the shell pattern
leftovers() { find "$1" -name "$2" 2>/dev/null | head -n 5; }
# same_files A B: every regular file and link of A is in B, the same
same_files() {
	python3 - "$1" "$2" <<'EOF'
import os, sys
a, b = sys.argv[1:3]
bad = []
for root, dirs, files in os.walk(a):
    dirs[:] = [d for d in dirs if d != ".gfsplit-stage"]
    for n in files:
        p = os.path.join(root, n)
        q = os.path.join(b, os.path.relpath(p, a))
        if os.path.islink(p):
            if not os.path.islink(q) or os.readlink(p) != os.readlink(q):
                bad.append(q)
        elif not os.path.isfile(q) or os.path.islink(q) or open(p, "rb").read() != open(q, "rb").read():
            bad.append(q)
if bad:
    print("differ or missing:", " ".join(bad[:5]))
    sys.exit(1)
EOF
}
# torn DEST SRC: files under final names in DEST that are not SRC's
torn() {
	python3 - "$1" "$2" <<'EOF'
import os, sys
d, s = sys.argv[1:3]
bad = []
for root, dirs, files in os.walk(d):
    dirs[:] = [x for x in dirs if x != ".gfsplit-stage"]
    for n in files:
        if ".gfsplit-" in n:
            continue	# a temporary: no final name
        p = os.path.join(root, n)
        q = os.path.join(s, os.path.relpath(p, d))
        if os.path.islink(p):
            continue
        if not os.path.isfile(q) or open(p, "rb").read() != open(q, "rb").read():
            bad.append(p)
print(" ".join(bad))
EOF
}

case_ok=0 case_bad=""
# verdict NAME I RANK BYTES PROBLEM: tally one kill point
verdict() {
	if [ -z "$5" ]; then case_ok=$((case_ok + 1))
	else case_bad="$case_bad
point $2 (rank $3, $4 bytes): $5"; fi
}
report() {
	if [ -z "$case_bad" ]; then ok "$1: $case_ok kill points, nothing torn, reruns identical, no temporaries left"
	else not_ok "$1" "$case_bad"; fi
	case_ok=0 case_bad=""
}

# ---- pcp-split: 3 ranks, cyclic 64K blocks
i=0
mapfile -t P < <(points "$POINTS" $((3 * 1048576 / 3 + 65536)) 3 1)
for pt in "${P[@]}"; do
	read -r r b <<<"$pt"
	i=$((i + 1)); D=$TMPD/s$i.split; p=""
	mpirun_n 3 env GFSPLIT_FAULT=crash:$r:$b "$BIN/pcp-split" -b 64K --buffer-size 64K "$F" "$D" >/dev/null 2>&1
	if [ -e "$D" ]; then
		"$BIN/stat-layout" --check "$D" >/dev/null 2>&1 || p="torn: --check fails on $D"
	fi
	[ -e "$D" ] || mpirun_n 3 "$BIN/pcp-split" -b 64K "$F" "$D" >"$TMPD/out" 2>&1 || p="$p rerun failed: $(tail -n 2 "$TMPD/out")"
	mpirun_n 2 "$BIN/gfsplit-merge" "$D" "$D.m" >/dev/null 2>&1 && cmp -s "$F" "$D.m" || p="$p merge differs"
	l=$(leftovers "$TMPD" ".s$i.split.gfsplit-*")
	[ -z "$l" ] || p="$p left: $l"
	verdict pcp-split "$i" "$r" "$b" "$p"
	rm -rf "$D" "$D.m"
done
report "pcp-split killed mid-run"

# ---- gfsplit-merge: 3 ranks, 256K stripes
i=0
mapfile -t P < <(points "$POINTS" $((3 * 1048576 / 3 + 262144)) 3 2)
for pt in "${P[@]}"; do
	read -r r b <<<"$pt"
	i=$((i + 1)); D=$TMPD/m$i; p=""
	mpirun_n 3 env GFSPLIT_FAULT=crash:$r:$b "$BIN/gfsplit-merge" --stripe-size 256K \
		"$TMPD/good.split" "$D" >/dev/null 2>&1
	[ ! -e "$D" ] || cmp -s "$F" "$D" || p="torn: $D differs"
	[ -e "$D" ] || mpirun_n 3 "$BIN/gfsplit-merge" --stripe-size 256K "$TMPD/good.split" "$D" \
		>"$TMPD/out" 2>&1 || p="$p rerun failed: $(tail -n 2 "$TMPD/out")"
	cmp -s "$F" "$D" || p="$p rerun differs"
	l=$(leftovers "$TMPD" ".m$i.gfsplit-*")
	[ -z "$l" ] || p="$p left: $l"
	verdict gfsplit-merge "$i" "$r" "$b" "$p"
	rm -f "$D"
done
report "gfsplit-merge killed mid-run"

# ---- stage-in: 3 ranks on one node, 1M chunks
i=0
mapfile -t P < <(points "$POINTS" $((4 * 1048576 / 2)) 3 3)
for pt in "${P[@]}"; do
	read -r r b <<<"$pt"
	i=$((i + 1)); D=$TMPD/in$i; p=""
	mpirun_n 3 env GFSPLIT_FAULT=crash:$r:$b "$BIN/stage-in" --chunk-size=1M "$S/" "$D" >/dev/null 2>&1
	t=$(torn "$D" "$S")
	[ -z "$t" ] || p="torn: $t"
	mpirun_n 3 "$BIN/stage-in" --chunk-size=1M "$S/" "$D" >"$TMPD/out" 2>&1 || p="$p rerun failed: $(tail -n 2 "$TMPD/out")"
	same_files "$S" "$D" >"$TMPD/cmp" || p="$p $(cat "$TMPD/cmp")"
	l=$(leftovers "$D" "*.gfsplit-stage.*")
	[ -z "$l" ] || p="$p left: $l"
	verdict stage-in "$i" "$r" "$b" "$p"
	rm -rf "$D"
done
report "stage-in killed mid-run"

# ---- stage-out: 2 emulated nodes
i=0
mapfile -t P < <(points "$POINTS" $((2 * 1048576 + 70000)) 2 4)
for pt in "${P[@]}"; do
	read -r r b <<<"$pt"
	i=$((i + 1)); D=$TMPD/out$i; p=""
	two_nodes 1 env GFSPLIT_FAULT=crash:$r:$b "$BIN/stage-out" --chunk-size=1M "$TMPD/loc/%h" "$D" >/dev/null 2>&1
	for n in nA nB; do
		t=$(torn "$D/$n" "$TMPD/loc/$n")
		[ -z "$t" ] || p="$p torn: $t"
	done
	two_nodes 1 "$BIN/stage-out" --chunk-size=1M "$TMPD/loc/%h" "$D" >"$TMPD/out" 2>&1 || p="$p rerun failed: $(tail -n 2 "$TMPD/out")"
	for n in nA nB; do
		same_files "$TMPD/loc/$n" "$D/$n" >"$TMPD/cmp" || p="$p $n: $(cat "$TMPD/cmp")"
	done
	l=$(leftovers "$D" "*.gfsplit-stage.*")
	[ -z "$l" ] || p="$p left: $l"
	verdict stage-out "$i" "$r" "$b" "$p"
	rm -rf "$D"
done
report "stage-out killed mid-run"

# ---- the mover: killed mid-file; the next one, then --wait, finish
export GFSPLIT_MOVER_DIR=$TMPD/reg
# until_settled D: wait (10 s at most) until each node's mover of the run
# into D has died (the fault; a zombie counts as dead) or has written back
# every file of its node, whichever comes first
until_settled() {
	for _ in $(seq 100); do
		_busy=""
		for _n in nA nB; do
			for _p in $(pgrep -f "stage-out.*$1\$"); do
				[ "$(awk '{print $3}' "/proc/$_p/stat" 2>/dev/null)" = Z ] && continue
				tr '\0' '\n' <"/proc/$_p/environ" 2>/dev/null | grep -qx "GFSPLIT_NODE=$_n" || continue
				same_files "$TMPD/loc/$_n" "$1/$_n" >/dev/null 2>&1 || _busy=1
			done
		done
		[ -z "$_busy" ] && return 0
		sleep 0.1
	done
}
at_exit "pkill -9 -f 'stage-out.*$TMPD'"
i=0
mapfile -t P < <(points "$POINTS" $((2 * 1048576 + 70000)) 1 5)
for pt in "${P[@]}"; do
	read -r r b <<<"$pt"
	i=$((i + 1)); D=$TMPD/async$i; p=""
	GFSPLIT_FAULT=crash:0:$b two_nodes 1 "$BIN/stage-out" --async --interval 60 --chunk-size=1M \
		"$TMPD/loc/%h" "$D" >/dev/null 2>&1	# (a mover may die at once)
	# the movers copy at once (the files rest); one of them dies at the fault
	until_settled "$D"
	for n in nA nB; do
		t=$(torn "$D/$n" "$TMPD/loc/$n")
		[ -z "$t" ] || p="$p torn: $t"
	done
	# a mover that died is started again; one still running refuses
	two_nodes 1 "$BIN/stage-out" --async --interval 60 --chunk-size=1M "$TMPD/loc/%h" "$D" >/dev/null 2>&1
	two_nodes 1 "$BIN/stage-out" --wait >"$TMPD/out" 2>&1 || p="$p --wait failed: $(tail -n 3 "$TMPD/out")"
	for n in nA nB; do
		same_files "$TMPD/loc/$n" "$D/$n" >"$TMPD/cmp" || p="$p $n: $(cat "$TMPD/cmp")"
	done
	l=$(leftovers "$D" "*.gfsplit-stage.*")
	[ -z "$l" ] || p="$p left: $l"
	verdict mover "$i" "$r" "$b" "$p"
	rm -rf "$D" "$TMPD"/loc/*/.gfsplit-stage
done
report "the stage-out mover killed mid-run"

finish

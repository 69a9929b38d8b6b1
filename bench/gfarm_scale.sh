#!/bin/bash
# bench/gfarm_scale.sh - does N-N placement scale where N-1 does not?
#
# On one machine every gfsd shares one disk, so this runs on the emulated
# cluster of tests/cluster.sh (through bench/lib.sh): K nodes gfbs-n1..K,
# each with its own network namespace, host name, /dev/shm and /tmp, a gfsd
# registered under its host name and a "disk" of its own: every byte to or
# from its gfsd, reads and writes together, passes one tbf limited to DISK,
# as a node's local disk in Kimura and Tatebe's MPI-IO/Gfarm (sec. 3).  gfmd runs in the head
# (the host's network); the ranks run on the nodes, one a node (rank r on
# node r+1), so a file a rank creates lands on its own node's gfsd:
#
#   head: bridge NET.1, gfmd, mpiexec
#     |-- link (RATE each way) --  node 1: gfbs-n1  NET.11  gfsd [DISK], rank 0
#     |-- link (RATE each way) --  node 2: gfbs-n2  NET.12  gfsd [DISK], rank 1 ..
#
# Then, for N = 1, 2, 4 ranks on N nodes writing the same SIZE bytes
# (median of REPS):
#   a     N-1: all ranks write disjoint ranges of ONE Gfarm file, pinned to
#         node 1 (bench/gfarm_n1 --mode=n1 --hosts=gfbs-n1, the Gfarm C API)
#   b     pcp-split SRC gfarm:///DST, no --hosts: each part on its writer's
#         own node (part r on node r+1, checked with gfwhere)
#         (only when `pcp-split --version` lists the gfarm backend)
#   nn    the same N-N pattern written raw (gfarm_n1 --mode=nn: file r
#         pinned to node r+1, its writer's), the reference line for b
# and reports MiB/s, b/a per N and the speed-up of each over N=1 (target
# set for it: b >= 1.7x at N=2 and >= 3x at N=4, a flat).  Then the disks
# and links are unlimited and, on the plain Gfarm, gfpcopy / gfreg /
# gfexport on node 1 move PLAIN_SIZE bytes against pcp-split and
# gfsplit-merge (one rank a node); every download is compared with the
# source.
#
# Human lines on stdout, JSON in $BENCH_OUT/gfarm_scale.json.  The work
# files live in the cluster's shared directory (the nodes' /tmp are their
# own).  Every run of a tool is bounded by `timeout`; the cluster (daemons,
# namespaces, links, its state dir with the work files) is torn down at
# exit, interrupt included.  Prints "SKIP: ..." and exits 0 where it cannot
# run (not root, no namespaces, no Gfarm packages, no MPI, gfarm_n1 built
# without libgfarm).
#
# Tunables (environment):
#   BENCH_GFARM_NODES       K nodes                     (4)
#   BENCH_GFARM_RANKS       rank counts, each <= K      ("1 2 4")
#   BENCH_GFARM_SIZE        bytes per disk-limited run  (64M)
#   BENCH_GFARM_PLAIN_SIZE  bytes per plain-Gfarm run   (256M)
#   BENCH_GFARM_PLAIN_RANKS rank counts, plain Gfarm    ("2 4")
#   BENCH_GFARM_PCP_OPTS    extra pcp-split options     ("")
#   BENCH_GFARM_DISK        each node's disk: its gfsd's rate, reads and
#                           writes together             (100mbit)
#   BENCH_GFARM_RATE        each node's link, each way  (1gbit; '': unshaped)
#   BENCH_GFARM_REPS        repetitions, median taken   (3)
#   BENCH_GFARM_NET         a /24 of 198.18.0.0/15      (198.19.31)
#   BENCH_GFARM_GFMD_PORT   gfmd port                   (20651)
#   BIN, BENCHBIN, BENCH_OUT  as in bench/run.sh
# shellcheck disable=SC2015,SC2086 # a && b || die; $PCP_OPTS is split on purpose
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-"$TOP/bin"}
BENCHBIN=${BENCHBIN:-"$TOP/build/release/bench"}
OUTDIR=${BENCH_OUT:-"$TOP/bench/out"}
K=${BENCH_GFARM_NODES:-4}
RANKS=${BENCH_GFARM_RANKS:-"1 2 4"}
SIZE=${BENCH_GFARM_SIZE:-64M}
PLAIN_SIZE=${BENCH_GFARM_PLAIN_SIZE:-256M}
PLAIN_RANKS=${BENCH_GFARM_PLAIN_RANKS:-"2 4"}
DISK=${BENCH_GFARM_DISK:-100mbit}
RATE=${BENCH_GFARM_RATE-1gbit}
PCP_OPTS=${BENCH_GFARM_PCP_OPTS:-}
REPS=${BENCH_GFARM_REPS:-3}
NET=${BENCH_GFARM_NET:-198.19.31}
GFMD_PORT=${BENCH_GFARM_GFMD_PORT:-20651}
LIMIT=150		# seconds any one timed command may take
PATH="$PATH:/usr/sbin:/sbin"
export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}	# the probe, on this host
N1="$BENCHBIN/gfarm_n1"

say() { echo "gfarm_scale: $*"; }
skip() { echo "SKIP: gfarm_scale: $*"; exit 0; }
# the emulated cluster (bench/lib.sh, tests/cluster.sh) under this script's names
CNAME=gfbs CTAG=gfarm_scale
cluster_skip() { skip "$@"; }
die() { cluster_die "$@"; }
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

# ---- can it run here? ---------------------------------------------------
why=$(cluster_check gfkey gfwhere gfpcopy gfexport gfreg) ||
	skip "$why (apt-get install gfmd gfsd gfarm-client)"
for c in mpiexec python3 timeout flock; do
	command -v $c >/dev/null 2>&1 || skip "'$c' not found"
done
[ -x "$N1" ] || skip "$N1 not built (./configure --with-gfarm && make)"
probe=$(timeout 30 mpiexec -n 1 "$N1" 2>&1)
[ $? = 77 ] && skip "$probe"
[ -x "$BIN/pcp-split" ] || skip "$BIN/pcp-split not built (make)"
HAVE_PCP=false
"$BIN/pcp-split" --version 2>/dev/null | grep -E '^backends:' | grep -qw gfarm &&
	HAVE_PCP=true
for n in $RANKS $PLAIN_RANKS; do	# one rank a node
	((n >= 1 && n <= K)) || die "$n ranks on $K nodes: every rank count must be 1..$K (BENCH_GFARM_NODES)"
done
BYTES=$(size_bytes "$SIZE") PLAIN_BYTES=$(size_bytes "$PLAIN_SIZE")
# one run at a time (the cluster's names are fixed; `up` removes what a
# run killed with SIGKILL left).  Every child gets fd 9 closed (9<&-): a
# daemon holding the lock would keep the next run out.
exec 9<"$0"
flock -n 9 || skip "another gfarm_scale.sh is running (or its daemons survived it)"

trap cluster_teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir -p "$OUTDIR"
cluster_up
B=$SHARED/gfarm_scale	# seen by the nodes at the same path; gone at teardown
REC="$B/records.jsonl" CERR="$B/cmd.err" WORK=$B	# WORK: where_parts'
mkdir -p "$B/dl" || die "cannot make $B"
say "cluster up: gfmd + $K nodes $(node_host 1)..$K ($HOSTS), a gfsd each;" \
	"disk $DISK per node (reads and writes), links ${RATE:-unshaped}"

# ---- running and recording ----------------------------------------------
# run PHASE TOOL N REP CMD... : bounded, timed; stdout's JSON line and the
# wall time go to $REC as one JSON object.  A failure stops the bench.
run() {
	local phase=$1 tool=$2 n=$3 rep=$4 t0 t1 rc js
	shift 4
	prog "$@"	# crun and cnode are functions
	sync	# no dirty pages of the previous run competing with this one
	t0=$(date +%s.%N)
	timeout -k 5 "$LIMIT" "${PROG[@]}" >"$B/cmd.out" 2>"$B/cmd.err" 9<&- &
	CHILD=$!
	wait "$CHILD"
	rc=$?
	CHILD=
	t1=$(date +%s.%N)
	((rc == 0)) || die "$phase $tool N=$n failed (exit $rc): $*"
	js=$(grep '^{' "$B/cmd.out" | tail -n 1)
	printf '{"phase":"%s","tool":"%s","ranks":%d,"rep":%d,"wall":%s,"out":%s}\n' \
		"$phase" "$tool" "$n" "$rep" "$(awk "BEGIN{print $t1 - $t0}")" \
		"${js:-null}" >>"$REC"
}

SRC="$B/src"
head -c "$(( BYTES > PLAIN_BYTES ? BYTES : PLAIN_BYTES ))" /dev/urandom >"$B/src.all" ||
	die "cannot make the source file"
head -c "$BYTES" "$B/src.all" >"$SRC"
maxn=1
for n in $RANKS; do ((n > maxn)) && maxn=$n; done

# ---- phase 1: disk-limited, N = 1, 2, 4 (one rank a node) ------------------
say "disk-limited runs: $SIZE per run, ranks $RANKS (one a node), $REPS reps" \
	"(pcp-split gfarm backend: $HAVE_PCP)"
for ((rep = 1; rep <= REPS; rep++)); do
	for n in $RANKS; do
		v=
		((rep == 1 && n == maxn)) && v=--verify	# untimed read-back
		run limited n1 "$n" "$rep" crun -n "$n" -ppn 1 -nodes "$n" "$N1" --mode=n1 \
			--hosts="$(node_host 1)" $v "$SIZE" /bench/n1
		run limited nn "$n" "$rep" crun -n "$n" -ppn 1 -nodes "$n" "$N1" --mode=nn \
			--hosts="$HOSTS" $v "$SIZE" /bench/nn
		if $HAVE_PCP; then
			run limited pcp-split "$n" "$rep" crun -n "$n" -ppn 1 -nodes "$n" \
				"$BIN/pcp-split" --json $PCP_OPTS "$SRC" gfarm:///bench/dst.split
			((rep == 1)) && where_parts "$REC" /bench/dst.split "$n" '{"phase": "placement"}'
			gclean /bench/dst.split
		fi
		printf '.'
	done
done
echo

# ---- phase 2: plain Gfarm (no limits), whole-file tools vs split -----------
cluster_unshape || die "cannot remove the disk and link limits"
head -c "$PLAIN_BYTES" "$B/src.all" >"$SRC.plain"
rm -f "$B/src.all"
say "plain Gfarm (no limits): $PLAIN_SIZE per run, $REPS reps;" \
	"Gfarm's tools on node 1, ranks one a node"
for ((rep = 1; rep <= REPS; rep++)); do
	timeout 20 "$CL" exec head gfmkdir /bench/pc >/dev/null 2>&1
	run plain gfpcopy-put 1 "$rep" cnode 1 gfpcopy -f "file://$SRC.plain" gfarm:///bench/pc/
	run plain gfreg 1 "$rep" cnode 1 gfreg "$SRC.plain" gfarm:///bench/reg
	run plain gfexport 1 "$rep" cnode 1 sh -c "gfexport gfarm:///bench/pc/src.plain >'$B/out.gfexport'"
	cmp -s "$SRC.plain" "$B/out.gfexport" || die "gfexport output differs from the source"
	rm -rf "$B/dl"/* "$B/out.gfexport"
	run plain gfpcopy-get 1 "$rep" cnode 1 gfpcopy -f gfarm:///bench/pc/src.plain "file://$B/dl/"
	cmp -s "$SRC.plain" "$B/dl/src.plain" || die "gfpcopy download differs from the source"
	rm -rf "$B/dl"/*
	gclean /bench/pc /bench/reg
	for n in $PLAIN_RANKS; do
		run plain n1 "$n" "$rep" crun -n "$n" -ppn 1 -nodes "$n" "$N1" --mode=n1 \
			--hosts="$(node_host 1)" "$PLAIN_SIZE" /bench/n1
		run plain nn "$n" "$rep" crun -n "$n" -ppn 1 -nodes "$n" "$N1" --mode=nn \
			--hosts="$HOSTS" "$PLAIN_SIZE" /bench/nn
		$HAVE_PCP || continue
		run plain pcp-split "$n" "$rep" crun -n "$n" -ppn 1 -nodes "$n" "$BIN/pcp-split" \
			--json $PCP_OPTS "$SRC.plain" gfarm:///bench/plain.split
		run plain gfsplit-merge "$n" "$rep" crun -n "$n" -ppn 1 -nodes "$n" \
			"$BIN/gfsplit-merge" --json gfarm:///bench/plain.split "$B/merged"
		cmp -s "$SRC.plain" "$B/merged" ||
			die "gfsplit-merge output differs from the source"
		rm -f "$B/merged"
		gclean /bench/plain.split
	done
	printf '.'
done
echo

# ---- summary ----------------------------------------------------------------
python3 - "$REC" "$OUTDIR/gfarm_scale.json" <<EOF || die "summary failed"
import json, re, statistics, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
MiB = 1 << 20
bytes_lim, bytes_plain = $BYTES, $PLAIN_BYTES
ranks = [int(x) for x in "$RANKS".split()]
have_pcp = "$HAVE_PCP" == "true"

def runs(phase, tool, n):
    return [r for r in recs if r.get("phase") == phase and r.get("tool") == tool
            and r.get("ranks") == n]

def internal(r):
    o = r.get("out") or {}
    return o.get("seconds")

def med(phase, tool, n, nbytes):
    rs = runs(phase, tool, n)
    if not rs:
        return None
    wall = statistics.median(r["wall"] for r in rs)
    ins = [internal(r) for r in rs if internal(r) is not None]
    d = {"runs": len(rs), "wall_seconds": wall,
         "wall_mib_per_sec": nbytes / MiB / wall,
         "runs_wall_seconds": [r["wall"] for r in rs]}
    if ins:
        s = statistics.median(ins)
        d.update(seconds=s, mib_per_sec=nbytes / MiB / s, runs_seconds=ins)
    return d

def rate(d):
    return None if d is None else d.get("mib_per_sec", d["wall_mib_per_sec"])

def fmt(x, w=7, p=1):
    return ("%*.*f" % (w, p, x)) if x is not None else "%*s" % (w, "-")

lim = {t: {n: med("limited", t, n, bytes_lim) for n in ranks}
       for t in ("n1", "nn", "pcp-split")}
b_tool = "pcp-split" if have_pcp else "nn"
# scaling is against N=1; without N=1 in the rank list there is none
base = 1 if 1 in ranks else None
a1, b1, r1 = ((rate(lim["n1"][base]), rate(lim[b_tool][base]), rate(lim["nn"][base]))
              if base else (None, None, None))
table = []
print("disk-limited Gfarm: %d nodes, one rank a node, a disk of $DISK per node, links %s,"
      " %d MiB per run, median of $REPS" % ($K, "$RATE" or "unshaped", bytes_lim // MiB))
print("   N |  a: N-1 MiB/s  vs N=1 |  b: %-9s MiB/s  vs N=1 |  b/a | raw N-N MiB/s  vs N=1"
      % b_tool)
for n in ranks:
    a, b, r = rate(lim["n1"][n]), rate(lim[b_tool][n]), rate(lim["nn"][n])
    row = {"ranks": n, "a_n1_mib_per_sec": a, "b_mib_per_sec": b,
           "b_tool": b_tool, "raw_nn_mib_per_sec": r,
           "a_vs_n1": a / a1 if a and a1 else None,
           "b_vs_n1": b / b1 if b and b1 else None,
           "raw_nn_vs_n1": r / r1 if r and r1 else None,
           "b_over_a": b / a if a and b else None}
    table.append(row)
    print("  %2d | %13s %6sx | %15s %6sx | %4s | %13s %6sx" % (
        n, fmt(a), fmt(row["a_vs_n1"], 5, 2), fmt(b), fmt(row["b_vs_n1"], 5, 2),
        fmt(row["b_over_a"], 4, 2), fmt(r), fmt(row["raw_nn_vs_n1"], 5, 2)))

targets = {2: 1.7, 4: 3.0}
verdict = {}
for row in table:
    n = row["ranks"]
    if n in targets and row["b_vs_n1"] is not None:
        verdict["b_at_%d" % n] = {"target": targets[n], "measured": row["b_vs_n1"],
                                  "met": row["b_vs_n1"] >= targets[n]}
a_sc = [row["a_vs_n1"] for row in table if row["a_vs_n1"] is not None]
if a_sc:
    verdict["a_flat"] = {"target": "every N within 0.75x..1.33x of N=1",
                         "range": [min(a_sc), max(a_sc)],
                         "met": min(a_sc) >= 0.75 and max(a_sc) <= 1.33}
for k, v in verdict.items():
    print("  target %-7s %s: %s" % (k, v["target"], "met" if v["met"] else "NOT met"))
if not have_pcp:
    print("  b is the raw N-N writer: pcp-split has no gfarm backend in this build")

# placement: every file where it was meant to go?
misplaced = []
for r in recs:
    o = r.get("out") or {}
    for f in o.get("files", []):
        if f.get("pinned") and f.get("hosts") != [f["pinned"]]:
            misplaced.append({"tool": r["tool"], "phase": r["phase"], **f})
    if o.get("misplaced_parts"):
        misplaced.append({"tool": r["tool"], "phase": r["phase"],
                          "misplaced_parts": o["misplaced_parts"]})
places = [r for r in recs if r.get("phase") == "placement"]
hosts = "$HOSTS".split(",")
for r in places:	# part.R of pcp-split on its writer's node: rank R's, node R+1
    for p, h in r["parts"].items():
        m = re.search(r"/part\.(\d+)$", p)
        if m and h != hosts[int(m.group(1)) % len(hosts)]:
            misplaced.append({"tool": "pcp-split", "ranks": r["ranks"], "path": p,
                              "pinned": hosts[int(m.group(1)) % len(hosts)],
                              "hosts": [h]})
checked_parts = sum(1 for r in places for p in r["parts"] if re.search(r"/part\.\d+$", p))
verified = [r["out"].get("verified") for r in recs
            if r.get("out") and r["out"].get("verified") is not None]
print("  placement (gfmd's replica info): %s%s; read-back checks: %s" % (
    "every pinned file on its node" if not misplaced else "%d MISPLACED" % len(misplaced),
    ", pcp-split parts on their writers' nodes checked: %d" % checked_parts if have_pcp else "",
    "all ok" if verified and all(verified) else ("none" if not verified else "FAILED")))

prank = [int(x) for x in "$PLAIN_RANKS".split()]
plain = {}
for t in ("gfpcopy-put", "gfreg", "gfexport", "gfpcopy-get"):
    plain[t] = med("plain", t, 1, bytes_plain)
for n in prank:
    for t in ("n1", "nn", "pcp-split", "gfsplit-merge"):
        plain["%s@%d" % (t, n)] = med("plain", t, n, bytes_plain)
print("plain Gfarm (no disk or link limits, %d nodes), %d MiB per run, median of $REPS, wall clock"
      " (internal where the tool reports it)" % ($K, bytes_plain // MiB))
labels = {"gfpcopy-put": "gfpcopy local->gfarm (node 1)",
          "gfreg": "gfreg local->gfarm (node 1)",
          "gfexport": "gfexport gfarm->local (node 1)",
          "gfpcopy-get": "gfpcopy gfarm->local (node 1)"}
for n in prank:
    labels.update({"n1@%d" % n: "raw N-1 writer, %d ranks" % n,
                   "nn@%d" % n: "raw N-N writer, %d ranks" % n,
                   "pcp-split@%d" % n: "pcp-split local->gfarm, %d ranks" % n,
                   "gfsplit-merge@%d" % n: "gfsplit-merge gfarm->local, %d ranks" % n})
for t, d in plain.items():
    if d is None:
        print("  %-40s  missing (no gfarm backend in pcp-split)" % labels[t])
    else:
        print("  %-40s %7.1f MiB/s wall%s" % (labels[t], d["wall_mib_per_sec"],
              "  %7.1f internal" % d["mib_per_sec"] if "mib_per_sec" in d else ""))
ratios = {}
def ratio(x, y, key):
    if plain.get(x) and plain.get(y):
        ratios[key] = plain[x]["wall_mib_per_sec"] / plain[y]["wall_mib_per_sec"]
for n in prank:
    ratio("pcp-split@%d" % n, "gfpcopy-put", "pcp_split_%d_over_gfpcopy_put_wall" % n)
    ratio("pcp-split@%d" % n, "gfreg", "pcp_split_%d_over_gfreg_wall" % n)
    ratio("gfsplit-merge@%d" % n, "gfexport", "gfsplit_merge_%d_over_gfexport_wall" % n)
    ratio("gfsplit-merge@%d" % n, "gfpcopy-get", "gfsplit_merge_%d_over_gfpcopy_get_wall" % n)
for k2, v in ratios.items():
    print("  %-40s %7.2f" % (k2, v))

out = {"benchmark": "gfarm_scale", "nodes": $K, "disk_per_node": "$DISK",
       "rate_per_link": "$RATE" or None, "ranks_per_node": 1,
       "bytes_rate_limited": bytes_lim, "bytes_plain": bytes_plain, "reps": $REPS,
       "ranks": ranks, "plain_ranks": prank, "pcp_split_gfarm_backend": have_pcp,
       "clock": "mib_per_sec from the program's own timer (after MPI start-up) where "
                "it reports one, else wall clock of the whole mpiexec",
       "rate_limited": {"table": table, "targets": verdict, "detail": lim},
       "placement": {"misplaced": misplaced, "pcp_split_parts": places,
                     "pcp_split_parts_checked": checked_parts,
                     "read_back_verified": verified},
       "plain": plain, "plain_ratios": ratios}
json.dump(out, open(sys.argv[2], "w"), indent=1)
print("gfarm_scale: wrote %s" % sys.argv[2])
EOF
say "tearing down"
exit 0

#!/bin/bash
# bench/mpiio.sh - the PMPI preload library (lib/libgfsplit-mpiio.so)
# against plain MPICH: the same unmodified program (bench/mpiio_bench), the
# same run, with and without LD_PRELOAD.
#
#   bash bench/mpiio.sh [posix] [gfarm]        (default: posix)
#
# posix (a temporary directory under $TMPDIR or /tmp):
#   ior   segmented N-1, SEGMENTS blocks of BLOCK bytes per rank, written in
#         TRANSFER pieces with MPI_File_write_at, N = 1, 2, 4:
#           plain  mpiexec -n N mpiio_bench ior F
#           lib    the same with LD_PRELOAD=LIB GFSPLIT_SPLIT_FILES=F
#           nn     mpiio_bench ior-nn F (file per rank, plain): the N-N line
#   hpio  nc-nc, 8-byte regions 128 B apart, one MPI_File_write_all, region
#         counts 4Ki .. 1Mi at N = 2 and 4: plain and lib
# gfarm (root; on the emulated cluster of tests/cluster.sh, through
# bench/lib.sh, under its own names gfbm-n1..K, torn down at exit,
# interrupt included, with the work files in its shared directory): each
# node has its own network, host name, /dev/shm and /tmp, a gfsd under its
# host name and a disk of its own (every byte to or from its gfsd, reads
# and writes together, limited to DISK); the ranks run on the nodes, one a
# node (rank r on node r+1):
#   ior   N = 1, 2, 4 ranks on N nodes, SEGMENTS x BLOCK per rank:
#           n1   bench/gfarm_n1 --mode=n1: ranks' ranges of ONE Gfarm file
#                through libgfarm, pinned to node 1.  This is the plain
#                baseline: without the library MPICH cannot open gfarm://
#                (ROMIO: "iofstypeunsupported"), which is probed and shown.
#           lib  mpiio_bench ior gfarm:///bench/ior under the library, no
#                placement given: each part lands on its writer's node,
#                part r on node r+1 (checked with gfwhere, and the split
#                file with stat-layout --check on node 1, after the first
#                repetition)
#           nn   gfarm_n1 --mode=nn: file r pinned to node r+1, its
#                writer's, the N-N line
#
# Every repetition runs the contenders of one N back to back, in an order
# that rotates from one repetition to the next; between runs the output is
# removed (rm -rf: under the library it is a split directory) and dirty
# pages are flushed (sync, untimed).  The first repetition also reads every
# output back through MPI-IO (--verify, untimed) and, for the library,
# runs `stat-layout --check` on the split directory.  Rates are medians of
# REPS runs, each from the program's own clock (earliest MPI_File_open to
# latest MPI_File_close, as IOR; MPI start-up excluded; the wall clock of
# the whole mpiexec is in the JSON too).  A failed run is recorded with its
# stderr and the summary marks it; the script then exits 1.
#
# Without the library (not built yet) only the plain columns are measured
# and the summary says so.  Human table on stdout, JSON in
# $BENCH_OUT/mpiio.json (posix) and $BENCH_OUT/mpiio_gfarm.json (gfarm).
# The cluster must not be built while other MPI jobs start: creating veths
# makes UCX's MPI_Init fail elsewhere ("No such device").
#
# Tunables (environment):
#   BENCH_MPIIO_LIB          the library   ($TOP/lib/libgfsplit-mpiio.so)
#   BENCH_MPIIO_REPS         repetitions, median taken  (BENCH_REPS or 5)
#   BENCH_MPIIO_RANKS        ior rank counts            ("1 2 4")
#   BENCH_MPIIO_SEGMENTS     ior segments on POSIX      (32: 128 MiB/rank)
#   BENCH_MPIIO_BLOCK        ior block                  (4M)
#   BENCH_MPIIO_TRANSFER     ior transfer               (4M)
#   BENCH_MPIIO_SYNC         1: MPI_File_sync before close, as MPI-IO/Gfarm's
#                            IOR (storage, not page cache); 0: no sync (1)
#   BENCH_MPIIO_HPIO_RANKS   hpio rank counts           ("2 4")
#   BENCH_MPIIO_HPIO_REGIONS hpio region counts  ("4Ki 16Ki 64Ki 256Ki 1Mi")
#   BENCH_MPIIO_DIR          POSIX work dir (wiped)     (mktemp -d)
#   BENCH_MPIIO_GFARM_REPS, _GFARM_SEGMENTS, _GFARM_SYNC  (3, 4, 0)
#   BENCH_MPIIO_GFARM_NODES, _GFARM_DISK, _GFARM_RATE, _GFARM_NET,
#   _GFARM_GFMD_PORT the cluster: K nodes (4, each ior rank count <= K),
#                    each node's disk (100mbit), its link each way
#                    (1gbit; '': unshaped), its /24 (198.19.32), gfmd's
#                    port (20652)
#   BIN, BENCHBIN, BENCH_OUT  as in bench/run.sh
# shellcheck disable=SC2015,SC2086 # a && b || die; $V is split on purpose
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-"$TOP/bin"}
BENCHBIN=${BENCHBIN:-"$TOP/build/release/bench"}
OUTDIR=${BENCH_OUT:-"$TOP/bench/out"}
LIB=${BENCH_MPIIO_LIB:-"$TOP/lib/libgfsplit-mpiio.so"}
REPS=${BENCH_MPIIO_REPS:-${BENCH_REPS:-5}}
RANKS=${BENCH_MPIIO_RANKS:-"1 2 4"}
SEGMENTS=${BENCH_MPIIO_SEGMENTS:-32}
BLOCK=${BENCH_MPIIO_BLOCK:-4M}
TRANSFER=${BENCH_MPIIO_TRANSFER:-4M}
SYNC=${BENCH_MPIIO_SYNC:-1}
HPIO_RANKS=${BENCH_MPIIO_HPIO_RANKS:-"2 4"}
HPIO_REGIONS=${BENCH_MPIIO_HPIO_REGIONS:-"4Ki 16Ki 64Ki 256Ki 1Mi"}
G_REPS=${BENCH_MPIIO_GFARM_REPS:-3}
G_SEGMENTS=${BENCH_MPIIO_GFARM_SEGMENTS:-4}
G_SYNC=${BENCH_MPIIO_GFARM_SYNC:-0}
K=${BENCH_MPIIO_GFARM_NODES:-4}
DISK=${BENCH_MPIIO_GFARM_DISK:-100mbit}
RATE=${BENCH_MPIIO_GFARM_RATE-1gbit}
NET=${BENCH_MPIIO_GFARM_NET:-198.19.32}
GFMD_PORT=${BENCH_MPIIO_GFARM_GFMD_PORT:-20652}
LIMIT=300		# seconds any one run may take
MB="$BENCHBIN/mpiio_bench"
N1="$BENCHBIN/gfarm_n1"
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
# plain must be plain (bench_start: no selection or preload inherited);
# the emulated cluster under this script's names
bench_start mpiio "$@"
CNAME=gfbm
HOSTS=
ON=()			# where stat-layout runs: here (posix), on a node (gfarm)
HAVE_LIB=false
[ -e "$LIB" ] && HAVE_LIB=true
FAILED=0
mkdir -p "$OUTDIR"

# ---- running and recording (run_timed, order: bench/lib.sh) -----------------
# mpiexec|crun "${PRE[@]}" FILE ...: the library preloaded into the ranks
# only (-genv: not into mpiexec itself) and FILE selected; the rest of the
# environment passes on as it is
PRE=(-genv LD_PRELOAD "$LIB" -genv GFSPLIT_SPLIT_FILES)
# rep 1, library: is the output a committed, consistent split file?
check_layout() {	# REC PART N FILE [EXTRA]
	local ok=false
	[ -x "$BIN/stat-layout" ] || return 0
	prog "${ON[@]}" "$BIN/stat-layout" --check "$4"
	timeout 120 "${PROG[@]}" >"$WORK/layout.out" 2>&1 && ok=true
	printf '{"part":"%s","variant":"layout","ranks":%d%s,"check_ok":%s,"msg":%s}\n' \
		"$2" "$3" "${5:-}" "$ok" \
		"$(tail -n 4 "$WORK/layout.out" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')" >>"$1"
	$ok || { FAILED=$((FAILED + 1)); say "stat-layout --check $4 failed" >&2; }
}

# ---- posix ------------------------------------------------------------------
posix_bench() {
	local rec="$WORK/posix.jsonl" F="$WORK/ior" H="$WORK/hpio" rep n c v V x
	local ior=(--segments "$SEGMENTS" --block "$BLOCK" --transfer "$TRANSFER")
	local hpio=(--region-size 8 --spacing 128)
	: >"$rec"
	[ "$SYNC" = 1 ] && ior+=(--sync) && hpio+=(--sync)
	say "POSIX in $WORK; ior: $SEGMENTS x $BLOCK per rank in $TRANSFER transfers," \
		"ranks $RANKS; hpio: regions $HPIO_REGIONS at ranks $HPIO_RANKS;" \
		"sync=$SYNC; $REPS reps; library: $($HAVE_LIB && echo "$LIB" || echo "NOT BUILT ($LIB)")"
	for ((rep = 1; rep <= REPS; rep++)); do
		V=
		((rep == 1)) && V=--verify
		for n in $RANKS; do
			for v in $(order "$rep" plain lib nn); do
				rm -rf "$F" "$F".*
				case $v in
				plain) run_timed "$rec" ior plain "$n" "$rep" "" \
					mpiexec -n "$n" "$MB" ior "$F" "${ior[@]}" $V ;;
				lib) $HAVE_LIB || continue
					run_timed "$rec" ior lib "$n" "$rep" "" \
						mpiexec "${PRE[@]}" "$F" -n "$n" "$MB" ior "$F" "${ior[@]}" $V &&
						((rep == 1)) && check_layout "$rec" ior "$n" "$F" ;;
				nn) run_timed "$rec" ior nn "$n" "$rep" "" \
					mpiexec -n "$n" "$MB" ior-nn "$F" "${ior[@]}" $V ;;
				esac
			done
			rm -rf "$F" "$F".*
			printf '.'
		done
		for n in $HPIO_RANKS; do
			for c in $HPIO_REGIONS; do
				x=",\"regions_arg\":\"$c\""
				for v in $(order "$rep" plain lib); do
					rm -rf "$H"
					case $v in
					plain) run_timed "$rec" hpio plain "$n" "$rep" "$x" mpiexec -n "$n" \
						"$MB" hpio "$H" --regions "$c" "${hpio[@]}" $V ;;
					lib) $HAVE_LIB || continue
						run_timed "$rec" hpio lib "$n" "$rep" "$x" mpiexec "${PRE[@]}" "$H" \
							-n "$n" "$MB" hpio "$H" --regions "$c" "${hpio[@]}" $V &&
							((rep == 1)) && check_layout "$rec" hpio "$n" "$H" "$x" ;;
					esac
				done
				rm -rf "$H"
				printf '.'
			done
		done
	done
	echo
	summarize posix "$rec" "$OUTDIR/mpiio.json"
}

# ---- the summary ------------------------------------------------------------
summarize() {	# posix|gfarm REC OUT
	python3 - "$@" <<EOF
import json, statistics, sys
part, recf, outf = sys.argv[1:4]
recs = [json.loads(l) for l in open(recf) if l.strip()]
MiB = 1 << 20
have_lib = "$HAVE_LIB" == "true"

def sel(p, v, n, regions=None):
    return [r for r in recs if r.get("part") == p and r.get("variant") == v
            and r.get("ranks") == n
            and (regions is None or r.get("regions_arg") == regions)]

def med(p, v, n, regions=None):
    rs = sel(p, v, n, regions)
    ok = [r for r in rs if r["rc"] == 0 and r.get("out")]
    if not rs:
        return None
    d = {"runs": len(rs), "failed": len(rs) - len(ok)}
    if ok:
        o = ok[0]["out"]
        nbytes = o["bytes"]
        secs = [r["out"]["seconds"] for r in ok]
        walls = [r["wall"] for r in ok]
        d.update(bytes=nbytes, seconds=statistics.median(secs),
                 mib_s=nbytes / MiB / statistics.median(secs),
                 wall_seconds=statistics.median(walls),
                 wall_mib_s=nbytes / MiB / statistics.median(walls),
                 runs_seconds=secs)
        vs = [r["out"].get("verified") for r in ok if r["out"].get("verified") is not None]
        d["verified"] = None if not vs else all(vs)
    if d["failed"]:
        d["errors"] = sorted({(r.get("err") or "").strip() for r in rs if r["rc"] != 0})
    return d

def rate(d):
    return d.get("mib_s") if d else None

def div(a, b):
    return a / b if a and b else None

def f(x, w=8, p=1):
    return ("%*.*f" % (w, p, x)) if x is not None else "%*s" % (w, "-")

def cell(d, w=8):
    if d and d.get("failed") and rate(d) is None:
        return "%*s" % (w, "FAILED")
    return f(rate(d), w) + ("!" if d and d.get("failed") else "")

layouts = [r for r in recs if r.get("variant") == "layout"]
placement = [r for r in recs if r.get("variant") == "placement"]
out = {"benchmark": "mpiio" if part == "posix" else "mpiio_gfarm",
       "library": "$LIB", "library_built": have_lib, "reps": int("$REPS"),
       "clock": "mib_s from the program's own timer (earliest MPI_File_open to latest "
                "MPI_File_close, MPI start-up excluded), median of reps"}
ranks = [int(x) for x in "$RANKS".split()]

if part == "posix":
    out.update(segments=int("$SEGMENTS"), block="$BLOCK", transfer="$TRANSFER",
               sync="$SYNC" == "1")
    base = {"plain": "plain", "lib": "lib", "nn": "nn"}
    names = ("plain MPICH", "with library", "raw N-N")
else:
    out.update(segments=int("$G_SEGMENTS"), block="$BLOCK", transfer="$TRANSFER",
               sync="$G_SYNC" == "1", nodes=int("$K"), ranks_per_node=1,
               disk_per_node="$DISK", rate_per_link="$RATE" or None,
               reps=int("$G_REPS"))
    base = {"plain": "n1", "lib": "lib", "nn": "nn"}
    names = ("N-1 libgfarm", "with library", "raw N-N")

m = {k: {n: med("ior", v, n) for n in ranks} for k, v in base.items()}
print("ior, %s: segmented N-1, %s segments x %s per rank, %s transfers, sync=%s, "
      "median of %s, MiB/s" % ("POSIX" if part == "posix" else "emulated Gfarm "
      "($K nodes, one rank a node, a disk of $DISK each, links %s)"
      % ("$RATE" or "unshaped"), out["segments"], "$BLOCK", "$TRANSFER",
      out["sync"], out["reps"]))
if part == "gfarm":
    print("  (the plain baseline is gfarm_n1 --mode=n1 through libgfarm: MPICH without "
          "the library cannot open gfarm:// paths)")
print("   N | %12s | %12s | %9s | %10s | lib/N-N | vs N=1: %5s   lib   N-N"
      % (names[0], names[1], "lib/plain" if part == "posix" else "lib/N-1", names[2],
         "plain" if part == "posix" else "N-1"))
table = []
r1 = {k: rate(m[k].get(1)) for k in m}
for n in ranks:
    p, l, nn = (rate(m[k][n]) for k in ("plain", "lib", "nn"))
    row = {"ranks": n, "plain_mib_s": p, "lib_mib_s": l, "nn_mib_s": nn,
           "lib_over_plain": div(l, p), "lib_over_nn": div(l, nn),
           "plain_vs_n1": div(p, r1["plain"]), "lib_vs_n1": div(l, r1["lib"]),
           "nn_vs_n1": div(nn, r1["nn"])}
    table.append(row)
    print("  %2d | %12s | %12s | %9s | %10s | %7s |       %5s %5s %5s" % (
        n, cell(m["plain"][n], 12), cell(m["lib"][n], 12),
        f(row["lib_over_plain"], 9, 2), cell(m["nn"][n], 10), f(row["lib_over_nn"], 7, 2),
        f(row["plain_vs_n1"], 5, 2), f(row["lib_vs_n1"], 5, 2), f(row["nn_vs_n1"], 5, 2)))
out["ior"] = {"table": table, "detail": {k: {str(n): d for n, d in v.items()}
                                         for k, v in m.items()}}

if part == "posix":
    hr = [int(x) for x in "$HPIO_RANKS".split()]
    regs = "$HPIO_REGIONS".split()
    print("hpio nc-nc: 8-byte regions, 128 B spacing, one MPI_File_write_all, "
          "median of %s, MiB/s of data" % out["reps"])
    print("   N | regions | plain MPICH | with library | lib/plain")
    ht = []
    for n in hr:
        for c in regs:
            p, l = med("hpio", "plain", n, c), med("hpio", "lib", n, c)
            row = {"ranks": n, "regions": c, "plain_mib_s": rate(p), "lib_mib_s": rate(l),
                   "lib_over_plain": div(rate(l), rate(p)), "plain": p, "lib": l}
            ht.append(row)
            print("  %2d | %7s | %11s | %12s | %9s" % (n, c, cell(p, 11), cell(l, 12),
                  f(row["lib_over_plain"], 9, 2)))
    out["hpio"] = ht
    verdict = {}
    for row in ht:
        if row["regions"] in ("1Mi", "1M", "1048576") and row["lib_over_plain"]:
            verdict["hpio_1Mi_N%d" % row["ranks"]] = {
                "target": 5.0, "measured": row["lib_over_plain"],
                "met": row["lib_over_plain"] >= 5.0}
    for k, v in verdict.items():
        print("  target %s: lib/plain >= %.0fx: %.2fx, %s" % (
            k, v["target"], v["measured"], "met" if v["met"] else "NOT met"))
    out["targets"] = verdict
else:
    hosts = "$HOSTS".split(",")
    bad = []
    for r in placement:	# part.R on its writer's node: rank R's, node R+1
        for p, h in r["parts"].items():
            import re
            mm = re.search(r"/part\.(\d+)$", p)
            if mm and h != hosts[int(mm.group(1)) % len(hosts)]:
                bad.append({"ranks": r["ranks"], "path": p, "host": h,
                            "wanted": hosts[int(mm.group(1)) % len(hosts)]})
    nparts = sum(1 for r in placement for p in r["parts"] if "/part." in p)
    print("  placement (gfwhere -r): %d parts checked, %s" % (
        nparts, "every part.R on its writer's node R+1" if not bad
        else "%d MISPLACED" % len(bad)))
    out["placement"] = {"parts_checked": nparts, "misplaced": bad, "raw": placement}
    probe = [r for r in recs if r.get("variant") == "probe"]
    if probe:
        last = (probe[0].get("err") or "").strip().splitlines()[-1:] or [""]
        print("  plain MPICH on gfarm:// (untimed probe): exit %d: %s" % (
            probe[0]["rc"], last[0]))
        out["plain_mpich_probe"] = probe[0]

vs = [d.get("verified") for d in (list(m["plain"].values()) + list(m["lib"].values())
      + list(m["nn"].values())) if d and d.get("verified") is not None]
if part == "posix":
    vs += [r[k]["verified"] for r in out["hpio"] for k in ("plain", "lib")
           if r[k] and r[k].get("verified") is not None]
lay_bad = [r for r in layouts if not r["check_ok"]]
print("  read back and compared (rep 1): %s; stat-layout --check of the library's "
      "outputs: %s" % ("all equal" if vs and all(vs) else ("none" if not vs else "DIFFERENT"),
                       "%d ok" % len(layouts) if layouts and not lay_bad else
                       ("none" if not layouts else "%d FAILED" % len(lay_bad))))
# the 1-min load average includes this bench's own ranks; the processes
# runnable at the instant before each run (none of ours) are other work
rq = [r["others_runnable"] for r in recs if r.get("others_runnable") is not None]
if rq:
    busy = sum(1 for x in rq if x > 0) / len(rq)
    print("  other work on the machine: something else runnable before %d%% of the runs%s"
          % (round(100 * busy), "; only the ratios within this run mean much"
             if busy >= 0.25 else ""))
    out["other_work"] = {"runs_with_others_runnable": busy,
                         "load1_median": statistics.median(r["load1"] for r in recs
                                                           if r.get("load1") is not None)}
nfail = sum(1 for r in recs if r.get("rc", 0) != 0 and r.get("variant") != "probe")
if nfail:
    print("  %d runs FAILED (cells marked FAILED or with '!'); errors are in the JSON" % nfail)
if not have_lib:
    print("  the library is not built ($LIB): only the plain columns were measured")
out.update(verified=None if not vs else all(vs), layout_checks=layouts, failed_runs=nfail)
json.dump(out, open(outf, "w"), indent=1)
print("mpiio: wrote %s" % outf)
EOF
}

# ---- gfarm: the emulated cluster (bench/lib.sh, tests/cluster.sh) ------------
# the checks of gfarm_scale.sh; prints the reason and fails when it cannot
# run; a rank count above K (one rank a node) is a usage error, exit 2
gfarm_can_run() {
	local probe why n
	why=$(cluster_check gfwhere) || { skip "gfarm: $why"; return 1; }
	[ -x "$N1" ] || { skip "gfarm: $N1 not built (make)"; return 1; }
	probe=$(timeout 30 mpiexec -n 1 "$N1" 2>&1)
	[ $? = 77 ] && { skip "gfarm: $probe"; return 1; }
	$HAVE_LIB || { skip "gfarm: the library is not built ($LIB)"; return 1; }
	for n in $RANKS; do	# one rank a node
		((n >= 1 && n <= K)) || {
			say "gfarm: $n ranks on $K nodes: every rank count must be 1..$K" \
				"(BENCH_MPIIO_GFARM_NODES)" >&2
			exit 2
		}
	done
}
gfarm_bench() {
	local rec F=gfarm:///bench/ior rep n v V s bytes per one
	gfarm_can_run || return 0
	# one at a time (the cluster's names are fixed; `up` removes what a run
	# killed with SIGKILL left); no daemon may inherit the lock (9<&-)
	exec 9<"$0"
	flock -n 9 || { skip "gfarm: another bench/mpiio.sh gfarm is running"; return 0; }
	trap 'cluster_teardown; rm -rf "$PWORK"' EXIT
	cluster_up
	# the work files where the nodes see them (their /tmp are their own),
	# also the ranks' working directory; gone at teardown
	WORK=$SHARED/mpiio
	CERR="$WORK/cmd.err"
	rec="$WORK/gfarm.jsonl"
	mkdir -p "$WORK" && : >"$rec" || cluster_die "cannot make $WORK"
	ON=(cnode 1)
	say "gfarm: cluster up: gfmd + $K nodes $(node_host 1)..$K ($HOSTS), a gfsd each;" \
		"disk $DISK per node (reads and writes), links ${RATE:-unshaped}"
	s=
	[ "$G_SYNC" = 1 ] && s=--sync
	per=$((G_SEGMENTS * $(size_bytes "$BLOCK")))
	# plain MPICH on a gfarm:// path: not a contender, shown once (untimed)
	# (in a subshell: its failure is the expected one, not counted)
	(cd "$WORK" && run_timed "$rec" ior probe 1 0 "" crun -n 1 -nodes 1 "$MB" ior "$F" \
		--segments 1 --block 1M --transfer 1M) 2>/dev/null
	say "gfarm: ior $G_SEGMENTS x $BLOCK per rank, ranks $RANKS (one a node)," \
		"$G_REPS reps, sync=$G_SYNC"
	for ((rep = 1; rep <= G_REPS; rep++)); do
		V=
		((rep == 1)) && V=--verify
		for n in $RANKS; do
			bytes=$((per * n))
			one=(-n "$n" -ppn 1 -nodes "$n")	# rank r on node r+1
			for v in $(order "$rep" n1 lib nn); do
				case $v in
				n1) run_timed "$rec" ior n1 "$n" "$rep" "" crun "${one[@]}" "$N1" --mode=n1 \
					--hosts="$(node_host 1)" $V "$bytes" /bench/n1 ;;
				nn) run_timed "$rec" ior nn "$n" "$rep" "" crun "${one[@]}" "$N1" --mode=nn \
					--hosts="$HOSTS" $V "$bytes" /bench/nn ;;
				lib) run_timed "$rec" ior lib "$n" "$rep" "" crun "${one[@]}" "${PRE[@]}" "$F" \
					"$MB" ior "$F" \
					--segments "$G_SEGMENTS" --block "$BLOCK" --transfer "$TRANSFER" $s $V &&
					((rep == 1)) && where_parts "$rec" /bench/ior "$n" \
						'{"part": "ior", "variant": "placement"}' &&
					check_layout "$rec" ior "$n" "$F"
					gclean /bench/ior ;;
				esac
			done
			printf '.'
		done
	done
	echo
	summarize gfarm "$rec" "$OUTDIR/mpiio_gfarm.json"
	say "gfarm: tearing down"
}

# ---- main ---------------------------------------------------------------------
[ -x "$MB" ] || { echo "mpiio: $MB not built (make)" >&2; exit 1; }
for c in mpiexec python3 timeout; do
	command -v $c >/dev/null 2>&1 || { skip "'$c' not found"; exit 0; }
done
if [ -n "${BENCH_MPIIO_DIR:-}" ]; then
	WORK=$BENCH_MPIIO_DIR
	rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
else
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/gfsplit-mpiio.XXXXXX") || exit 1
fi
PWORK=$WORK		# the POSIX work dir (gfarm's is in the cluster)
trap 'stop_child; rm -rf "$PWORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
$HAVE_LIB || say "$LIB not found: measuring the plain runs only"
for m in $MODES; do
	case $m in
	posix) posix_bench ;;
	gfarm) gfarm_bench ;;
	esac
done
((FAILED == 0)) || { say "$FAILED run(s) failed"; exit 1; }
exit 0

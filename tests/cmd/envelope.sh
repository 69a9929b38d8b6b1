#!/bin/bash
# envelope.sh - envelope-bench on POSIX:
#   - a short real measurement: one valid JSON document (python's parser)
#     with every point and sample, rates that agree with their samples,
#     CSV and the table, a well-formed SVG heat map, nothing left behind
#   - predict from that envelope: the prediction model's formulas recomputed here, in
#     python, from the points of the JSON (at a measured size, and between
#     two, where the time per operation is interpolated affinely)
#   - replay: measured against predicted, the error as stated
#   - page cache modes drop and direct
#   - bad input: unwritable target, a target that is a file, nonsense
#     sizes and fractions, options of another mode, an envelope missing a
#     metric or not JSON at all, a replay on the wrong number of ranks, a
#     rank failing in the middle (every rank exits 1, nothing left behind)
#   - crafted envelopes: rates huge, tiny, infinite, not a
#     number or negative refused naming the file, the point and the
#     member; one below a byte a second printed as itself, not "0 B/s";
#     files larger than any envelope (sparse, dense, a pipe) refused at
#     once in little memory; a sweep larger than a reader takes not
#     measured
. "$(dirname "$0")/../lib.sh"
EB=$BIN/envelope-bench
T=$TMPD/target
mkdir -p "$T"
J=$TMPD/env.json
small="--sizes 1K,64K --files 8 --reps 2 --warmup 1 --min-time 0"

# nothing of the benchmark's own is left in the target
target_empty() {
	_left=$(ls -A "$T")
	[ -z "$_left" ] && ok "$1" || not_ok "$1" "left in the target: $_left"
}

# 1. measure
if mpirun_n 2 "$EB" --json $small "$T" >"$J" 2>"$TMPD/err"; then
	ok "measure 2 ranks, sizes 1K and 64K, --json"
else
	not_ok "measure 2 ranks, --json" "$(cat "$TMPD/err")"
fi
check "the envelope is valid JSON (python -m json.tool)" \
	python3 -m json.tool "$J" /dev/null
json_true "format, backend posix, remote the same as local" \
	'j["format"] == "gfsplit-envelope" and j["format_version"] == 1 and j["target"]["backend"] == "posix" and j["target"]["remote_same_as_local"] is True'
json_true "procs 1,2 and sizes 1K,64K; the method as asked" \
	'j["procs"] == [1, 2] and j["sizes"] == [1024, 65536] and j["method"]["reps"] == 2 and j["method"]["warmup"] == 1 and j["method"]["cache"] == "keep"'
json_true "16 points: create, write, read-local, read-shared x 2 x 2 (no read-remote on POSIX)" \
	'sorted(set(p["metric"] for p in j["points"])) == ["create", "read-local", "read-shared", "write"] and len(j["points"]) == 16'
json_true "every point: 8 files a process, 2 samples, rates > 0" \
	'all(p["files"] == 8 and len(p["samples"]) == 2 and p["ops_per_s"]["median"] > 0 and p["ops_per_s"]["min"] <= p["ops_per_s"]["median"] <= p["ops_per_s"]["max"] for p in j["points"])'
json_true "each sample: ops = procs x files, bytes = ops x size (0 for create)" \
	'all(s["ops"] == p["procs"] * 8 and s["bytes"] == (0 if p["metric"] == "create" else s["ops"] * p["size"]) for p in j["points"] for s in p["samples"])'
json_true "median rates are the samples' (ops / seconds)" \
	'all(abs(p["ops_per_s"]["median"] - sorted(s["ops"] / s["seconds"] for s in p["samples"])[0] / 2 - sorted(s["ops"] / s["seconds"] for s in p["samples"])[1] / 2) <= 1e-6 * p["ops_per_s"]["median"] for p in j["points"])'
json_true "bandwidth = throughput x size for data metrics" \
	'all(abs(p["bytes_per_s"]["median"] - p["ops_per_s"]["median"] * p["size"]) <= 1e-6 * p["bytes_per_s"]["median"] for p in j["points"] if p["metric"] != "create")'
json_true "the machine is described" \
	'j["machine"]["ranks"] == 2 and j["machine"]["cores"] >= 1 and "mpi" in j["machine"]'
json_valid envelope-bench "$J"
json_invalid_without envelope-bench "$J" format_version
target_empty "the target is left as it was"

# CSV, table, heat map
if mpirun_n 2 "$EB" --csv --heatmap "$TMPD/h.svg" --heatmap-metric read-local-throughput \
    --progress=1 $small "$T" >"$TMPD/csv" 2>"$TMPD/err"; then
	ok "measure with --csv and --heatmap"
else
	not_ok "measure with --csv and --heatmap" "$(cat "$TMPD/err")"
fi
# progress in phases, not bytes: 2 procs x 2 sizes x 3 phases (write, read-local,
# read-shared; no read-remote on POSIX) x 3 repetitions (1 warm-up + 2)
grep -q "^envelope-bench: 36 / 36 phases  100%  in " "$TMPD/err" &&
	! grep -q "MiB\|KiB\|GiB" "$TMPD/err" &&
	ok "--progress counts phases: 36 / 36 at the end" ||
	not_ok "--progress counts phases: 36 / 36 at the end" "$(cat "$TMPD/err")"
python3 - "$TMPD/csv" >"$TMPD/out" 2>&1 <<'EOF' && ok "CSV: a header and 16 rows of numbers" || not_ok "CSV" "$(cat "$TMPD/out")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 16, len(rows)
for r in rows:
    assert int(r["procs"]) in (1, 2) and int(r["size"]) in (1024, 65536)
    assert float(r["ops_per_s_median"]) > 0
EOF
python3 - "$TMPD/h.svg" >"$TMPD/out" 2>&1 <<'EOF' && ok "the heat map is well-formed SVG: a cell per (procs, size)" || not_ok "heat map" "$(cat "$TMPD/out")"
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
assert "read-local" in text and "ops/s" in text, text
# where the reads came from: this run kept the page cache
assert "reads may come from the page cache, at memory speed (--cache keep)" in text, text
rects = list(root.iter("{http://www.w3.org/2000/svg}rect"))
assert len(rects) >= 4, len(rects)
EOF
expect_exit "measure, the table" 0 mpirun_n 2 "$EB" --hosts n1,n2 $small "$T"
output_has "the table names the metrics" "read-shared"
output_has "--hosts on a POSIX target: a warning, before the sweep" "warning: --hosts ignored: .* is POSIX storage"
output_has "the table says read-remote is read-local here" "read-remote"

# 2. predict: formulas (1)-(3), recomputed from the points
P=$TMPD/p.json
# procs at which a point is measured: p; sizes s; T(s) ops/s medians
cat >"$TMPD/model.py" <<'EOF'
import json, math, sys
env = json.load(open(sys.argv[1]))
pred = json.load(open(sys.argv[2]))
def T(metric, procs, D):
    pts = sorted((p["size"], p["ops_per_s"]["median"]) for p in env["points"]
                 if p["metric"] == metric and p["procs"] == procs)
    # time per operation affine in the size between the two around D
    for (s0, t0), (s1, t1) in zip(pts, pts[1:]):
        if s0 <= D <= s1:
            tau = 1 / t0 + (1 / t1 - 1 / t0) * (D - s0) / (s1 - s0)
            return 1 / tau
    raise SystemExit("size %d outside" % D)
sh = pred["shape"]
N, C, a = sh["tasks"], sh["nodes"], sh["local_fraction"]
rounds = math.ceil(N / C)
D = sh["output_size"]
write = rounds * (C / T("create", C, D) + C / T("write", C, D))
D1, DN = sh["input_size"], sh["shared_size"]
# on POSIX read-remote is read-local
read = rounds * (a * C / T("read-local", C, D1) + (1 - a) * C / T("read-local", C, D1)
                 + C / T("read-shared", C, DN))
for name, want, got in (("rounds", rounds, pred["rounds"]), ("write", write, pred["write_s"]),
                        ("read", read, pred["read_s"]), ("total", write + read, pred["total_s"])):
    if abs(want - got) > 1e-9 * max(abs(want), 1e-12):
        raise SystemExit("%s: formula gives %r, envelope-bench %r" % (name, want, got))
EOF
for d in 1K 20K 64K; do
	if mpirun_n 1 "$EB" predict --envelope "$J" --json --tasks 9 --nodes 2 \
	    --output-size $d --input-size $d --shared-input-size 1K \
	    --local-fraction 0.75 >"$P" 2>"$TMPD/err" &&
	    python3 "$TMPD/model.py" "$J" "$P" >"$TMPD/out" 2>&1; then
		ok "predict at $d = formulas (1)-(3) on the envelope's points"
	else
		not_ok "predict at $d" "$(cat "$TMPD/err" "$TMPD/out")"
	fi
done
json_true "9 tasks on 2 nodes: 5 rounds; terms create, write, read-local, read-remote, read-shared" \
	'j["rounds"] == 5 and [t["metric"] for t in j["terms"]] == ["create", "write", "read-local", "read-remote", "read-shared"]' "$P"
json_true "each term's bound is named" \
	'all(t["bound"] in ("metadata", "throughput", "bandwidth") for t in j["terms"]) and j["terms"][0]["bound"] == "metadata"' "$P"
json_valid envelope-bench-predict "$P"
expect_exit "predict a size past the envelope's" 0 "$EB" predict --envelope "$J" --tasks 9 --nodes 2 --output-size 1M
output_has "... marked extrapolated" "extrapolated"
expect_exit "predict the mprojectpp preset" 0 "$EB" predict --envelope "$J" --preset mprojectpp
output_has "... 955 tasks on 8 nodes" "955 tasks on 8 nodes"

# 3. replay
R=$TMPD/r.json
if mpirun_n 2 "$EB" replay --envelope "$J" --json --tasks 16 --nodes 2 \
    --output-size 32K --input-size 32K --shared-input-size 1K --reps 2 \
    "$T" >"$R" 2>"$TMPD/err"; then
	ok "replay 16 tasks on 2 ranks"
else
	not_ok "replay" "$(cat "$TMPD/err")"
fi
json_true "replay: 2 measured runs, their median, the prediction and the error" \
	'len(j["measured_seconds"]) == 2 and j["measured"]["median"] > 0 and abs(j["measured"]["median"] - sum(j["measured_seconds"]) / 2) < 1e-9 and abs(j["error"] - (j["predicted_s"] - j["measured"]["median"]) / j["measured"]["median"]) < 1e-9 and j["predicted_s"] == j["prediction"]["total_s"]' "$R"
json_valid envelope-bench-replay "$R"
target_empty "the replay leaves the target as it was"

# 4. page cache modes
check "--cache drop on POSIX (each file evicted, no root needed)" \
	mpirun_n 2 "$EB" --cache drop --metrics read-local,read-shared --procs 2 $small "$T"
if mpirun_n 1 "$EB" --cache direct --metrics read-local --procs 1 $small "$T" >"$TMPD/out" 2>&1; then
	ok "--cache direct (O_DIRECT reads)"
elif grep -q "Invalid argument" "$TMPD/out"; then
	skip "--cache direct" "the file system of $TMPD has no O_DIRECT"
else
	not_ok "--cache direct" "$(cat "$TMPD/out")"
fi
target_empty "nothing left after the cache modes"

# 5. bad input
expect_exit "a target that does not exist: exit 1" 1 mpirun_n 2 "$EB" $small "$TMPD/nope"
output_has "... naming it" "nope"
: >"$TMPD/afile"
expect_exit "a target that is a file: exit 1" 1 mpirun_n 2 "$EB" $small "$TMPD/afile"
output_has "... saying so" "not a directory"
if can_run_as_nobody; then
	mkdir -p "$TMPD/ro" && chmod 755 "$TMPD/ro" "$TMPD"
	expect_exit "an unwritable target: exit 1" 1 as_nobody "$MPIEXEC" -n 2 "$EB" $small "$TMPD/ro"
	output_has "... Permission denied, naming it" "ro/.envelope-bench"
else
	skip "an unwritable target" "needs root and setpriv to run as nobody"
fi
expect_exit "--sizes 0: usage error" 2 mpirun_n 1 "$EB" --sizes 0 "$T"
expect_exit "--sizes abc: usage error" 2 mpirun_n 1 "$EB" --sizes 4K,abc "$T"
output_has "... naming it" "abc"
expect_exit "--procs above the ranks: usage error" 2 mpirun_n 1 "$EB" --procs 1,4 "$T"
expect_exit "--local-fraction 1.5: usage error" 2 "$EB" predict --envelope "$J" --tasks 4 --nodes 2 --output-size 1K --local-fraction 1.5
expect_exit "--output-size -5: usage error" 2 "$EB" predict --envelope "$J" --tasks 4 --nodes 2 --output-size -5
expect_exit "predict without --envelope: usage error" 2 "$EB" predict --tasks 4 --nodes 2 --output-size 1K
expect_exit "predict with --sizes (measuring's): usage error" 2 "$EB" predict --envelope "$J" --sizes 1K --tasks 4 --nodes 2 --output-size 1K
expect_exit "measuring with --tasks (predict's): usage error" 2 mpirun_n 1 "$EB" --tasks 4 "$T"
python3 - "$J" "$TMPD/nowrite.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
j["points"] = [p for p in j["points"] if p["metric"] != "write"]
json.dump(j, open(sys.argv[2], "w"))
EOF
expect_exit "an envelope without write points: exit 1" 1 "$EB" predict --envelope "$TMPD/nowrite.json" --tasks 4 --nodes 2 --output-size 1K
output_has "... naming the file and the metric" "nowrite.json.*write|write.*nowrite.json"
check "... reads still predict from it" "$EB" predict --envelope "$TMPD/nowrite.json" --tasks 4 --nodes 2 --input-size 1K
python3 - "$J" "$TMPD/nomedian.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
del j["points"][3]["ops_per_s"]["median"]
json.dump(j, open(sys.argv[2], "w"))
EOF
expect_exit "a point missing its median: exit 1" 1 "$EB" predict --envelope "$TMPD/nomedian.json" --tasks 4 --nodes 2 --output-size 1K
output_has "... naming the file and the point" "nomedian.json.*median"
head -c 300 "$J" >"$TMPD/cut.json"
expect_exit "a truncated envelope: exit 1" 1 "$EB" predict --envelope "$TMPD/cut.json" --tasks 4 --nodes 2 --output-size 1K
output_has "... naming it" "cut.json"
expect_exit "replay of a 2-node stage on 1 rank: exit 1" 1 mpirun_n 1 "$EB" replay --envelope "$J" --tasks 4 --nodes 2 --output-size 1K "$T"
output_has "... saying how to run it" "mpiexec -n 2"

# crafted envelopes: the write bandwidth replaced, as text
craft() {
	python3 - "$J" "$TMPD/$1.json" "$2" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
for p in j["points"]:
    if p["metric"] == "write":
        p["bytes_per_s"] = {"min": 12345.5, "median": 12345.5, "max": 12345.5}
open(sys.argv[2], "w").write(json.dumps(j).replace("12345.5", sys.argv[3]))
EOF
}
stage="--tasks 4 --nodes 2 --output-size 1K"
for c in "huge 1e300 is 1e\+300: a rate is 0 or within \[1e-06, 1e\+18\]" \
	 "tiny 1e-300 is 1e-300: a rate is 0 or within" \
	 "inf 1e400 is not finite" "nan NaN is not finite" \
	 "negative -4096 is negative"; do
	set -- $c
	n=$1 v=$2
	shift 2
	craft "$n" "$v"
	expect_exit "an envelope with a write bandwidth of $v: exit 1" 1 "$EB" predict --envelope "$TMPD/$n.json" $stage
	output_has "... naming the file, the point and the member" "'.*/$n.json': point [0-9]+ \(write, [12] procs, [0-9]+ bytes\): bytes_per_s.min $*"
done
craft below 0.5
expect_exit "an envelope with a write bandwidth of 0.5 B/s: predicted" 0 "$EB" predict --envelope "$TMPD/below.json" $stage
output_has "... printed as 0.5 B/s" "^write .* 0\.5 B/s "
output_lacks "... never as 0 B/s" " 0 B/s"

# larger than any envelope (a crafted 206 MB one took 3.3 GB and 30 s
# before it was refused): refused unread, in well under a second and
# some megabytes, whether its size is known (a sparse file of 8 GiB, a
# dense one of 40 MB) or not (a pipe)
truncate -s 8G "$TMPD/sparse.json"
python3 - "$J" "$TMPD/dense.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
one = j["points"][0]
j["points"] = [dict(one, size=one["size"] + i) for i in range(40 * 1000 * 1000 // len(json.dumps(one)))]
del j["sizes"]
json.dump(j, open(sys.argv[2], "w"))
EOF
for f in sparse dense; do
	if [ -x /usr/bin/time ]; then
		expect_exit "a $f envelope of $(du -h --apparent-size "$TMPD/$f.json" | cut -f1): exit 1" 1 \
			/usr/bin/time -f "peak %M KiB, %e s" -o "$TMPD/time" "$EB" predict --envelope "$TMPD/$f.json" $stage
		output_has "... refused unread, naming it" "'.*/$f.json' is larger than an envelope can be \(32.00 MiB at most\): refused unread"
		# the last line (the first says the command exited 1); an
		# ASan build maps more of its own
		t=$(tail -n 1 "$TMPD/time")
		read -r _ kib _ secs _ <<<"$t"
		[ "$kib" -lt 200000 ] && [ "${secs%.*}" -lt 2 ] &&
			ok "... at once and in little memory: $t" ||
			not_ok "... at once and in little memory" "$t"
	else
		skip "a $f envelope refused at once in little memory" "no /usr/bin/time"
	fi
done
expect_exit "40 MB of envelope through a pipe: exit 1" 1 \
	bash -c '"$1" predict --envelope <(cat "$2") $3' - "$EB" "$TMPD/dense.json" "$stage"
output_has "... refused once 32 MiB were read" "is larger than an envelope can be \(32.00 MiB at most\): refused once that much was read"
rm -f "$TMPD/sparse.json" "$TMPD/dense.json"
expect_exit "measuring 257 sizes (a reader takes 256): usage error" 2 mpirun_n 1 "$EB" --sizes "$(seq -s, 1 257)" "$T"
output_has "... saying so" "--sizes: 257 sizes, an envelope holds 256 at most"
expect_exit "measuring 10001 repetitions (a reader takes 10000): usage error" 2 mpirun_n 1 "$EB" --reps 10001 "$T"
output_has "... saying so" "--reps 10001: an envelope holds 10000 samples a point at most"
target_empty "... and the target is left as it was"

# a rank failing in the middle: every rank exits 1 (none hangs), nothing stays
faulty() { GFSPLIT_FAULT=pwrite:1:200K mpirun_n "$@"; }
expect_exit "rank 1's writes fail mid-measurement: exit 1" 1 faulty 2 "$EB" $small "$T"
output_has "... naming the file" "envelope-bench.m"
target_empty "... and the target is left as it was"
finish

#!/bin/bash
# stage_gfarm.sh - stage-out to and stage-in from a real Gfarm (gfmd + one
# gfsd, so that every file's one copy is on a known node):
#   - a tree staged out arrives whole (bytes through gfexport; modes and
#     nanosecond times through a stage-in back to POSIX), and stages in
#     again to two emulated nodes, read from Gfarm once
#   - compressed on Gfarm, decompressed on the way in
#   - the gfsd stopped in the middle of a stage-out: a clear error naming
#     the file, nothing under its final name; with the gfsd back, the same
#     command resumes from the journal and finishes
. "$(dirname "$0")/../lib.sh"
need_gfarm
gfarm_up 1 || { finish; exit 1; }
gfmkdir /t || not_ok "gfmkdir /t"
IN=$BIN/stage-in
OUT_=$BIN/stage-out
J=$TMPD/last.json


S=$TMPD/res
mkdir -p "$S/sub"
make_file "$S/big" $((20 * 1048576 + 99)) 1
make_file "$S/sub/small" 4000 2
: >"$S/empty"
ln -s sub/small "$S/link"
chmod 0640 "$S/sub/small"
touch -d '2022-02-02 02:02:02.222222222' "$S/big" "$S/sub/small"

# 1. out, then back
if GFSPLIT_NODE=n0 mpirun_n 2 "$OUT_" --json --chunk-size=1M "$S" gfarm:///t/out >"$J" 2>"$TMPD/err"; then
	ok "stage-out of a tree to gfarm:///t/out (2 ranks)"
else
	not_ok "stage-out of a tree to gfarm:///t/out (2 ranks)" "$(tail -n 8 "$TMPD/err" "$J")"
fi
gfexport /t/out/n0/big >"$TMPD/big.gf" 2>&1
same_bytes "  the big file on Gfarm (gfexport)" "$S/big" "$TMPD/big.gf"
gfexport /t/out/n0/sub/small >"$TMPD/small.gf" 2>&1
same_bytes "  the small file on Gfarm (gfexport)" "$S/sub/small" "$TMPD/small.gf"
[ -z "$(gfls -a /t/out/n0 2>&1 | grep gfsplit-stage)" ] && ok "  no temporary file left on Gfarm" ||
	not_ok "  no temporary file left on Gfarm" "$(gfls -a /t/out/n0)"
if two_nodes 1 "$IN" --json --chunk-size=1M gfarm:///t/out/n0/ "$TMPD/back/%h" >"$J" 2>"$TMPD/err"; then
	ok "stage-in of it to 2 emulated nodes"
else
	not_ok "stage-in of it to 2 emulated nodes" "$(tail -n 8 "$TMPD/err" "$J")"
fi
json_true "  Gfarm read once, forwarded to the other node" \
	'j["bytes_read"] == j["planned_bytes"] == j["bytes_forwarded"] and j["failed"] == 0'
for n in nA nB; do
	same_bytes "  node $n: the big file" "$S/big" "$TMPD/back/$n/big"
done
a=$(stat -c '%a %y' "$S/sub/small") b=$(stat -c '%a %y' "$TMPD/back/nA/sub/small")
[ "$a" = "$b" ] && ok "  mode and time to the nanosecond survive the round trip ($b)" ||
	not_ok "  mode and time survive the round trip" "$a" "$b"
[ "$(readlink "$TMPD/back/nB/link")" = sub/small ] && ok "  the symbolic link survives" ||
	not_ok "  the symbolic link survives" "$(ls -l "$TMPD/back/nB")"
[ -f "$TMPD/back/nA/empty" ] && [ ! -s "$TMPD/back/nA/empty" ] && ok "  the empty file survives" ||
	not_ok "  the empty file survives"
if two_nodes 1 "$IN" --json gfarm:///t/out/n0/ "$TMPD/back/%h" >"$J" 2>"$TMPD/err"; then
	json_true "a second stage-in from Gfarm copies nothing" 'j["files"] == 0 and j["bytes_read"] == 0'
else
	not_ok "a second stage-in from Gfarm copies nothing" "$(tail -n 8 "$TMPD/err")"
fi

# 2. compressed on Gfarm
python3 -c '
import math, struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"".join(struct.pack("<f", math.sin(i * 1e-3)) for i in range(1000000)))
' "$TMPD/smooth"
GFSPLIT_NODE=n0 check "stage-out --compress to Gfarm" mpirun_n 1 "$OUT_" -z "$TMPD/smooth" gfarm:///t/z
zs=$(gfls -l /t/z/n0/smooth 2>/dev/null | awk '{print $5}')
[ -n "$zs" ] && [ "$zs" -lt 4000000 ] && ok "  stored smaller on Gfarm ($zs of 4000000 bytes)" ||
	not_ok "  stored smaller on Gfarm" "$(gfls -l /t/z/n0 2>&1)"
check "stage-in decompresses it from Gfarm" mpirun_n 1 "$IN" gfarm:///t/z/n0/smooth "$TMPD/zb"
same_bytes "  the original bytes" "$TMPD/smooth" "$TMPD/zb/smooth"

# 3. the gfsd stopped mid-transfer, then back: resume
mkdir -p "$TMPD/r"
make_file "$TMPD/r/big" $((24 * 1048576)) 3
pid=$(cat "$GFARM_BASE/run/gfsd0.pid")
mapfile -d '' gfsd_cmd <"/proc/$pid/cmdline"
GFSPLIT_NODE=n0 mpirun_n 1 "$OUT_" --json --bwlimit 4M --chunk-size=1M "$TMPD/r" gfarm:///t/r \
	>"$J" 2>"$TMPD/err" &
bg=$!
sleep 2.5
# the gfsd our connection is served by (a child of the listening one), and
# the listening one: as if the node crashed
kids=$(pgrep -P "$pid")
kill -KILL $kids "$pid" 2>/dev/null
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
wait "$bg"
rc=$?
[ "$rc" -eq 1 ] && ok "stage-out with the gfsd stopped mid-file exits 1" ||
	not_ok "stage-out with the gfsd stopped mid-file exits 1" "exit $rc" "$(tail -n 5 "$TMPD/err")"
json_true "  the error names the file (JSON failures)" \
	'len(j["failures"]) == 1 and "big" in j["failures"][0]["error"]'
echo "# $(json_get "$J" 'j["failures"][0]["error"]' 2>&1)"
"${gfsd_cmd[@]}" && sleep 1
for _ in $(seq 50); do gfhost -l 2>/dev/null | grep -q '^[0-9.]*/[0-9.]*/[0-9.]* [sgG]' && break; sleep 0.2; done
if gfls /t/r/n0/big >/dev/null 2>&1; then not_ok "  nothing under the final name"
else ok "  nothing under the final name"; fi
if GFSPLIT_NODE=n0 mpirun_n 1 "$OUT_" --json --chunk-size=1M "$TMPD/r" gfarm:///t/r >"$J" 2>"$TMPD/err"; then
	ok "with the gfsd back, the same stage-out finishes"
else
	not_ok "with the gfsd back, the same stage-out finishes" "$(tail -n 8 "$TMPD/err" "$J")"
fi
json_true "  resuming from the journal (chunks not recopied)" \
	'j["bytes_resumed"] > 0 and j["bytes_read"] + j["bytes_resumed"] == 24 * 1048576'
gfexport /t/r/n0/big >"$TMPD/r.gf" 2>&1
same_bytes "  and the file on Gfarm is whole" "$TMPD/r/big" "$TMPD/r.gf"
finish

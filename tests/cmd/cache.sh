#!/bin/bash
# cache.sh - the cooperative cache (libcore/cache/cache.c) under real mpiexec,
# through tests/mpi/mpi_cache: every byte read through the cache is
# compared with the file by the program itself, and the summed statistics
# it prints as JSON are checked here: under concentrated access (every rank
# reads the whole file at once, each rank's cache large enough) each block
# is read from storage at most once per group, the rest is copied from
# peers; random and strided reads stay correct when the working set is
# larger than one rank's cache (evictions happen); a block replaced during
# a remote copy is caught by the token check and read again; the same on a
# file in Gfarm.
. "$(dirname "$0")/../lib.sh"

PROG=$UNIT/mpi_cache
if [ ! -x "$PROG" ]; then
	not_ok "mpi_cache is built" "missing: $PROG (make)"
	finish
	exit 1
fi
F=$TMPD/data
make_file "$F" $((40 * 65536 + 1234)) 5	# 41 blocks of 64 KiB, a short last one

# run DESC N ARGS..: mpi_cache on N ranks must exit 0 (every byte right);
# its JSON line goes to $TMPD/j.json
run() {
	_d=$1 _n=$2; shift 2
	if mpirun_n "$_n" "$PROG" "$@" >"$TMPD/j.out" 2>"$TMPD/j.err" &&
	    grep '^{' "$TMPD/j.out" | tail -n 1 >"$TMPD/j.json" &&
	    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMPD/j.json" 2>/dev/null; then
		ok "$_d"
	else
		not_ok "$_d" "command: mpi_cache $*" "$(tail -n 8 "$TMPD/j.err" "$TMPD/j.out")"
		return 1
	fi
}
# expect DESC PYEXPR: PYEXPR over j (the JSON of the last run) is true
expect() {
	if python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); t = j["total"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$TMPD/j.json" "$2" 2>"$TMPD/j.py"; then ok "$1"
	else not_ok "$1" "$2" "$(cat "$TMPD/j.json")" "$(tail -n 3 "$TMPD/j.py")"; fi
}

B=(--block 64K)
run "1 rank reads the file in order through a 16-block cache" 1 seq "$F" "${B[@]}" --cache 1M &&
	expect "1 rank: every block from storage once, evictions under pressure" \
		't["storage_reads"] == 41 and t["evict_general"] + t["evict_singlet"] >= 25 and t["bytes"] == j["file_size"]'

for spec in "4 1" "4 2" "8 4" "3 3"; do
	read -r n g <<<"$spec"
	if run "$n ranks, G=$g: all read the whole file at once (concentrated)" "$n" seq "$F" "${B[@]}" \
		--cache 4M --groups "$g"; then
		expect "$n ranks, G=$g: at most $g storage reads of any block" \
			"t['max_storage_reads_per_block'] <= $g and t['max_storage_reads_per_block'] >= 1"
		expect "$n ranks, G=$g: storage bytes at most $g x the file, the rest from peers" \
			"t['storage_bytes_read'] <= $g * j['file_size'] and t['peer_bytes'] + t['peer_piece_bytes'] + t['storage_bytes_read'] == $n * j['file_size'] and t['peer_bytes'] + t['peer_piece_bytes'] >= ($n - $g) * j['file_size']"
		# on one machine (shm) a block a peer holds is read from its slot,
		# the bytes asked for, not copied whole into the reader's own
		# (with G > 1 a group's representative still copies it whole)
		[ "$g" = 1 ] && expect "$n ranks, G=1: pieces straight from the peers' slots, no whole-block copies" \
			"j['transport'] != 'shm' or (t['peer_copies'] == 0 and t['peer_pieces'] > 0)"
	fi
done

run "4 ranks read 60 random 64 KiB pieces each through 16-block caches" 4 random "$F" "${B[@]}" \
	--cache 1M --reads 60 --groups 2 &&
	expect "random: working set above one cache: evictions, peer copies" \
		't["evict_general"] + t["evict_singlet"] > 0 and t["peer_copies"] + t["peer_pieces"] > 0 and t["reads"] == 240'
run "2 ranks, random 100000-byte pieces (across block edges), singlet ratio 0.9" 2 random "$F" "${B[@]}" \
	--cache 1M --reads 100 --size 100000 --ratio 0.9 &&
	expect "singlet ratio 0.9: LRU victims held by no one else kept as singlets" 't["to_singlet"] > 0'
run "4 ranks read strided 64 KiB pieces, 2 passes, G=4" 4 strided "$F" "${B[@]}" --cache 1M \
	--size 64K --passes 2 --groups 4 &&
	expect "strided: own hits on later passes" 't["hits"] > 0'
run "singlet ratio 0: plain LRU" 2 random "$F" "${B[@]}" --cache 512K --reads 100 --ratio 0 &&
	expect "ratio 0: no singlet FIFO" 't["to_singlet"] == 0 and t["evict_singlet"] == 0'

cp "$F" "$TMPD/changing"
run "a file rewritten in place (same size, same second) after it was cached, 4 ranks" 4 changed \
	"$TMPD/changing" "${B[@]}" --cache 4M --groups 2 &&
	expect "the rewritten file is another file: read from storage again, never stale" \
		't["storage_reads"] >= 2 * 41 and t["hits"] == 0'
run "a block replaced during a remote copy (2 ranks)" 2 replace "$F" "${B[@]}" --cache 1M &&
	expect "the token check caught it and the block was fetched again" \
		't["retries"] >= 1 and t["storage_reads"] + t["peer_pieces"] >= 2'
run "the same with 4 ranks and 2 groups" 4 replace "$F" "${B[@]}" --cache 1M --groups 2 &&
	expect "4 ranks: the token check caught it" 't["retries"] >= 1'

# the runs above took "auto": shm, all ranks being on this machine; MPI RMA
# (what runs across nodes) does the same
if run "mpi transport: 4 ranks, G=2, concentrated" 4 seq "$F" "${B[@]}" --cache 4M --groups 2 \
	--transport mpi; then
	expect "mpi transport: it was used, at most 2 storage reads of any block" \
		"j['transport'] == 'mpi' and t['max_storage_reads_per_block'] <= 2 and t['peer_copies'] >= 2 * 41"
fi
run "mpi transport: random pieces under pressure, 4 ranks" 4 random "$F" "${B[@]}" --cache 1M \
	--reads 40 --groups 2 --transport mpi
run "mpi transport: a block replaced during a remote copy" 2 replace "$F" "${B[@]}" --cache 1M \
	--transport mpi && expect "mpi transport: the token check caught it" 't["retries"] >= 1'

# bad options: an error on every rank, no hang
expect_exit "more groups than ranks: exit 1" 1 mpirun_n 2 "$PROG" seq "$F" --groups 3
output_has "it says why" "3 groups on 2 ranks"

# ---- Gfarm as the shared storage (last: need_gfarm ends the script without one)
need_gfarm
gfarm_up 2 || { finish; exit 1; }
gfmkdir /cache && gfreg "$F" /cache/data || not_ok "gfreg the data file" "$(gfls -l /cache 2>&1)"
if run "Gfarm: 4 ranks, G=2, all read gfarm:///cache/data at once" 4 seq gfarm:///cache/data \
	"${B[@]}" --cache 4M --groups 2; then
	expect "Gfarm: at most 2 storage reads of any block, the rest from peers" \
		"t['max_storage_reads_per_block'] <= 2 and t['storage_bytes_read'] <= 2 * j['file_size'] and t['peer_bytes'] + t['peer_piece_bytes'] >= 2 * j['file_size']"
fi
run "Gfarm: 3 ranks, random pieces under pressure" 3 random gfarm:///cache/data "${B[@]}" \
	--cache 1M --reads 40
# ---- tcp: strangers get nothing
if run "tcp transport: 4 ranks, G=2, concentrated" 4 seq "$F" "${B[@]}" --cache 4M --groups 2 \
	--transport tcp; then
	expect "tcp transport: it was used, at most 2 storage reads of any block" \
		"j['transport'] == 'tcp' and t['max_storage_reads_per_block'] <= 2 and t['peer_copies'] >= 2 * 41"
fi
if command -v ss >/dev/null 2>&1; then
	# the ranks listen on ports of GFSPLIT_CACHE_TCP_PORTS only
	GFSPLIT_CACHE_TCP_PORTS=47310-47319 mpirun_n 2 "$PROG" busy "$F" "${B[@]}" --cache 4M \
		--busy 4 --transport tcp >"$TMPD/busy.out" 2>"$TMPD/busy.err" &
	bp=$!
	if python3 - "$TMPD/strangers" <<'EOF'
import re, socket, struct, subprocess, sys, time
ports = []
for _ in range(40):	# the ranks' listening ports, once the windows exist
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
    ports = [(m.group(1), int(m.group(2))) for l in out.splitlines() if "mpi_cache" in l
             for m in [re.search(r"\s(\d+\.\d+\.\d+\.\d+):(473[01]\d)\s", l)] if m]
    if len(ports) >= 2:
        break
    time.sleep(0.1)
assert len(ports) >= 2, "no listening ports of the ranks: " + out
get = struct.pack("=IIQQQQ", 1, 0, 0, 4096, 0, 0)	# a request to read 4 KiB
bad = struct.pack("=QQQ", 0x67667370746370, 1234, 5678)	# the magic, a wrong secret
got = []
for p in ports:
    for first in (get, bad + get):
        s = socket.create_connection(p, timeout=10)
        s.sendall(first)
        data = b""
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
        except (ConnectionResetError, socket.timeout):
            pass
        got.append(len(data))
        s.close()
open(sys.argv[1], "w").write("%d ports, bytes answered %s\n" % (len(ports), got))
assert not any(got), got
EOF
	then ok "tcp transport: strangers on the ranks' ports (no secret, a wrong one) get no byte: $(cat "$TMPD/strangers")"
	else not_ok "tcp transport: strangers on the ranks' ports get no byte" "$(cat "$TMPD/strangers" 2>&1)"; fi
	wait $bp && ok "  the job goes on and ends well" || not_ok "  the job goes on and ends well" "$(tail -n 5 "$TMPD/busy.err")"
else
	skip "tcp transport: strangers" "no ss (iproute2)"
fi
finish

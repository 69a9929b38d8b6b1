#!/bin/bash
# race_cache.sh - root's MPI program under libgfsplit-cache.so, reading a
# file of a second user's from her directory:
#   - the program is careful: it opens her file without following a link
#     and checks on its descriptor that it is hers.  Each time it opens
#     it (inotify IN_OPEN tells her), she exchanges her file with a link
#     to a root-only file of the same size (renameat2 RENAME_EXCHANGE),
#     then puts it back.  RACE_ITERS opens a rank: every read of the
#     program gives her bytes, never root's (the cache reads the
#     program's own file, /proc/self/fd/N, not her name again)
#   - GFSPLIT_CACHE_STATS names a file she made (0666) in a directory
#     open to all: root's statistics are not written into it, and the
#     job says why; a file of root's own at that name is written
. "$(dirname "$0")/../lib.sh"

PROG=$UNIT/mpi_readapp
LIB=${CACHE_LIB:-$TOP/lib/libgfsplit-cache.so}
unset GFSPLIT_CACHE_FILES GFSPLIT_CACHE_SIZE GFSPLIT_CACHE_BLOCK GFSPLIT_CACHE_GROUPS \
	GFSPLIT_CACHE_RATIO GFSPLIT_CACHE_TRANSPORT GFSPLIT_CACHE_STATS GFSPLIT_VERBOSE
if [ ! -x "$PROG" ] || [ ! -f "$LIB" ]; then
	not_ok "mpi_readapp and the cache preload are built" "missing: $PROG or $LIB (make)"
	finish
	exit 1
fi
preload_of "$LIB"
her_dir "the cache preload raced by a second user"
MUID=$(id -u "$M")

R=$TMPD/root		# root's: she cannot enter it
mkdir -m 700 "$R"
make_file "$R/secret" 300000 9
chmod 600 "$R/secret"
make_file "$MD/f" 300000 3
as_m ln -s "$R/secret" "$MD/l"
chown "$M:$M" "$MD/f"
HERS=$(fnv "$MD/f")
ROOTS=$(fnv "$R/secret")

# her watcher: on each open of f, f and l exchanged, and back 50 ms later
STOP=$TMPD/stop
as_m /usr/bin/python3 - "$MD" "$STOP" <<'EOF' &
import ctypes, os, select, struct, sys, time
d, stop = sys.argv[1:3]
libc = ctypes.CDLL(None, use_errno=True)
IN_OPEN, RENAME_EXCHANGE, AT_FDCWD = 0x20, 2, -100
fd = libc.inotify_init1(os.O_NONBLOCK)
libc.inotify_add_watch(fd, d.encode(), IN_OPEN)
def exchange():
    libc.renameat2(AT_FDCWD, (d + "/f").encode(), AT_FDCWD, (d + "/l").encode(), RENAME_EXCHANGE)
def drain():
    try:
        while os.read(fd, 65536):
            pass
    except BlockingIOError:
        pass
end = time.time() + 600
while time.time() < end and not os.path.exists(stop):
    r, _, _ = select.select([fd], [], [], 0.2)
    if not r:
        continue
    buf = os.read(fd, 65536)
    names = []
    while buf:
        wd, mask, cookie, ln = struct.unpack("iIII", buf[:16])
        names.append(buf[16:16 + ln].rstrip(b"\0"))
        buf = buf[16 + ln:]
    if b"f" in names:
        exchange()
        time.sleep(0.05)
        exchange()
        time.sleep(0.01)
        drain()
EOF
HER=$!
sleep 0.5
mpirun_n 2 env LD_PRELOAD="$PRE" GFSPLIT_CACHE_FILES="$MD/*" GFSPLIT_CACHE_SIZE=4M \
	GFSPLIT_CACHE_BLOCK=64K "$PROG" careful "$MD/f" "$MUID" "$RACE_ITERS" >"$TMPD/out" 2>"$TMPD/err"
rc=$?
touch "$STOP"
wait "$HER"
reads=$(grep -c " fnv " "$TMPD/out")
leaked=$(grep -c " fnv $ROOTS" "$TMPD/out")
other=$(grep " fnv " "$TMPD/out" | grep -vc " fnv $HERS")
if [ "$rc" -eq 0 ] && [ "$reads" -gt 0 ] && [ "$other" -eq 0 ]; then
	ok "$reads careful opens while she exchanges her file with a link to root's at each: every read her bytes ($(grep -c refused "$TMPD/out") refused by the program)"
else
	not_ok "careful opens while she exchanges her file with a link to root's at each: every read her bytes" \
		"exit $rc; $leaked of $reads reads gave root's file's bytes, $other not hers" "$(tail -n 3 "$TMPD/err")"
fi
grep -q "read through the cache\|read directly" "$TMPD/err" &&
	not_ok "  the preload said nothing of her file" "$(grep gfsplit-cache "$TMPD/err" | head -n 3)" ||
	ok "  the preload read it through the cache, saying nothing"

# ---- the statistics file
P=$TMPD/pub		# open to all, sticky, as /tmp is
mkdir -m 1777 "$P"
as_m sh -c "umask 0; : >'$P/stats.json'"
mpirun_n 2 env LD_PRELOAD="$PRE" GFSPLIT_CACHE_FILES="$MD/*" GFSPLIT_CACHE_STATS="$P/stats.json" \
	"$PROG" read "$MD/f" >"$TMPD/out" 2>"$TMPD/err"
if [ ! -s "$P/stats.json" ] && [ "$(stat -c %U "$P/stats.json")" = "$M" ]; then
	ok "GFSPLIT_CACHE_STATS naming a file she made: nothing written into it"
else
	not_ok "GFSPLIT_CACHE_STATS naming a file she made: nothing written into it" "$(ls -l "$P/stats.json"; head -c 200 "$P/stats.json")"
fi
grep -q "cannot write the statistics to '$P/stats.json': .*not a regular file of this user's" "$TMPD/err" &&
	ok "  the job says why, naming it" || not_ok "  the job says why, naming it" "$(cat "$TMPD/err")"
rm -f "$P/stats.json"
mpirun_n 2 env LD_PRELOAD="$PRE" GFSPLIT_CACHE_FILES="$MD/*" GFSPLIT_CACHE_STATS="$P/stats.json" \
	"$PROG" read "$MD/f" >"$TMPD/out" 2>"$TMPD/err"
python3 -c 'import json,sys; j = json.load(open(sys.argv[1])); sys.exit(j["nprocs"] != 2)' "$P/stats.json" 2>/dev/null &&
	ok "  a new file at that name gets root's statistics" ||
	not_ok "  a new file at that name gets root's statistics" "$(head -c 300 "$P/stats.json")" "$(cat "$TMPD/err")"
[ "$(stat -c '%U %a' "$P/stats.json")" = "root 600" ] && ok "  made 0600, root's" ||
	not_ok "  made 0600, root's" "$(ls -l "$P/stats.json")"
finish

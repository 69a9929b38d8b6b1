#!/bin/bash
# race_fifo.sh - a second user's FIFOs against root's commands and root's
# gfsplit-mount: a file that was a regular file when it was
# listed or looked up is a FIFO when it is opened.  Nothing may block on
# it: every open of a name a user controls does not block and refuses
# what is not a regular file, and what was opened once is used from its
# descriptor (a split file's parts, held from its open).
#   - gfsplit-mount -o allow_other --threads 2 over her directory: she
#     opens her split file through the mount, puts a FIFO in place of
#     part.0 in the source and calls lseek(SEEK_DATA) from three
#     processes, then swaps a plain file for a FIFO between its lookup and
#     its open; root's reads through the mount go on answering, and her
#     calls return
#   - root's stage-in of her tree, the FIFO swapped in after the listing
#     (GFSPLIT_TEST_HOOK): it ends with status 1, naming the file, and
#     stages the rest; the same for stage-out
#   - root's stage-ins, RACE_ITERS of them, while she swaps a large file
#     with a FIFO in a loop: each run ends by itself
. "$(dirname "$0")/../lib.sh"

her_dir "FIFOs of a second user against root"
# a bound no run of these comes near (seconds), however loaded the machine:
# what is checked is that nothing waits on a FIFO, which is for ever
BOUND=$((TEST_TIMEOUT / 2))
# gone PID SECONDS: PID has ended, polled up to SECONDS
gone() {
	_n=$(($2 * 10))
	while [ "$_n" -gt 0 ] && kill -0 "$1" 2>/dev/null; do sleep 0.1; _n=$((_n - 1)); done
	! kill -0 "$1" 2>/dev/null
}

# ---- stage-in and stage-out: a FIFO swapped in after the listing
S=$MD/in
mkdir -p "$S/sub"
make_file "$S/big" 3000000 6
make_file "$S/sub/small" 5000 7
chown -R "$M:$M" "$S"
D=$TMPD/dest
# swapped PHASE CMD...: CMD (a stage command) with her big file made a
# FIFO as PHASE begins (the hook runs as root: when, not who, matters)
swapped() {
	_p=$1; shift
	GFSPLIT_TEST_HOOK="$_p:mv '$S/big' '$S/big.keep' && mkfifo '$S/big'" \
		timeout -k 5 "$BOUND" "$MPIEXEC" -n 2 "$@"
}
rm -rf "$D"
fails "stage-in: a file made a FIFO after the listing" 1 swapped preparing "$BIN/stage-in" "$S/" "$D"
err_has "  the error names it and why" "'$S/big'" "not a regular file"
same_bytes "  the rest is staged" "$S/sub/small" "$D/sub/small"
[ ! -e "$D/big" ] && ok "  nothing is installed under its name" || not_ok "  nothing is installed under its name" "$(ls -la "$D")"
rm -f "$S/big" && mv "$S/big.keep" "$S/big"

O=$TMPD/res
rm -rf "$O"
fails "stage-out: a file made a FIFO after the listing" 1 swapped preparing "$BIN/stage-out" "$S" "$O"
err_has "  the error names it and why" "'$S/big'" "not a regular file"
rm -f "$S/big" && mv "$S/big.keep" "$S/big"

# ---- the race: she swaps the big file with a FIFO in a loop
STOP=$TMPD/stop
as_m /usr/bin/python3 - "$S" "$STOP" $((RACE_ITERS * 500)) <<'EOF' &
import os, random, sys, time
d, stop, n = sys.argv[1:4]
os.chdir(d)
for i in range(int(n)):
    if os.path.exists(stop):
        break
    try:
        os.rename("big", "big.keep")
        os.mkfifo("big")
        time.sleep(random.uniform(0, 0.02))
        os.unlink("big")
        os.rename("big.keep", "big")
    except OSError:
        pass
    time.sleep(random.uniform(0, 0.02))
EOF
HER=$!
runs=0 done_=0 failed=0 hung=0 why=""
while [ "$runs" -lt "$RACE_ITERS" ] && kill -0 "$HER" 2>/dev/null; do
	runs=$((runs + 1))
	rm -rf "$D"
	timeout -k 5 "$BOUND" "$MPIEXEC" -n 2 "$BIN/stage-in" "$S/" "$D" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	# 3: the listing found the FIFO (not staged, by design)
	case $rc in
	0 | 3) done_=$((done_ + 1)) ;;
	1) failed=$((failed + 1)) ;;
	*) hung=$((hung + 1)); why="run $runs: exit $rc: $(tail -n 3 "$TMPD/err")"; break ;;
	esac
done
touch "$STOP"
wait "$HER"
[ -e "$S/big.keep" ] && { rm -f "$S/big"; mv "$S/big.keep" "$S/big"; }
if [ "$runs" -gt 0 ] && [ "$hung" -eq 0 ]; then
	ok "$runs stage-ins while she swaps a file with a FIFO: each ends by itself ($done_ completed, $failed refused it)"
else
	not_ok "stage-ins while she swaps a file with a FIFO: each ends by itself" "$runs runs, $hung did not end by itself in $BOUND s (124: killed): $why"
fi


# ---- gfsplit-mount
need_fuse
H=$TMPD/h		# hers: what her programs say
mkdir -m 700 "$H"
chown "$M:$M" "$H"
make_file "$TMPD/src" 1048576 4
for f in s t u; do
	mpirun_n 2 "$BIN/pcp-split" -q "$TMPD/src" "$MD/$f.sp" ||
		not_ok "pcp-split makes her split file $f.sp"
done
make_file "$MD/plain" 70000 5
echo "root reads this" >"$TMPD/note"
cp "$TMPD/note" "$MD/note"
chown -R "$M:$M" "$MD"
V=$TMPD/view
# root_reads DESC: root reads a file through the mount, in 10 s
root_reads() {
	if timeout 10 cat "$V/note" >"$TMPD/got" 2>"$TMPD/err" && cmp -s "$TMPD/got" "$TMPD/note"; then
		ok "$1"
	else
		not_ok "$1" "$(cat "$TMPD/err")" "daemon threads: $(cat /proc/"$(pgrep -f "gfsplit-mount.* $V\$" | head -n 1)"/task/*/wchan 2>/dev/null | tr '\0' ' ')"
	fi
}
if ! mount_up "$MD" "$V" -o allow_other --threads 2; then
	not_ok "root mounts her directory with allow_other, 2 threads" "$(cat "$TMPD/.mount.out" "$TMPD/mount.log" 2>/dev/null | tail -n 5)"
	finish
	exit 1
fi
ok "root mounts her directory with allow_other, 2 threads"

# her three lseeks, each from its own process on an open split file of
# hers (three files: the kernel sends one file's seeks one at a time),
# once their part.0 are FIFOs
as_m /usr/bin/python3 - "$V" "$MD" "$H/seeks" <<'EOF' &
import os, sys
view, src, out = sys.argv[1:4]
fds = []
for f in ("s", "t", "u"):
    fds.append(os.open("%s/%s.sp" % (view, f), os.O_RDONLY))
    os.rename("%s/%s.sp/part.0" % (src, f), "%s/%s.sp/p0.keep" % (src, f))
    os.mkfifo("%s/%s.sp/part.0" % (src, f))
kids = []
for i, fd in enumerate(fds):
    pid = os.fork()
    if pid == 0:
        try:
            r = "data at %d" % os.lseek(fd, 0, os.SEEK_DATA)
        except OSError as e:
            r = "error %s" % e.strerror
        with open("%s.%d" % (out, i), "w") as f:
            f.write(r + "\n")
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
EOF
HER=$!
sleep 1
root_reads "  while she seeks in a split file whose part is now a FIFO, root reads through the mount"
gone "$HER" "$BOUND"
if [ "$(cat "$H"/seeks.* 2>/dev/null | sort -u)" = "data at 0" ]; then
	ok "  her seeks return what the split file holds (data at 0), from the parts held since her open"
else
	not_ok "  her seeks return what the split file holds (data at 0), from the parts held since her open" \
		"$(cat "$H"/seeks.* 2>/dev/null || echo "no answer in $BOUND s")"
fi
# release whatever still waits on the FIFOs; the parts back
for f in s t u; do
	timeout 2 sh -c "exec 3<>'$MD/$f.sp/part.0'" 2>/dev/null
done
pkill -9 -u "$M" python3
for f in s t u; do
	rm -f "$MD/$f.sp/part.0" && mv "$MD/$f.sp/p0.keep" "$MD/$f.sp/part.0"
done

# a plain file: she swaps it with a FIFO in a loop while she opens it
# through the mount (not blocking herself), so that the kernel, which
# looked it up as a regular file, asks the daemon to open a FIFO
as_m /usr/bin/python3 - "$V/plain" "$MD/plain" "$H/plain.out" <<'EOF' &
import os, sys, time
view, src, out = sys.argv[1:4]
opened = refused = 0
end = time.time() + 3
if os.fork() == 0:
    while time.time() < end:
        try:
            os.rename(src, src + ".keep")
            os.mkfifo(src)
            os.unlink(src)
            os.rename(src + ".keep", src)
        except OSError:
            pass
    os._exit(0)
while time.time() < end:
    try:
        os.close(os.open(view, os.O_RDONLY | os.O_NONBLOCK))
        opened += 1
    except OSError:
        refused += 1
os.wait()
open(out, "w").write("%d opened, %d refused\n" % (opened, refused))
EOF
HER=$!
if gone "$HER" "$BOUND" && [ -s "$H/plain.out" ]; then
	ok "  her opens of a plain file she swaps with a FIFO return: $(cat "$H/plain.out")"
else
	not_ok "  her opens of a plain file she swaps with a FIFO return" "no answer in $BOUND s"
fi
root_reads "  then root reads through the mount"
timeout 2 sh -c "exec 3<>'$MD/plain'" 2>/dev/null
pkill -9 -u "$M" python3
[ -e "$MD/plain.keep" ] && { rm -f "$MD/plain"; mv "$MD/plain.keep" "$MD/plain"; }

# a lazy unmount while she holds a file open: the daemon ends within
# its grace (5 s; the poll allows 15, scaled)
d=$(pgrep -f "gfsplit-mount.* $V\$" | head -n 1)
as_m sleep 60 <"$V/note" &
HOLD=$!
sleep 0.5
umount -l "$V"
if gone "$d" "$(scaled 15)"; then
	ok "a lazy unmount while she holds a file open: the daemon ends within 15 s"
else
	not_ok "a lazy unmount while she holds a file open: the daemon ends within 15 s" \
		"still running: $(tr '\0' ' ' <"/proc/$d/cmdline")"
	kill "$d" 2>/dev/null
fi
pkill -u "$M" sleep
wait "$HOLD" 2>/dev/null
mount_log_clean
finish

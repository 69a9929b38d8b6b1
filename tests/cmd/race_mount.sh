#!/bin/bash
# race_mount.sh - root's gfsplit-mount -o allow_other over a directory of a
# second user's, while she swaps the parts of her split file with links
# to a file of root's she cannot read.  RACE_ITERS times she
# reads her file through the mount: she gets her bytes or an error, never
# a byte of root's file (the daemon opens parts from the split directory's
# descriptor, no link followed, and lets her read only what she could
# read directly).
. "$(dirname "$0")/../lib.sh"

need_fuse
her_dir "the mount raced by a second user"
R=$TMPD/root		# root's: she cannot enter it
mkdir -m 700 "$R"
make_file "$R/victim" 524288 9
chmod 600 "$R/victim"
make_file "$TMPD/src" 1048576 4
mpirun_n 2 "$BIN/pcp-split" -q "$TMPD/src" "$MD/s.sp" ||
	not_ok "pcp-split makes her split file"
chown -R "$M:$M" "$MD"
[ "$(stat -c %s "$MD/s.sp/part.0")" -eq 524288 ] && ok "her part.0 has the victim's size" ||
	not_ok "her part.0 has the victim's size" "$(ls -l "$MD/s.sp")"
V=$TMPD/view
if ! mount_up "$MD" "$V" -o allow_other; then
	not_ok "root mounts her directory with allow_other" "$(cat "$TMPD/.mount.out" "$TMPD/mount.log" 2>/dev/null | tail -n 5)"
	finish
	exit 1
fi
ok "root mounts her directory with allow_other"
as_m cat "$V/s.sp" >"$TMPD/got" 2>/dev/null && cmp -s "$TMPD/got" "$TMPD/src" &&
	ok "she reads her file through the mount" || not_ok "she reads her file through the mount"

# her loop: part.0 away, a link to root's file in its place, part.0 back
as_m /usr/bin/python3 - "$MD/s.sp" "$R/victim" "$TMPD/stop" $((RACE_ITERS * 500)) <<'EOF' &
import os, random, sys, time
d, v, stop, n = sys.argv[1:5]
os.chdir(d)
for i in range(int(n)):
    if os.path.exists(stop):
        break
    try:
        os.rename("part.0", "p0.keep")
        os.symlink(v, "part.0")
        time.sleep(random.uniform(0, 0.01))
        os.unlink("part.0")
        os.rename("p0.keep", "part.0")
    except OSError:
        pass
    time.sleep(random.uniform(0, 0.01))
EOF
HER=$!
head -c 524288 "$R/victim" >"$TMPD/vhead"
reads=0 good=0 leaked=0
while [ "$reads" -lt "$RACE_ITERS" ] && kill -0 "$HER" 2>/dev/null; do
	reads=$((reads + 1))
	as_m cat "$V/s.sp" >"$TMPD/got" 2>/dev/null && good=$((good + 1))
	# any 4 KiB of root's file in what she got is a leak
	if python3 - "$TMPD/got" "$R/victim" <<'EOF'
import sys
got = open(sys.argv[1], "rb").read()
v = open(sys.argv[2], "rb").read()
sys.exit(0 if any(v[o:o + 4096] in got for o in range(0, len(v), 4096)) else 1)
EOF
	then
		leaked=$((leaked + 1))
	fi
done
touch "$TMPD/stop"
wait "$HER"
[ -e "$MD/s.sp/p0.keep" ] && { rm -f "$MD/s.sp/part.0"; mv "$MD/s.sp/p0.keep" "$MD/s.sp/part.0"; }
[ "$reads" -gt 0 ] && [ "$leaked" -eq 0 ] &&
	ok "$reads reads through the mount while she swaps a part with a link: no byte of root's file ($good read whole)" ||
	not_ok "reads through the mount while she swaps a part with a link: no byte of root's file" "$leaked of $reads reads held root's bytes"
as_m cat "$V/s.sp" >"$TMPD/got" 2>/dev/null && cmp -s "$TMPD/got" "$TMPD/src" &&
	ok "  once she stops, she reads her file again" || not_ok "  once she stops, she reads her file again"
mount_down "$V" && ok "unmounted" || not_ok "unmounted"
mount_log_clean
finish

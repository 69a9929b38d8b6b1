#!/bin/sh
# tools/install-dirs.sh - the directories make install creates, so that
# make uninstall removes those and only those (Makefile.in).
#
#   tools/install-dirs.sh make   RECORD TOP DIR...
#   tools/install-dirs.sh remove RECORD TOP DIR...
#
# DIR... are the installation directories, DESTDIR included; TOP is where
# walking up from them stops: DESTDIR when it is set (the staging root is
# the caller's), else /.  make creates each DIR that is missing and appends
# to RECORD (one path a line) every directory it made, parents included.
# remove takes, of the directories RECORD lists, those that are a DIR or
# lie between a DIR and TOP, and removes each that is empty, deepest first;
# a directory that was there before install is never in RECORD, and one
# that holds anything else stays.  Directories that no longer exist leave
# RECORD.  Like CMake's install_manifest.txt, RECORD lives in the build
# tree: `make clean` forgets it, and uninstall then removes only gfsplit's
# own directories (Makefile.in).
set -eu

mode=$1 record=$2
# (DESTDIR=/x/ and prefix /usr make /x//usr: one slash, none at the end)
top=$(printf '%s\n' "$3" | tr -s / | sed 's|\(.\)/$|\1|')
shift 3

# the DIRs and every ancestor below TOP, one a line
below_top() {
	for d; do
		d=$(printf '%s\n' "$d" | tr -s / | sed 's|\(.\)/$|\1|')
		while [ "$d" != / ] && [ "$d" != . ] && [ "$d" != "$top" ]; do
			printf '%s\n' "$d"
			d=$(dirname "$d")
		done
	done | sort -u
}

case $mode in
make)
	mkdir -p "$(dirname "$record")"
	below_top "$@" | while read -r d; do
		[ -d "$d" ] || printf '%s\n' "$d"
	done >>"$record"
	for d; do install -d "$d"; done
	;;
remove)
	[ -f "$record" ] || exit 0
	below_top "$@" >"$record.cand"
	# reverse order puts every directory before its parent
	sort -ru "$record" | grep -Fx -f "$record.cand" | while read -r d; do
		[ ! -d "$d" ] || rmdir --ignore-fail-on-non-empty "$d"
	done
	sort -u "$record" | while read -r d; do
		[ ! -d "$d" ] || printf '%s\n' "$d"
	done >"$record.new"
	rm -f "$record.cand"
	if [ -s "$record.new" ]; then mv "$record.new" "$record"; else rm -f "$record.new" "$record"; fi
	;;
*)
	echo "usage: install-dirs.sh make|remove RECORD TOP DIR..." >&2
	exit 2
	;;
esac

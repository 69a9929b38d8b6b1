#!/bin/bash
# options.sh - one source of truth for options: for each command, the long
# options of --help (made from the command's table) must be exactly those of
# its man page, of the bash completion and of its zsh completion.
. "$(dirname "$0")/../lib.sh"

# gfsplit-mount is built only with libfuse3
MOUNT=
[ -x "$BIN/gfsplit-mount" ] && MOUNT=gfsplit-mount ||
	skip "gfsplit-mount's options" "not built (configure found no libfuse3)"

# each extractor prints one long option per line, sorted

from_help() {
	"$BIN/$1" --help | sed -n '/^Options:/,$p' |
		grep -oE '^  (-[A-Za-z], |    )--[a-z][a-z0-9-]*' |
		grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# the tags of the OPTIONS section (the line after each .TP), "\-" as "-"
man_tags() {
	awk '/^\.SH /{ f = ($2 == "OPTIONS"); next }
	     f && prev == ".TP" { print } { prev = $0 }' "$TOP/man/$1.1" |
		sed 's/\\-/-/g'
}

from_man() {
	man_tags "$1" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

from_bash() {
	bash -c '. "$1"; _gfsplit_options "$2"' _ \
		"$TOP/completions/bash/gfsplit" "$1" | tr ' ' '\n' |
		grep -E -- '^--' | sort -u
}

from_zsh() {
	grep -v '^#' "$TOP/completions/zsh/_$1" |
		grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

same_set() {	# DESC REF OTHER
	if [ -s "$2" ] && cmp -s "$2" "$3"; then
		ok "$1"
	else
		not_ok "$1" "only in --help: $(comm -23 "$2" "$3" | tr '\n' ' ')" \
			"only in the other: $(comm -13 "$2" "$3" | tr '\n' ' ')"
	fi
}

for cmd in pcp-split gfsplit-merge stat-layout cache-warm stage-in stage-out envelope-bench $MOUNT; do
	from_help "$cmd" >"$TMPD/help"
	from_man "$cmd" >"$TMPD/man"
	from_bash "$cmd" >"$TMPD/bash"
	from_zsh "$cmd" >"$TMPD/zsh"
	n=$(wc -l <"$TMPD/help")
	# the common four plus at least one of the command's own
	[ "$n" -ge 5 ] && grep -qx -- --quiet "$TMPD/help" &&
		ok "$cmd: --help lists $n long options" ||
		not_ok "$cmd: --help lists its options" "$(cat "$TMPD/help")"
	long=$("$BIN/$cmd" --help | awk 'length > 80')
	[ -z "$long" ] && ok "$cmd: --help fits 80 columns" ||
		not_ok "$cmd: --help fits 80 columns" "$long"
	same_set "$cmd: man page OPTIONS == --help" "$TMPD/help" "$TMPD/man"
	same_set "$cmd: bash completion == --help" "$TMPD/help" "$TMPD/bash"
	same_set "$cmd: zsh completion == --help" "$TMPD/help" "$TMPD/zsh"

	# short options too: every "-x, --long" of --help is in man and zsh
	# (zsh: {-x+,--long=} with an argument, {-x-,--long=-} with an optional
	# one such as -z, --compress[=LEVEL], {-x,--long} without)
	"$BIN/$cmd" --help | grep -oE '^ +-[A-Za-z], --[a-z-]+' |
		sed 's/^ *//' | sort >"$TMPD/hs"
	miss=""
	while IFS= read -r pair; do
		s=${pair%%,*} l=${pair#*, }
		man_tags "$cmd" | grep -qE -- "^\.BR $s \", \" $l( |=|$)" ||
			miss="$miss man:$s"
		grep -qE -- "\{$s(\+?,$l=?|-,$l=-)\}" "$TOP/completions/zsh/_$cmd" ||
			miss="$miss zsh:$s"
	done <"$TMPD/hs"
	[ -z "$miss" ] && ok "$cmd: short options agree ($(wc -l <"$TMPD/hs"))" ||
		not_ok "$cmd: short options agree" "missing:$miss"

	# the man page renders without groff warnings
	if command -v groff >/dev/null 2>&1; then
		w=$(groff -man -Tutf8 -ww "$TOP/man/$cmd.1" 2>&1 >/dev/null)
		[ -z "$w" ] && ok "$cmd.1 renders cleanly" ||
			not_ok "$cmd.1 renders cleanly" "$w"
	else
		skip "$cmd.1 renders cleanly" "groff not installed"
	fi
done

# the bash completion completes options for each command
for cmd in pcp-split gfsplit-merge stat-layout cache-warm stage-in stage-out envelope-bench; do
	got=$(bash -c '. "$1"; COMP_WORDS=("$2" --js); COMP_CWORD=1;
		_gfsplit "$2" --js "$2"; echo "${COMPREPLY[*]}"' _ \
		"$TOP/completions/bash/gfsplit" "$cmd")
	[ "$got" = "--json" ] && ok "bash completes $cmd --js to --json" ||
		not_ok "bash completes $cmd --js to --json" "got '$got'"
done
# values after --opt=, whether bash splits the word at '=' or not
comp() {	# FUNCTION WORD... (the last is completed)
	bash -c '. "$1"; f=$2; shift 2; COMP_WORDS=("$@");
		COMP_CWORD=$(($# - 1)); "$f" "$1"; echo "${COMPREPLY[*]}"' _ \
		"$TOP/completions/bash/gfsplit" "$@"
}
comp_is() {	# WANT FUNCTION WORD...
	local want=$1 got
	shift
	got=$(comp "$@")
	[ "$got" = "$want" ] && ok "bash completes '${*:2}' to '$want'" ||
		not_ok "bash completes '${*:2}' to '$want'" "got '$got'"
}
comp_is "strict" _gfsplit pcp-split --placement = st
comp_is "--placement=strict" _gfsplit pcp-split --placement=st
comp_is "auto mpi shm tcp verbs" _gfsplit cache-warm --transport =
comp_is "--compress=auto" _gfsplit stage-out --compress=a
comp_is "drop direct" _gfsplit envelope-bench --cache = d
comp_is "" _gfsplit pcp-split --buffer-size=4
# ... and after a launcher and its options
comp_is "--placement" _gfsplit_launcher mpiexec -n 4 pcp-split --pla
comp_is "--compress=auto" _gfsplit_launcher srun -N 2 stage-in --compress=
comp_is "fallback strict" _gfsplit_launcher mpirun -np 2 -ppn 1 pcp-split --placement =
comp_is "--dry-run" _gfsplit_launcher mpiexec -n 2 "$BIN/gfsplit-merge" --dry
# the zsh files quote as they should (zsh's quoting is bash's here)
for f in "$TOP"/completions/zsh/_*; do
	bash -n "$f" 2>"$TMPD/zq" && ok "$(basename "$f") parses" ||
		not_ok "$(basename "$f") parses" "$(cat "$TMPD/zq")"
done

if [ -n "$MOUNT" ]; then
	got=$(bash -c '. "$1"; COMP_WORDS=(gfsplit-mount -o ro,al); COMP_CWORD=2;
		_gfsplit gfsplit-mount ro,al -o; echo "${COMPREPLY[*]}"' _ \
		"$TOP/completions/bash/gfsplit")
	[ "$got" = "ro,allow_other" ] && ok "bash completes gfsplit-mount -o ro,al to ro,allow_other" ||
		not_ok "bash completes gfsplit-mount -o ro,al to ro,allow_other" "got '$got'"
fi
finish

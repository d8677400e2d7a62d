# The shell tests' helpers, sourced after a test has set aotc (an absolute
# path, when it runs aotc) and tmp (its temporary directory, removed by its
# own EXIT trap):
#	. "$(dirname "$0")/../lib.sh"
#
#	ok NAME             a check passed
#	bad NAME [TEXT...]  a check failed: TEXT indented below it (a TEXT that
#	                    is a file under $tmp: its last 25 lines), then the
#	                    last aotc command the test ran and how to rerun the
#	                    test alone (AOTC_TEST and AOTC_BUILD come from
#	                    tests/meson.build)
#	finish              N passed, M failed; exits 0 only without failures
#	                    (after the test's before_finish, if it defines one)
#	json FILE EXPR      prints a Python expression over the JSON document d
#	                    of FILE (strings bare, other values as JSON), e.g.
#	                    json db.json 'len(d["measurements"])'
#
# aotc is wrapped (when set): each run records its command line in
# $tmp/.aotc-last, which bad prints, so a failure says what ran. The wrapper
# execs aotc: its process, exit status and output are aotc's own. A command
# line the test prints for a person names $aotc_real, the binary itself.
pass=0
fail=0

if [ -z "${tmp:-}" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi

aotc_real=${aotc:-}
case $aotc_real in */*) case $aotc_real in /*) ;; *) aotc_real=$(pwd)/$aotc_real ;; esac ;; esac
if [ -n "$aotc_real" ] && [ -x "$aotc_real" ]; then
	aotc=$tmp/.aotc-bin/aotc
	mkdir -p "$tmp/.aotc-bin"
	# Paths of mktemp and meson: no single quote in them.
	{
		printf '#!/bin/sh\nreal=%s\nlast=%s\n' "'$aotc_real'" "'$tmp/.aotc-last'"
		cat <<'EOF'
{ printf '%s' "$real"; for a; do printf " '%s'" "$a"; done; echo; } >"$last" 2>/dev/null
exec "$real" "$@"
EOF
	} >"$aotc"
	chmod +x "$aotc"
fi

# The command that reruns this test alone.
rerun_command() {
	printf 'meson test -C %s --print-errorlogs %s' "${AOTC_BUILD:-build}" \
		"${AOTC_TEST:-$(basename "$0" .sh)}"
}

ok() { printf 'PASS %s\n' "${1:-}"; pass=$((pass + 1)); }

bad() {
	printf 'FAIL %s\n' "$1"
	shift
	for l in "$@"; do
		case $l in
		"$tmp"/*) if [ -f "$l" ]; then
			printf '    %s:\n' "${l#"$tmp"/}"
			tail -25 "$l" | sed 's/^/      /'
			continue
		fi ;;
		esac
		printf '%s\n' "$l" | sed 's/^/    /'
	done
	if [ -s "$tmp/.aotc-last" ]; then
		printf '    last aotc command: %s\n' "$(cat "$tmp/.aotc-last")"
	fi
	printf '    rerun: %s\n' "$(rerun_command)"
	fail=$((fail + 1))
}

finish() {
	if command -v before_finish >/dev/null 2>&1; then before_finish; fi
	printf '%s passed, %s failed\n' "$pass" "$fail"
	if [ "$fail" -ne 0 ]; then
		printf 'rerun this test alone: %s\n' "$(rerun_command)"
		exit 1
	fi
	exit 0
}

# try NAME CMD...: PASS NAME when CMD exits 0, else FAIL with the command
# and the last lines of what it printed (emit-compile.sh and
# emit-standalone.sh show the first lines, a compiler's first errors, with
# their own).
try() {
	name=$1
	shift
	if "$@" >"$tmp/log" 2>&1; then ok "$name"; else bad "$name" "$*" "$(tail -20 "$tmp/log")"; fi
}

# skip REASON: the rest cannot run here; exit 77 (skipped) when nothing failed.
skip() {
	printf 'SKIP %s\n' "$1"
	[ "$fail" -ne 0 ] || { printf '%s passed, 0 failed\n' "$pass"; exit 77; }
	finish
}

json() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))' "$@"
}

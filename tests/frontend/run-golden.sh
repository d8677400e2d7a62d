#!/bin/sh
# Golden tests for the aotc frontend, in the style of cproc's runtests.
#
# usage: run-golden.sh AOTC_BINARY TESTS_DIR [NAME...]
#
# The file names pick the check, for each case NAME.cu or NAME.cpp:
#   NAME.cmd      one line "SUBCOMMAND ARGS...", run as `aotc SUBCOMMAND ARGS...`;
#                 exit 0 expected, stdout compared with NAME.out
#   NAME.err      `aotc parse [ARGS] NAME.cu`; exit 1 expected, stderr compared with NAME.err
#   otherwise     `aotc parse [ARGS] NAME.cu`; exit 0 expected, stdout compared with NAME.ir.json
#   NAME.args     optional, one line of extra arguments inserted after `parse`
# Commands run inside TESTS_DIR with bare file names, so paths in the output are stable.
# Lines matching "aotc_version" (the version banner) are dropped from stdout on both sides.
# AOTC_UPDATE=1 writes the actual output into the expected file instead of comparing; a new
# case gets NAME.ir.json when aotc exits 0 and NAME.err when it exits 1.
# GOLDEN_SKIP: case names not to run. GOLDEN_SANITIZED_ONLY: the only cases to
# run when AOTC_TEST_SANITIZED=1 (tools/test.sh's sanitized run; meson.build
# here: the cases that need the real CUDA headers, as the shim run has the rest).

LC_ALL=C
export LC_ALL

if [ $# -lt 2 ]; then
	echo "usage: $0 AOTC_BINARY TESTS_DIR [NAME...]" >&2
	exit 2
fi
aotc=$1
dir=$2
shift 2
lib=$(cd "$(dirname "$0")/.." && pwd)/lib.sh

# The commands run from inside the tests directory: make a relative binary path absolute.
case $aotc in
*/*)
	case $aotc in
	/*) ;;
	*) aotc=$(pwd)/$aotc ;;
	esac
	;;
esac
if ! cd "$dir"; then
	echo "$0: cannot enter $dir" >&2
	exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aotc-golden.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
. "$lib"
trap 'exit 130' INT TERM

# Drop the volatile version banner.
normalise() {
	grep -v '"aotc_version"' "$1"
	return 0
}


# failcase NAME REASON...: report a failed case; details go to stderr.
failcase() {
	fname=$1
	shift
	bad "$fname" "$*"
}

# details: show what aotc wrote, for a failing case.
details() {
	if [ -s "$tmp/stderr" ]; then
		echo "--- stderr:" >&2
		sed -n '1,40p' "$tmp/stderr" >&2
	fi
}

# compare NAME EXPECTED ACTUAL: diff, or overwrite EXPECTED under AOTC_UPDATE=1.
compare() {
	if [ "${AOTC_UPDATE:-0}" = 1 ]; then
		if cmp -s "$3" "$2" 2>/dev/null; then
			echo "PASS $1"
		else
			cp "$3" "$2" && echo "--- $1: updated $2" >&2
			echo "PASS $1"
		fi
		pass=$((pass + 1))
	elif [ ! -f "$2" ]; then
		failcase "$1" "missing $2 (run with AOTC_UPDATE=1 to create it, then review it)"
	elif diff -u "$2" "$3" >"$tmp/diff"; then
		echo "PASS $1"
		pass=$((pass + 1))
	else
		failcase "$1" "output differs from $2"
		cat "$tmp/diff" >&2
	fi
}

runcase() {
	name=$1
	# GOLDEN_SKIP: space-separated case names not to run (e.g. cases that
	# need the real CUDA headers when testing the shim frontend).
	case " ${GOLDEN_SKIP:-} " in
	*" $name "*) echo "SKIP $name"; return ;;
	esac
	if [ -f "$name.cu" ]; then
		src=$name.cu
	elif [ -f "$name.cpp" ]; then
		src=$name.cpp
	else
		failcase "$name" "no $name.cu or $name.cpp in $dir"
		return
	fi

	# Word splitting of the .cmd/.args line is intended; globbing is not.
	set -f
	if [ -f "$name.cmd" ]; then
		# shellcheck disable=SC2046
		"$aotc" $(cat "$name.cmd") >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
		status=$?
		set +f
		if [ "$status" -ne 0 ]; then
			failcase "$name" "aotc $(cat "$name.cmd") exited $status, expected 0"
			details
			return
		fi
		normalise "$tmp/stdout" >"$tmp/actual"
		compare "$name" "$name.out" "$tmp/actual"
		return
	fi

	args=
	if [ -f "$name.args" ]; then
		args=$(cat "$name.args")
	fi
	# shellcheck disable=SC2086
	"$aotc" parse $args "$src" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
	status=$?
	set +f

	if [ -f "$name.err" ]; then
		want=1
	elif [ -f "$name.ir.json" ]; then
		want=0
	elif [ "${AOTC_UPDATE:-0}" = 1 ] && [ "$status" -le 1 ]; then
		want=$status
	else
		failcase "$name" "missing $name.ir.json or $name.err" \
			"(aotc exited $status; run with AOTC_UPDATE=1 to create it, then review it)"
		details
		return
	fi

	if [ "$status" -ne "$want" ]; then
		failcase "$name" "aotc parse exited $status, expected $want"
		details
		return
	fi
	if [ "$want" -eq 1 ]; then
		compare "$name" "$name.err" "$tmp/stderr"
	else
		normalise "$tmp/stdout" >"$tmp/actual"
		compare "$name" "$name.ir.json" "$tmp/actual"
		roundtrip "$name"
	fi
}

# roundtrip NAME: the IR read back from its JSON prints the same JSON.
roundtrip() {
	cp "$tmp/stdout" "$tmp/ir.json"
	if ! "$aotc" parse "$tmp/ir.json" >"$tmp/again" 2>"$tmp/stderr" </dev/null; then
		failcase "$1 (round trip)" "aotc parse of its own IR JSON failed"
		details
	elif ! cmp -s "$tmp/stdout" "$tmp/again"; then
		failcase "$1 (round trip)" "IR read back from JSON prints differently"
		diff -u "$tmp/stdout" "$tmp/again" >&2
	else
		echo "PASS $1 (round trip)"
		pass=$((pass + 1))
	fi
}

if [ $# -eq 0 ] && [ "${AOTC_TEST_SANITIZED:-0}" = 1 ] && [ -n "${GOLDEN_SANITIZED_ONLY:-}" ]; then
	echo "sanitized run: only $GOLDEN_SANITIZED_ONLY (the normal run has every case)"
	# shellcheck disable=SC2086
	set -- $GOLDEN_SANITIZED_ONLY
fi
if [ $# -eq 0 ]; then
	for f in *.cu *.cpp; do
		[ -f "$f" ] || continue
		runcase "${f%.*}"
	done
else
	for n in "$@"; do
		n=${n##*/}
		case $n in
		*.cu | *.cpp | *.cmd | *.args | *.err | *.out) n=${n%.*} ;;
		*.ir.json) n=${n%.ir.json} ;;
		esac
		runcase "$n"
	done
fi

finish

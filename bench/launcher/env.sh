#!/bin/sh
# What the launcher's environment costs per call on this CPU (docs/cli.md,
# "The launcher's environment"): the emitted host launcher of a kernel that
# does almost nothing (nop.cpp, tuned here in a few seconds), called 10
# million times with no variable set, with AOTC_LOG=0, with AOTC_RECORD
# (1 and 64 distinct shapes) and with AOTC_VARIANT, against calling the
# instantiation directly. Prints ns per call (best of 3 runs).
#   bench/launcher/env.sh [AOTC]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
aotc=$(cd "$(dirname "${1:-$here/../../build/aotc}")" && pwd)/$(basename "${1:-aotc}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
unset AOTC_RECORD AOTC_VARIANT AOTC_LOG
cd "$tmp"
cp "$here/nop.cpp" "$here/driver.cpp" .
"$aotc" compile nop.cpp --arch host --db db -o out --quiet >/dev/null 2>&1
cc -std=c99 -O2 -I out -c out/_aot_nop_host.c -o dispatch.o
c++ -std=c++17 -O2 -I out -I . -pthread driver.cpp out/_aot_nop_host.cpp dispatch.o -o drv
best() { # LABEL SHAPES [VAR=VALUE]: best of 3
	label=$1 shapes=$2
	shift 2
	b=
	for _ in 1 2 3; do
		r=$(env "$@" ./drv 10000000 "$shapes")
		l=${r% *} d=${r#* }
		if [ -z "$b" ] || awk -v a="$l" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$l bd=$d; fi
		rm -f rec.json rec.json.lock
	done
	printf "%-40s %8.2f ns/call  (direct call %.2f)\n" "$label" "$b" "$bd"
}
best "launcher, nothing set" 1 X=1
best "launcher, AOTC_LOG=0" 1 AOTC_LOG=0
best "launcher, AOTC_VARIANT=nop=0" 1 AOTC_VARIANT=nop=0
best "launcher, AOTC_RECORD, 1 shape" 1 AOTC_RECORD=rec.json
best "launcher, AOTC_RECORD, 4 shapes" 4 AOTC_RECORD=rec.json

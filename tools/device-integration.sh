#!/bin/sh
# The downstream programs of tests/integration (CMake and meson projects
# built against an installed aotc, here, without a GPU) run on a GPU: each
# prints its dispatch's picks and, with a device, launches the emitted
# launcher and checks the result against the CPU.
#   here:    tools/device-integration.sh build    (builds into build-int/)
#   device:  tools/device-integration.sh run OUT  (carry build-int; log in OUT)
# The H200 log is tests/integration/h200.txt.
set -eu
cd "$(dirname "$0")/.."
case ${1:-} in
build)
	rm -rf build-int
	AOTC_KEEP_PROGRAMS=$(pwd)/build-int tests/integration/install.sh build "$(pwd)"
	ls build-int
	;;
run)
	out=${2:?usage: device-integration.sh run OUT}
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /' >"$out/integration.txt"
	status=0
	for p in build-int/*; do
		echo "== $p" >>"$out/integration.txt"
		"$p" >>"$out/integration.txt" 2>&1 || { echo "exit $?" >>"$out/integration.txt"; status=1; }
	done
	cat "$out/integration.txt"
	exit $status
	;;
*)
	echo "usage: tools/device-integration.sh build | run OUT" >&2
	exit 2
	;;
esac

#!/bin/sh
# Installs what aotc needs to build and test on Debian 12 / Ubuntu 24.04 and
# builds it into ./build (meson's default prefix, /usr/local), then says how to
# install it. Run as root (or with sudo available).
set -eu
cd "$(dirname "$0")/.."

# libclang-rt-dev: libFuzzer for tools/fuzz.sh (with --no-install-recommends
# clang does not bring it).
# cmake: tests/integration builds a downstream CMake project; chromium:
# tests/heuristics/report-formats.sh renders the HTML report headless.
# hipcc: tests/codegen/rocm.sh builds the emitted HIP launchers (code
# objects for gfx90a without an AMD GPU). hyperfine: bench/parse*.sh.
# slurmctld slurmd slurm-client munge: tests/scale/slurm.sh runs
# docs/examples/slurm-tune.sh on a single-node Slurm it starts with its own
# munge key and socket, ports and files; the services these packages start
# (or fail to start: there is no /etc/slurm/slurm.conf) do not meet it.
# debhelper: tools/deb-check.sh builds the Debian package (debian/).
pkgs="meson ninja-build pkg-config gcc g++ clang libclang-rt-dev python3 libclang-16-dev libjansson-dev libxxhash-dev cmake chromium hipcc hyperfine slurmctld slurmd slurm-client munge debhelper"
missing=
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "setup: installing$missing"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

if [ ! -f build/build.ninja ]; then
	meson setup build
fi
meson compile -C build

# build/ exists now, so a later `meson setup build --prefix ...` changes nothing
# (meson says "Directory already configured" and exits 0): an existing build
# directory takes another prefix from meson configure.
prefix=$(meson introspect --buildoptions build |
	python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
echo "setup: built build/aotc; to install it (README.md, \"Install\"):"
echo "  meson install -C build                      # into $prefix"
echo "  meson configure build --prefix \"\$HOME/.local\" && meson install -C build   # elsewhere"

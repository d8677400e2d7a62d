#!/bin/sh
# meson install, then downstream builds against the installed tree
# (docs/integration.md): the installed files are there (aotc, aotc.h, aotc.pc,
# the CMake package and its version file, the man page); the tree still works
# after it is moved; a downstream CMake project (C, C++ and CUDA with nvcc,
# sm_90) builds one-architecture, two-architecture (aotc link) and host
# programs with aotc_add_kernel and runs them, one whose kernel is found from
# its source (named otherwise than its file); a changed database emits
# again; aotc_add_kernel's mistakes stop the configure with a message; a
# downstream meson project builds the same through pkg-config.
# The programs run everywhere: without a GPU they check the dispatch only,
# the host one computes and checks a matmul.
# Usage: install.sh BUILD_DIR REPO_ROOT
# With AOTC_INSTALLED=PREFIX the aotc installed there is tested instead of a
# staged `meson install` of BUILD_DIR (tools/deb-check.sh: the package's /usr).
# With AOTC_KEEP_PROGRAMS=DIR the programs built are copied there, cmake_app
# and meson_app and so on (tools/device-integration.sh runs them on a GPU).
build=$1
root=$2
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
before_finish() {
	if [ -n "${AOTC_KEEP_PROGRAMS:-}" ]; then
		mkdir -p "$AOTC_KEEP_PROGRAMS"
		for app in app app_multi app_host app_types app_found; do
			[ -x "$tmp/cmake-project/build/$app" ] && cp "$tmp/cmake-project/build/$app" "$AOTC_KEEP_PROGRAMS/cmake_$app"
			[ -x "$tmp/meson-project/build/$app" ] && cp "$tmp/meson-project/build/$app" "$AOTC_KEEP_PROGRAMS/meson_$app"
		done
	fi
}

for tool in cmake nvcc pkg-config meson; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "SKIP: no $tool (tools/setup.sh installs cmake; nvcc is the CUDA toolkit's)"
		exit 77
	fi
done

# 1. Install into a staging tree, then move it: nothing may remember where
# it was installed (the CMake package and aotc.pc find their prefix from
# their own place). This is docs/integration.md's `meson install -C build`
# with --destdir: whatever prefix the build directory has (meson configure
# sets it there) is found below, and the build under test keeps its own.
if [ -n "${AOTC_INSTALLED:-}" ]; then
	# An aotc installed already (tools/deb-check.sh: the Debian package's /usr).
	dest=$AOTC_INSTALLED
	prefix=$AOTC_INSTALLED
	ok "installed in $dest"
else
	if meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/stage" >"$tmp/install.log" 2>&1; then
		ok "meson install"
	else
		bad "meson install" "$tmp/install.log"
		finish
	fi
	prefix=$(meson introspect --buildoptions "$build" |
		python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
	mv "$tmp/stage$prefix" "$tmp/aotc"
	dest=$tmp/aotc
fi
# The man page as installed (a package gzips it).
manpage() { if [ -f "$dest/share/man/man1/aotc.1" ]; then cat "$dest/share/man/man1/aotc.1"; else zcat "$dest/share/man/man1/aotc.1.gz"; fi; }
missing=
for f in bin/aotc include/aotc.h share/doc/aotc/LICENSE share/doc/aotc/README.md \
	share/doc/aotc/cli.md share/doc/aotc/database.md; do
	[ -f "$dest/$f" ] || missing="$missing $f"
done
manpage >/dev/null 2>&1 || missing="$missing share/man/man1/aotc.1"
pc=$(find "$dest/lib" "$dest/share" -name aotc.pc 2>/dev/null | head -1)
cmakedir=$(dirname "$(find "$dest/lib" "$dest/share" -name aotcConfig.cmake 2>/dev/null | head -1)")
[ -n "$pc" ] || missing="$missing aotc.pc"
[ -f "$cmakedir/aotcConfigVersion.cmake" ] || missing="$missing aotcConfig.cmake/aotcConfigVersion.cmake"
if [ -z "$missing" ] && "$dest/bin/aotc" --version >"$tmp/version" 2>&1 && manpage | grep -q "^\.TH AOTC 1" &&
   manpage | grep -A1 "^\.SH" | grep -q "^OPTIONS$"; then
	ok "installed files, aotc runs ($(head -1 "$tmp/version"))"
else
	bad "installed files: missing$missing" "$tmp/version"
fi

# SEE ALSO names the docs where they were installed, and they are there.
seen=$(manpage | sed -n '/^SEE ALSO$/,$p' | grep -o "$prefix/share/doc/aotc/[a-zA-Z]*\.md" | sort -u)
absent=
for f in $seen; do [ -f "$dest/${f#"$prefix"/}" ] || absent="$absent $f"; done
[ -n "$seen" ] && [ -z "$absent" ] && ok "man page: SEE ALSO names the installed docs ($(echo "$seen" | wc -l))" ||
	bad "man page SEE ALSO: named '$(echo $seen)', not installed:$absent" "$(manpage | sed -n '/^SEE ALSO$/,$p')"

export PKG_CONFIG_PATH="$(dirname "$pc")"
pc_aotc=$(pkg-config --variable=aotc aotc 2>"$tmp/pc.err")
pc_inc=$(pkg-config --cflags-only-I aotc 2>>"$tmp/pc.err" | sed 's/^ *-I//; s/ *$//')
if [ -x "$pc_aotc" ] && [ -f "$pc_inc/aotc.h" ] && pkg-config --exists 'aotc >= 0.1'; then
	ok "pkg-config: aotc=$pc_aotc"
else
	bad "pkg-config: aotc='$pc_aotc', include '$pc_inc'" "$tmp/pc.err"
fi

# The downstream sources: the kernels and their committed databases, as a
# project keeps them. Two architectures for aotc link: sm90's is the H200
# database; sm80's the same relabelled as another GPU's (tests/codegen/
# link.sh does the same), with cuBLAS and BM == 128 slowed so its dispatch differs.
kernels=$tmp/kernels
mkdir -p "$kernels"
cp "$root/templates/sgemm.cu" "$root/templates/sgemm.cuda_NVIDIA_H200_13.0.json" \
	"$root/templates/matmul_host.cpp" "$root/tests/codegen/matmul_host.host_AMD_EPYC_12.2.0.json" \
	"$root/tests/families/axpy_types.cpp" "$root"/tests/families/axpy_f*.json "$kernels/"
python3 - "$kernels/sgemm.cuda_NVIDIA_H200_13.0.json" "$kernels/sgemm.cuda_NVIDIA_A100_13.0.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
d["hardware"].update(id="cuda_NVIDIA_A100_13.0", name="NVIDIA A100", arch="sm80", sm_count=108)
slow = {i for i, c in enumerate(d["configs"]) if c.get("extern") or c["values"][0] == 128}
for m in d["measurements"]:
    if m["config"] in slow and "time_ms" in m:
        m["time_ms"] *= 3
        m.pop("samples", None)
json.dump(d, open(sys.argv[2], "w"))
PY

# 2. CMake: find_package(aotc) from CMAKE_PREFIX_PATH, aotc_add_kernel.
cm=$tmp/cmake-project
mkdir -p "$cm"
cp "$root/tests/integration/cmake-project/CMakeLists.txt" "$root"/tests/integration/src/* "$cm/"
cp -r "$kernels" "$cm/kernels"
cmake_configure() { # SRC BUILD LOG [ARGS...]
	src=$1 bld=$2 log=$3
	shift 3
	cmake -S "$src" -B "$bld" -G Ninja -DCMAKE_PREFIX_PATH="$dest" -DCMAKE_BUILD_TYPE=Release "$@" >"$log" 2>&1
}
if cmake_configure "$cm" "$cm/build" "$tmp/cmake.log" && cmake --build "$cm/build" >>"$tmp/cmake.log" 2>&1; then
	ok "cmake: configure and build (app, app_multi, app_host, app_types, app_found)"
	for app in app app_multi app_host app_types app_found; do
		if "$cm/build/$app" >"$tmp/$app.out" 2>&1; then
			ok "cmake: $app runs: $(grep -c . "$tmp/$app.out") lines, last: $(tail -1 "$tmp/$app.out")"
		else
			bad "cmake: $app" "$tmp/$app.out"
		fi
	done
	# sm80 and sm90 dispatch differently (app_multi checks each against its
	# own select; here: they are not the same table).
	if ! cmp -s "$cm/build/aotc/app_multi/sgemm/sm80/_aot_sgemm_cuda_sm80.c" \
	            "$cm/build/aotc/app_multi/sgemm/sm90/_aot_sgemm_cuda_sm90.c" &&
	   [ -f "$cm/build/aotc/app_multi/sgemm/aot_sgemm.cu" ]; then
		ok "cmake: app_multi has two architectures' dispatches and the linked launcher"
	else
		bad "cmake: app_multi's emitted files"
	fi
	# app_found named no KERNEL: both types of axpy (axpy_types.cpp) emitted.
	if [ -f "$cm/build/aotc/app_found/axpy_f32/_aot_axpy_f32_host.c" ] &&
	   [ -f "$cm/build/aotc/app_found/axpy_f64/_aot_axpy_f64_host.c" ]; then
		ok "cmake: app_found's kernels found from the source (axpy_f32, axpy_f64)"
	else
		bad "cmake: app_found's emitted files" "$tmp/cmake.log"
	fi
	# Nothing to do when nothing changed; a changed database emits again.
	cmake --build "$cm/build" >"$tmp/again.log" 2>&1
	touch "$cm/kernels/matmul_host.host_AMD_EPYC_12.2.0.json"
	cmake --build "$cm/build" >"$tmp/touched.log" 2>&1
	if grep -q "no work to do" "$tmp/again.log" && grep -q "aotc emit matmul_host for host" "$tmp/touched.log" &&
	   ! grep -q "aotc emit sgemm" "$tmp/touched.log"; then
		ok "cmake: a changed database emits its kernel again, only it"
	else
		bad "cmake: rebuild after touching the host database" "$tmp/again.log" "$tmp/touched.log"
	fi
else
	bad "cmake: configure and build" "$tmp/cmake.log"
fi

# aotc_add_kernel's mistakes, each in a C/C++ project (no CUDA: quick).
# expect_configure NAME PATTERN CALL: configuring a project whose last line
# is CALL fails with PATTERN in its output (lines joined: CMake wraps).
expect_configure() {
	name=$1 pattern=$2 call=$3
	# The package's CMake files are the staged install's: their argument
	# checks are tested there (integration-install), not again here.
	[ -n "${AOTC_INSTALLED:-}" ] && return 0
	p=$tmp/neg/$(echo "$name" | tr -c 'A-Za-z0-9\n' _)
	mkdir -p "$p"
	cp -r "$kernels" "$p/kernels"
	cp "$root/tests/integration/src/main_host.c" "$p/"
	printf 'cmake_minimum_required(VERSION 3.18)\nproject(neg LANGUAGES C CXX)\nfind_package(aotc 0.1 REQUIRED)\nadd_executable(app_host main_host.c)\n%s\n' \
		"$call" >"$p/CMakeLists.txt"
	if cmake_configure "$p" "$p/build" "$p/log"; then
		bad "cmake mistake: $name: the configure succeeded" "$p/log"
	elif tr '\n' ' ' <"$p/log" | tr -s ' ' | grep -Eq -- "$pattern"; then
		ok "cmake mistake: $name"
	else
		bad "cmake mistake: $name: no /$pattern/ in the output" "$p/log"
	fi
}
expect_configure "no database" "no tuning database for 'matmul_host' .*in .*/nodb .*--arch host --db nodb. on this machine" \
	'file(MAKE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/nodb)
aotc_add_kernel(app_host SOURCE kernels/matmul_host.cpp ARCH host DB nodb)'
expect_configure "no database of that architecture" "no tuning database for 'sgemm' on sm100 .*only for sm80, sm90.*--arch sm100 --db kernels. on an sm100 GPU" \
	'enable_language(CUDA)
aotc_add_kernel(app_host SOURCE kernels/sgemm.cu ARCH sm100 DB kernels)'
expect_configure "KERNEL not the source's" "no tuning database for 'matmul' .*on this machine.*leave KERNEL out .*aotc configs kernels/matmul_host.cpp" \
	'aotc_add_kernel(app_host SOURCE kernels/matmul_host.cpp ARCH host DB kernels KERNEL matmul)'
expect_configure "no kernel in the source" "plain.cpp has no kernel for aotc" \
	'file(WRITE ${CMAKE_CURRENT_SOURCE_DIR}/plain.cpp "int plain(int x) { return x; }")
aotc_add_kernel(app_host SOURCE plain.cpp ARCH host DB kernels)'
expect_configure "bad ARCH" "ARCH 'sm_90' is not a CUDA architecture" \
	'aotc_add_kernel(app_host SOURCE kernels/sgemm.cu ARCH sm_90 DB kernels)'
expect_configure "ROCm ARCH" "ARCH gfx90a: ROCm architectures are not taken here; emit with .aotc emit --arch gfx90a." \
	'aotc_add_kernel(app_host SOURCE kernels/sgemm.cu ARCH gfx90a DB kernels)'
expect_configure "no SOURCE" "SOURCE is missing" 'aotc_add_kernel(app_host ARCH host DB kernels)'
expect_configure "bad TYPES" "TYPES 'float' is not a type tag" \
	'aotc_add_kernel(app_host SOURCE kernels/axpy_types.cpp ARCH host DB kernels KERNEL axpy TYPES f32 float)'
expect_configure "not a target" "'nothere' is not a target" \
	'aotc_add_kernel(nothere SOURCE kernels/matmul_host.cpp ARCH host DB kernels)'
expect_configure "too old a version" "aotcConfig.cmake, version: 0\.1\." 'find_package(aotc 0.2 REQUIRED)'

# An error of aotc's fails the build with its message: the kernel changed
# since its database was tuned.
p=$tmp/stale
mkdir -p "$p"
cp -r "$kernels" "$p/kernels"
cp "$root/tests/integration/src/main_host.c" "$p/"
echo '// edited' >>"$p/kernels/matmul_host.cpp"
printf 'cmake_minimum_required(VERSION 3.18)\nproject(stale LANGUAGES C CXX)\nfind_package(aotc 0.1 REQUIRED)\nadd_executable(app_host main_host.c)\naotc_add_kernel(app_host SOURCE kernels/matmul_host.cpp ARCH host DB kernels)\n' \
	>"$p/CMakeLists.txt"
if cmake_configure "$p" "$p/build" "$p/log" && ! cmake --build "$p/build" >>"$p/log" 2>&1 &&
   grep -q "tuned from another version of" "$p/log"; then
	ok "cmake: a stale database fails the build with aotc's message"
else
	bad "cmake: stale database" "$p/log"
fi

# 3. meson: dependency('aotc') through pkg-config, custom_target per kernel.
ms=$tmp/meson-project
mkdir -p "$ms"
cp "$root/tests/integration/meson-project/meson.build" "$root"/tests/integration/src/* "$ms/"
cp -r "$kernels" "$ms/kernels"
if meson setup "$ms/build" "$ms" >"$tmp/meson.log" 2>&1 && meson compile -C "$ms/build" >>"$tmp/meson.log" 2>&1; then
	ok "meson: setup and compile (app, app_multi, app_host, app_types)"
	for app in app app_multi app_host app_types; do
		if "$ms/build/$app" >"$tmp/m$app.out" 2>&1; then
			ok "meson: $app runs: last line: $(tail -1 "$tmp/m$app.out")"
		else
			bad "meson: $app" "$tmp/m$app.out"
		fi
	done
	if cmp -s "$ms/build/_aot_sgemm_cuda_sm90.c" "$cm/build/aotc/app/sgemm/_aot_sgemm_cuda_sm90.c"; then
		ok "meson and CMake emitted the same dispatch"
	else
		bad "meson and CMake emitted different dispatches"
	fi
else
	bad "meson: setup and compile" "$tmp/meson.log"
fi
finish

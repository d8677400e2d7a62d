#!/bin/sh
# ROCm (docs/cli.md): with hipcc, `aotc tune --compile-only --arch gfx90a`
# compiles every variant of axpy.cu into AMDGPU code objects without a GPU;
# tune proper, without an AMD GPU, says what it found; compile emits from
# the database.
# ROCm emission (aotc emit): from the made-up ROCm databases of
# tests/codegen/rocm/ (make-db.py; no AMD GPU measured them), aotc emit
# --arch gfx90a and gfx942 write _aot_axpy_rocm_<arch>.{c,h,hip}: the same
# C dispatch as for CUDA, a HIP launcher returning hipError_t. The gfx90a
# files equal the goldens (AOTC_UPDATE=1 rewrites them); with hipcc, both
# launchers compile for their architecture (--offload-arch) and link with
# the dispatch into a program (not run: no AMD GPU here); the same databases
# emit the same bytes again. Each emit writes a manifest (_aot_axpy_rocm_<arch>.json,
# golden for gfx90a). aotc link joins the two architectures into
# aot_axpy.{c,h,hip}: the C compiles as C99 and a driver checks arch_for's
# fallback by gfx number; with hipcc the linked launcher builds.
# Usage: rocm.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"

cd "$root" || exit 1
rocm=tests/codegen/rocm
golden=tests/codegen/golden
for arch in gfx90a gfx942; do
	base=_aot_axpy_rocm_$arch
	if "$aotc" emit $rocm/axpy.cu --arch $arch --db $rocm -o "$tmp/$arch" >"$tmp/log" 2>&1; then
		ok "$arch: emit"
	else
		bad "$arch: emit" "$(cat "$tmp/log")"
		continue
	fi
	grep -q "emitted .*/$base.{c,h,hip} from .*axpy.rocm_made_up_$arch.json" "$tmp/log" &&
		ok "$arch: names its files and its database" || bad "$arch: emit's message" "$(cat "$tmp/log")"
	grep -q '^hipError_t aot_axpy_rocm_'$arch'_launch(int n, float a, const float \*x, float \*y, hipStream_t aot_stream);$' \
		"$tmp/$arch/$base.h" && ok "$arch: the header declares the HIP launcher" ||
		bad "$arch: header" "$(grep -n launch "$tmp/$arch/$base.h")"
	"$aotc" emit $rocm/axpy.cu --arch $arch --db $rocm -o "$tmp/$arch.2" >/dev/null 2>&1
	same=1
	for f in c h hip json; do cmp -s "$tmp/$arch/$base.$f" "$tmp/$arch.2/$base.$f" || same=0; done
	[ $same = 1 ] && ok "$arch: the same bytes again" || bad "$arch: emit is not deterministic"
done

# Goldens (gfx90a).
for f in c h hip json; do
	name=_aot_axpy_rocm_gfx90a.$f
	if [ "${AOTC_UPDATE:-0}" = 1 ]; then
		cp "$tmp/gfx90a/$name" "$golden/$name"
		ok "$name: golden updated"
	elif cmp -s "$tmp/gfx90a/$name" "$golden/$name"; then
		ok "$name: matches the golden"
	else
		bad "$name: differs from the golden" "$(diff "$golden/$name" "$tmp/gfx90a/$name" | head -20)"
	fi
done

# The two architectures' dispatches differ (their databases do).
if cmp -s "$tmp/gfx90a/_aot_axpy_rocm_gfx90a.c" "$tmp/gfx942/_aot_axpy_rocm_gfx942.c"; then
	bad "gfx90a and gfx942 emit the same dispatch"
else
	ok "gfx90a and gfx942 dispatches differ"
fi

# The manifests: a ROCm platform, a .hip launcher, a hipStream_t.
for arch in gfx90a gfx942; do
	if python3 - "$tmp/$arch/_aot_axpy_rocm_$arch.json" "$arch" <<'PY' >"$tmp/log" 2>&1; then
import json, sys
m = json.load(open(sys.argv[1]))
arch = sys.argv[2]
base = "_aot_axpy_rocm_" + arch
assert (m["platform"], m["arch"], m["prefix"]) == ("rocm", arch, base[1:]), m
assert m["files"] == {"dispatch": base + ".c", "header": base + ".h", "launcher": base + ".hip"}, m["files"]
assert m["hardware_id"] == "rocm_made_up_" + arch and m["libraries"] == [] and m["include"] == "axpy.cu"
assert m["select"] == [{"type": "int64_t", "name": "n"}], m["select"]
assert m["launch"][-1] == {"type": "hipStream_t", "name": "aot_stream"}, m["launch"]
PY
		ok "$arch: the manifest"
	else
		bad "$arch: the manifest" "$(cat "$tmp/log")"
	fi
done

# aotc link over the two: one ROCm dispatch, by gfx number.
mkdir -p "$tmp/link"
if "$aotc" link "$tmp/gfx942" "$tmp/gfx90a" -o "$tmp/link/aot_axpy.c" >"$tmp/log" 2>&1 &&
	grep -q "^aotc: linked axpy (gfx90a, gfx942) into .*/aot_axpy.{c,h,hip}$" "$tmp/log"; then
	ok "link gfx90a gfx942"
else
	bad "link gfx90a gfx942" "$(cat "$tmp/log")"
fi
lk=$tmp/link/aot_axpy
checks=$(
	grep -q '^static const int aot_axpy_rocm_gfxs\[2\] = {0x90a, 0x942};$' "$lk.c" || echo "no gfx table in the .c"
	grep -q '^int aot_axpy_rocm_select(int gfx, int64_t n);$' "$lk.h" || echo "no select in the .h"
	grep -q '^hipError_t aot_axpy_rocm_launch(int n, float a, const float \*x, float \*y, hipStream_t aot_stream);$' "$lk.h" ||
		echo "no launch in the .h"
	grep -q 'compute capability' "$lk.c" "$lk.h" "$lk.hip" && echo "says compute capability"
	[ -e "$lk.cu" ] && echo "wrote a .cu"
	grep -q '^#include <hip/hip_runtime.h>$' "$lk.hip" || echo "no hip_runtime.h"
	[ "$(grep -c '^#include "axpy.cu"$' "$lk.hip")" = 1 ] || echo "the kernel source not once"
	grep -q '^#include "../gfx90a/_aot_axpy_rocm_gfx90a.hip"$' "$lk.hip" || echo "no gfx90a launcher"
	grep -q '^#include "../gfx942/_aot_axpy_rocm_gfx942.hip"$' "$lk.hip" || echo "no gfx942 launcher"
	grep -q 'hipGetDeviceProperties(&prop, dev)' "$lk.hip" && grep -q 'gcnArchName' "$lk.hip" || echo "no device query"
	grep -q 'return hipErrorInvalidValue;' "$lk.hip" || echo "no hipErrorInvalidValue"
	grep -q 'cuda' "$lk.hip" && echo "CUDA in the .hip"
)
[ -z "$checks" ] && ok "the linked files are ROCm's" || bad "the linked files" "$checks"
"$aotc" link "$tmp/gfx90a" "$tmp/gfx942" -o "$tmp/link/again.c" >/dev/null 2>&1
same=1
# The link's set hash covers its file names: set aside as well.
unset_link() { sed 's/aotc_link_\([a-z_]*\)_set_[0-9a-f]\{16\}/aotc_link_\1_set_H/; /AOTC_LINK_.*_SET/s/0x[0-9a-f]\{16\}/0xH/' "$@"; }
for f in c h hip; do
	sed 's/again/aot_axpy/g; s/AGAIN/AOT_AXPY/g' "$tmp/link/again.$f" | unset_link | cmp -s - "$(unset_link "$lk.$f" >"$tmp/lk.$f"; echo "$tmp/lk.$f")" || same=0
done
[ $same = 1 ] && ok "link: the same bytes whatever the order of the directories" || bad "link is not deterministic"
cat >"$tmp/link/driver.c" <<'END'
#include <stdio.h>
#include <string.h>

#include "aot_axpy.h"
#include "../gfx90a/_aot_axpy_rocm_gfx90a.h"
#include "../gfx942/_aot_axpy_rocm_gfx942.h"

int main(void)
{
	/* The device's gfx number -> the architecture: the highest linked not
	 * newer, else the lowest. */
	static const struct { int gfx; const char *arch; } want[] = {
		{0x942, "gfx942"}, {0x950, "gfx942"}, {0x940, "gfx90a"}, {0x941, "gfx90a"},
		{0x90a, "gfx90a"}, {0x908, "gfx90a"}, {0x900, "gfx90a"}, {0, "gfx90a"},
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const char *got = aot_axpy_rocm_arch_name(want[i].gfx);
		if (strcmp(got, want[i].arch)) {
			printf("gfx %#x: %s, expected %s\n", want[i].gfx, got, want[i].arch);
			bad++;
		}
	}
	for (int64_t n = 1; n <= (INT64_C(1) << 30); n *= 7) {
		if (aot_axpy_rocm_select(0x90a, n) != aot_axpy_rocm_gfx90a_select(n) ||
		    aot_axpy_rocm_select(0x942, n) != aot_axpy_rocm_gfx942_select(n)) {
			printf("n %lld: select differs from the architecture's own\n", (long long)n);
			bad++;
		}
	}
	if (aot_axpy_rocm_num_archs() != 2 || strcmp(aot_axpy_rocm_arch_at(1), "gfx942") || aot_axpy_rocm_arch_at(2)) {
		printf("num_archs / arch_at\n");
		bad++;
	}
	return bad != 0;
}
END
if cc -std=c99 -Wall -Wextra -Werror -pedantic -c "$lk.c" -o "$tmp/link/l.o" >"$tmp/build.log" 2>&1 &&
	cc -std=c99 -Wall -Wextra -Werror -pedantic -c "$tmp/gfx90a/_aot_axpy_rocm_gfx90a.c" -o "$tmp/link/a.o" >>"$tmp/build.log" 2>&1 &&
	cc -std=c99 -Wall -Wextra -Werror -pedantic -c "$tmp/gfx942/_aot_axpy_rocm_gfx942.c" -o "$tmp/link/b.o" >>"$tmp/build.log" 2>&1 &&
	cc -std=c99 -Wall -Wextra -Werror -pedantic -c "$tmp/link/driver.c" -o "$tmp/link/d.o" >>"$tmp/build.log" 2>&1 &&
	cc "$tmp/link/d.o" "$tmp/link/l.o" "$tmp/link/a.o" "$tmp/link/b.o" -o "$tmp/link/driver" >>"$tmp/build.log" 2>&1; then
	ok "the linked .c compiles as C99"
	"$tmp/link/driver" >"$tmp/log" 2>&1 && ok "arch_for by gfx number: gfx942 -> gfx942, gfx940 -> gfx90a, gfx908 -> gfx90a (the lowest)" ||
		bad "arch_for" "$(cat "$tmp/log")"
else
	bad "the linked .c does not compile" "$(head -20 "$tmp/build.log")"
fi

# A CUDA database is not a ROCm one.
mkdir -p "$tmp/cudadb"
sed 's/"arch": "gfx90a"/"arch": "sm90"/' $rocm/axpy.rocm_made_up_gfx90a.json >"$tmp/cudadb/axpy.cuda_x.json"
"$aotc" emit $rocm/axpy.cu --arch gfx90a --db "$tmp/cudadb" -o "$tmp/none" >"$tmp/log" 2>&1
st=$?
[ $st = 3 ] && grep -q "no tuning database" "$tmp/log" && ok "gfx90a: an sm90 database is not used (exit 3)" ||
	bad "gfx90a from an sm90 database: exit $st" "$(cat "$tmp/log")"

hipcc=$(command -v hipcc || true)
if [ -z "$hipcc" ]; then
	echo "no hipcc: the HIP builds are skipped"
else
	# tune --compile-only: the variants (a fixed third of the 11, about 0.4 s
	# of hipcc each; every one with AOTC_TEST_ROCM_FULL=1) and the reference
	# compiled by hipcc into AMDGPU code objects (ELF machine 224), without
	# a GPU. tests/compile/check-rocm-templates.sh compiles the templates.
	export AOTC_CACHE_DIR="$tmp/cache"
	shard=1/3
	[ "${AOTC_TEST_ROCM_FULL:-0}" = 1 ] && shard=1/1
	"$aotc" tune $rocm/axpy.cu --arch gfx90a --compile-only --shard $shard --db "$tmp/tdb" -j 2 >"$tmp/log" 2>&1
	n=$(sed -n 's/^axpy: \([0-9]*\) of \1 configurations compiled for gfx90a with hipcc .*; reference compiled.*/\1/p' "$tmp/log")
	if [ -n "$n" ] && [ "$n" -gt 0 ]; then
		ok "gfx90a: tune --compile-only --shard $shard compiles all $n variants with hipcc"
	else
		bad "gfx90a: tune --compile-only --shard $shard" "$(tail -5 "$tmp/log")"
		n=0
	fi
	amd=0
	for f in "$tmp"/cache/*.bin; do
		python3 -c 'import sys; d = open(sys.argv[1], "rb").read(20); sys.exit(not (d[:4] == b"\x7fELF" and int.from_bytes(d[18:20], "little") == 224))' "$f" && amd=$((amd + 1))
	done
	[ "$amd" -eq $((n + 1)) ] && ok "gfx90a: the cache holds $amd AMDGPU code objects (the variants and the reference)" ||
		bad "gfx90a: $amd AMDGPU code objects in the cache, not $((n + 1))" "$(ls "$tmp/cache")"
	"$aotc" tune $rocm/axpy.cu --arch gfx90a --compile-only --shard $shard --db "$tmp/tdb" -j 2 >"$tmp/log" 2>&1
	grep -q "($n from cache)" "$tmp/log" && ok "gfx90a: a second compile-only takes them from the cache" ||
		bad "gfx90a: cache" "$(tail -3 "$tmp/log")"
	# Measuring needs an AMD GPU (tests/runtime/hip-stand-in.sh tests the
	# device side with a stand-in runtime); without one tune says what it
	# found: no ROCm runtime, or one that sees no GPU.
	"$aotc" tune $rocm/axpy.cu --arch gfx90a --db "$tmp/tdb" >"$tmp/log" 2>&1
	st=$?
	[ $st = 3 ] && grep -q "no ROCm runtime on this machine\|no AMD GPU on this machine\|no gfx90a among the AMD GPUs here" "$tmp/log" &&
		ok "gfx90a: tune without an AMD GPU says what it found (exit 3)" ||
		bad "gfx90a: tune: exit $st" "$(cat "$tmp/log")"
	# compile falls back to emitting from the database, as for CUDA without a GPU.
	"$aotc" compile $rocm/axpy.cu --arch gfx90a --db $rocm -o "$tmp/comp" >"$tmp/log" 2>&1
	st=$?
	[ $st = 0 ] && grep -q "emitting from the tuning database" "$tmp/log" && [ -f "$tmp/comp/_aot_axpy_rocm_gfx90a.hip" ] &&
		ok "gfx90a: compile emits from the database" || bad "gfx90a: compile: exit $st" "$(cat "$tmp/log")"
	unset AOTC_CACHE_DIR
	# The HIP builds of the emitted launchers: the same bytes in the sanitized
	# run (tools/test.sh), where only hipcc would differ: the normal run builds them.
	if [ "${AOTC_TEST_SANITIZED:-0}" = 1 ]; then
		echo "sanitized run: the HIP builds of the launchers are left to the normal run"
	else
		cat >"$tmp/main.hip" <<'END'
#include <hip/hip_runtime.h>
#include <cstdio>
#include "LAUNCHER_H"
int main()
{
	/* Built, not run: no AMD GPU here. The dispatch is plain C. */
	std::printf("%d\n", SELECT(1 << 20));
	hipError_t e = LAUNCH(1 << 20, 0.5f, nullptr, nullptr, 0);
	return e == hipSuccess ? 0 : 1;
}
END
		# The linked launcher: one translation unit for both architectures.
		# Debian's hipcc 5.2 knows gfx90a and gfx940 but not gfx942: gfx940
		# stands in for it (the same HIP source either way).
		sed 's/LAUNCHER_H/aot_axpy.h/; s/SELECT(/aot_axpy_rocm_select(0x90a, /; s/LAUNCH/aot_axpy_rocm_launch/' \
			"$tmp/main.hip" >"$tmp/link/main.hip"
		if "$hipcc" --offload-arch=gfx90a --offload-arch=gfx940 -std=c++17 -O2 -Wall -Werror -I "$tmp/link" -I $rocm \
				-c "$lk.hip" -o "$tmp/link/h.o" >"$tmp/build.log" 2>&1 &&
			"$hipcc" --offload-arch=gfx90a --offload-arch=gfx940 -std=c++17 -I "$tmp/link" -c "$tmp/link/main.hip" \
				-o "$tmp/link/m.o" >>"$tmp/build.log" 2>&1 &&
			"$hipcc" --offload-arch=gfx90a --offload-arch=gfx940 "$tmp/link/m.o" "$tmp/link/h.o" "$tmp/link/l.o" \
				"$tmp/link/a.o" "$tmp/link/b.o" -o "$tmp/link/prog" >>"$tmp/build.log" 2>&1; then
			ok "hipcc builds the linked launcher (--offload-arch=gfx90a --offload-arch=gfx940) and links the program"
		else
			bad "linked HIP build" "$(grep -v '^$' "$tmp/build.log" | head -20)"
		fi
		for arch in gfx90a gfx942; do
			base=_aot_axpy_rocm_$arch
			# Debian's hipcc 5.2 (clang 15) knows gfx940 but not gfx942: the
			# launcher's source is the same HIP for both.
			target=$arch
			echo '__global__ void k() {}' >"$tmp/probe.hip"
			if ! "$hipcc" --offload-arch=$arch --genco "$tmp/probe.hip" -o "$tmp/probe.co" >/dev/null 2>&1; then
				target=gfx940
				echo "note: this hipcc cannot target $arch; building $arch's launcher for $target"
			fi
			sed "s/LAUNCHER_H/$base.h/; s/SELECT/aot_axpy_rocm_${arch}_select/; s/LAUNCH/aot_axpy_rocm_${arch}_launch/" \
				"$tmp/main.hip" >"$tmp/$arch/main.hip"
			if cc -std=c99 -Wall -Wextra -Werror -pedantic -c "$tmp/$arch/$base.c" -I "$tmp/$arch" -o "$tmp/$arch/d.o" \
					>"$tmp/build.log" 2>&1 &&
				"$hipcc" --offload-arch=$target -std=c++17 -O2 -Wall -Werror -I "$tmp/$arch" -I $rocm \
					-c "$tmp/$arch/$base.hip" -o "$tmp/$arch/l.o" >>"$tmp/build.log" 2>&1 &&
				"$hipcc" --offload-arch=$target -std=c++17 -I "$tmp/$arch" -c "$tmp/$arch/main.hip" \
					-o "$tmp/$arch/m.o" >>"$tmp/build.log" 2>&1 &&
				"$hipcc" --offload-arch=$target "$tmp/$arch/m.o" "$tmp/$arch/l.o" "$tmp/$arch/d.o" \
					-o "$tmp/$arch/prog" >>"$tmp/build.log" 2>&1; then
				ok "$arch: hipcc builds the launcher (--offload-arch=$target) and links the program"
			else
				bad "$arch: HIP build" "$(grep -v '^$' "$tmp/build.log" | head -20)"
			fi
		done
	fi
fi
finish

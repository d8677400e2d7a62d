#!/bin/sh
# aotc link (docs/spec.md §3, §4): per-architecture outputs emitted from copies of the
# committed H200 database relabelled sm80, sm90 and sm100 (sm80's and sm100's
# times skewed so that their dispatches differ), linked into one dispatch; the
# linked C compiles warning-free as C99, picks the architecture by docs/spec.md §4's
# rule, forwards select to it; the linked .cu compiles with nvcc; bad inputs
# fail with a message and write nothing. link reads what emit's manifests
# (_aot_K_cuda_A.json) say, never the C: the bad inputs are bad manifests.
# ROCm's link is in rocm.sh.
# Usage: link.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db=$root/templates/sgemm.cuda_NVIDIA_H200_13.0.json
CFLAGS="-std=c99 -Wall -Wextra -Werror -pedantic"

. "$(dirname "$0")/../lib.sh"
no() { bad "$1" "$([ -f "$tmp/out" ] && head -15 "$tmp/out")"; }

# expect STATUS PATTERN NAME CMD...: CMD exits STATUS, output matches PATTERN.
expect() {
	want=$1
	pattern=$2
	name=$3
	shift 3
	"$@" >"$tmp/out" 2>&1 </dev/null
	got=$?
	if [ "$got" -ne "$want" ]; then
		no "$name: exit $got, expected $want"
	elif ! grep -Eq -- "$pattern" "$tmp/out"; then
		no "$name: output does not match /$pattern/"
	else
		ok "$name"
	fi
}

# One database per architecture. Skewing the times of some configurations
# (cuBLAS, which the H200 dispatch runs everywhere, and BM == 128 on sm80;
# cuBLAS and BM == 32 on sm100) makes the three dispatches differ, so
# forwarding to the wrong architecture would show. Each is cut to every
# eighth variant and cuBLAS (44 of 341; every shape): three dispatches to
# link are the point, not what 341 variants learn.
for a in sm80 sm90 sm100; do
	mkdir -p "$tmp/db_$a" "$tmp/$a"
	out=$tmp/db_$a/sgemm.cuda_NVIDIA_H200_13.0.json
	python3 "$root/tests/cut-db.py" "$db" "$out" --configs 8 --externs || exit 1
	python3 - "$out" "$a" <<'PY' || exit 1
import json, sys
dst, arch = sys.argv[1:]
d = json.load(open(dst))
d["hardware"]["arch"] = arch
slow = {"sm80": 128, "sm100": 32}.get(arch)
if slow is not None:
    bad = {i for i, c in enumerate(d["configs"]) if c.get("extern") or c["values"][0] == slow}
    for m in d["measurements"]:
        if m["config"] in bad and "time_ms" in m:
            m["time_ms"] *= 3
            if "samples" in m:
                m["samples"] = [s * 3 for s in m["samples"]]
json.dump(d, open(dst, "w"))
PY
	expect 0 "emitted" "emit $a" "$aotc" emit "$root/templates/sgemm.cu" --arch "$a" \
		--db "$tmp/db_$a" -o "$tmp/$a"
done

# The manifests: what emit wrote, for link and build systems (docs/cli.md).
for a in sm80 sm90 sm100; do
	if python3 - "$tmp/$a/_aot_sgemm_cuda_$a.json" "$a" "$tmp/$a/_aot_sgemm_cuda_$a.c" <<'PY' >"$tmp/out" 2>&1; then
import json, re, sys
path, arch, c = sys.argv[1:]
text = open(path).read()
m = json.loads(text)
base = "_aot_sgemm_cuda_" + arch
nv = int(re.search(r"#define AOT_NV (\d+)", open(c).read()).group(1))
want = {
    "aotc_manifest": 1, "kernel": "sgemm", "arch": arch, "platform": "cuda",
    "prefix": base[1:], "files": {"dispatch": base + ".c", "header": base + ".h", "launcher": base + ".cu"},
    "hardware_id": "cuda_NVIDIA_H200_13.0", "libraries": ["cublas"], "include": "sgemm.cu",
    "select": [{"type": "int64_t", "name": n} for n in "MNK"], "variants": nv,
}
for k, v in want.items():
    assert m.get(k) == v, (k, m.get(k), v)
assert list(m)[:3] == ["aotc_manifest", "aotc_version", "kernel"], list(m)
assert [p["name"] for p in m["launch"]] == ["M", "N", "K", "alpha", "A", "B", "beta", "C", "aot_stream"]
assert m["launch"][4] == {"type": "const float *", "name": "A"} and m["launch"][-1]["type"] == "cudaStream_t"
assert text == json.dumps(m, indent=2) + "\n", "not 2-space JSON with a final newline"
PY
		ok "$a: the manifest says what emit wrote"
	else
		no "$a: manifest"
	fi
done

# edit SRC DST PYTHON: DST is manifest SRC after PYTHON (on m) ran.
edit() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
src, dst, code = sys.argv[1:]
m = json.load(open(src))
exec(code)
open(dst, "w").write(json.dumps(m, indent=2) + "\n")
PY
}

mkdir -p "$tmp/link"
expect 0 "^aotc: linked sgemm" "link sm80 sm90 sm100" "$aotc" link "$tmp/sm80" "$tmp/sm90" "$tmp/sm100" \
	-o "$tmp/link/aot_sgemm.c"
for f in c h cu; do
	if [ -f "$tmp/link/aot_sgemm.$f" ]; then ok "wrote aot_sgemm.$f"; else no "no aot_sgemm.$f"; fi
done

# Same inputs, same bytes; and the order of the directories does not matter.
mkdir -p "$tmp/link2"
"$aotc" link "$tmp/sm100" "$tmp/sm90" "$tmp/sm80" -o "$tmp/link2/aot_sgemm.c" >"$tmp/out" 2>&1
same=1
for f in c h cu; do
	cmp -s "$tmp/link/aot_sgemm.$f" "$tmp/link2/aot_sgemm.$f" || same=0
done
if [ "$same" -eq 1 ]; then ok "deterministic, independent of directory order"; else no "outputs differ between runs"; fi

# The driver: arch_for / arch_name per docs/spec.md §4 with tuned {80, 90, 100}, and
# select(cc, ...) equal to the chosen architecture's own select.
cat >"$tmp/link/driver.c" <<'C'
#include <stdio.h>
#include <string.h>

#include "aot_sgemm.h"
#include "../sm80/_aot_sgemm_cuda_sm80.h"
#include "../sm90/_aot_sgemm_cuda_sm90.h"
#include "../sm100/_aot_sgemm_cuda_sm100.h"

typedef int (*select_fn)(int64_t, int64_t, int64_t);

int main(void)
{
	static const struct { int cc; const char *arch; } want[] = {
		{50, "sm80"}, {70, "sm80"}, {75, "sm80"}, {80, "sm80"}, {86, "sm80"}, {89, "sm80"},
		{90, "sm90"}, {100, "sm100"}, {103, "sm100"}, {120, "sm100"}, {130, "sm100"},
	};
	static const char *const archs[] = {"sm80", "sm90", "sm100"};
	static const select_fn own[] = {aot_sgemm_cuda_sm80_select, aot_sgemm_cuda_sm90_select,
	                                aot_sgemm_cuda_sm100_select};
	static const int64_t shapes[][3] = {
		{128, 128, 256}, {256, 512, 1024}, {1024, 1024, 1024}, {4096, 4096, 4096},
		{4096, 128, 256}, {128, 4096, 4096}, {2048, 2048, 4096}, {512, 256, 1025},
	};
	int bad = 0, differ = 0;
	if (aot_sgemm_cuda_num_archs() != 3 || aot_sgemm_cuda_arch_at(-1) || aot_sgemm_cuda_arch_at(3)) {
		printf("num_archs/arch_at out of range wrong\n");
		bad++;
	}
	for (int i = 0; i < 3; i++)
		if (!aot_sgemm_cuda_arch_at(i) || strcmp(aot_sgemm_cuda_arch_at(i), archs[i])) {
			printf("arch_at(%d) is %s, not %s\n", i, aot_sgemm_cuda_arch_at(i), archs[i]);
			bad++;
		}
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		int cc = want[i].cc, a = aot_sgemm_cuda_arch_for(cc);
		const char *name = aot_sgemm_cuda_arch_name(cc);
		if (a < 0 || a > 2 || strcmp(archs[a], want[i].arch) || strcmp(name, want[i].arch)) {
			printf("cc %d: arch_for %d, arch_name %s; expected %s\n", cc, a, name, want[i].arch);
			bad++;
			continue;
		}
		for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
			const int64_t *x = shapes[s];
			int got = aot_sgemm_cuda_select(cc, x[0], x[1], x[2]), exp = own[a](x[0], x[1], x[2]);
			if (got != exp) {
				printf("cc %d shape %lld,%lld,%lld: select %d, %s's own %d\n", cc, (long long)x[0],
				       (long long)x[1], (long long)x[2], got, archs[a], exp);
				bad++;
			}
			const char *vn = got >= 0 ? aot_sgemm_cuda_variant_name(cc, got) : NULL;
			if (got >= 0 && (!vn || (strncmp(vn, "sgemm<", 6) && strcmp(vn, "sgemm_cublas")))) {
				printf("cc %d: variant_name(%d) is %s\n", cc, got, vn ? vn : "NULL");
				bad++;
			}
		}
	}
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		const int64_t *x = shapes[s];
		if (own[0](x[0], x[1], x[2]) != own[1](x[0], x[1], x[2]) ||
		    own[1](x[0], x[1], x[2]) != own[2](x[0], x[1], x[2]))
			differ++;
	}
	if (!differ) {
		printf("the three architectures' dispatches agree on every shape: the test proves little\n");
		bad++;
	}
	printf("%s\n", bad ? "driver: wrong" : "driver: ok");
	return bad != 0;
}
C
for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || continue
	objs=""
	err=0
	for a in sm80 sm90 sm100; do
		$cc $CFLAGS -c "$tmp/$a/_aot_sgemm_cuda_$a.c" -o "$tmp/link/$a.$cc.o" >"$tmp/out" 2>&1 || err=1
		objs="$objs $tmp/link/$a.$cc.o"
	done
	$cc $CFLAGS -c "$tmp/link/aot_sgemm.c" -o "$tmp/link/aot_sgemm.$cc.o" >>"$tmp/out" 2>&1 || err=1
	$cc $CFLAGS -c "$tmp/link/driver.c" -o "$tmp/link/driver.$cc.o" >>"$tmp/out" 2>&1 || err=1
	if [ "$err" -ne 0 ]; then
		no "$cc $CFLAGS: the linked dispatch does not compile"
		continue
	fi
	ok "$cc $CFLAGS compiles the linked dispatch"
	# shellcheck disable=SC2086
	if $cc $objs "$tmp/link/aot_sgemm.$cc.o" "$tmp/link/driver.$cc.o" -o "$tmp/link/driver.$cc" >"$tmp/out" 2>&1 &&
		"$tmp/link/driver.$cc" >"$tmp/out" 2>&1; then
		ok "$cc: arch_for, arch_name and select follow docs/spec.md §4"
	else
		no "$cc: driver"
	fi
done

# The linked launcher compiles with nvcc (no GPU needed); skipped without one.
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
if [ -n "$nvcc" ]; then
	if "$nvcc" -arch=sm_90 -std=c++17 -I "$root/templates" -I "$tmp/link" -c "$tmp/link/aot_sgemm.cu" -o "$tmp/link/aot_sgemm.cu.o" >"$tmp/out" 2>&1; then
		ok "nvcc -arch=sm_90 -c aot_sgemm.cu"
	else
		no "nvcc -arch=sm_90 -c aot_sgemm.cu"
	fi
else
	echo "SKIP nvcc: not found"
fi

# One architecture alone: every device gets it.
mkdir -p "$tmp/one"
expect 0 "^aotc: linked sgemm" "link one architecture" "$aotc" link "$tmp/sm90" -o "$tmp/one/one.c"
if grep -q 'aot_sgemm_cuda_sm90_select' "$tmp/one/one.c" && gcc $CFLAGS -c "$tmp/one/one.c" -o "$tmp/one/one.o" >"$tmp/out" 2>&1; then
	ok "single-architecture link compiles"
else
	no "single-architecture link"
fi

# Two kernels in one directory: one output covering both, each with its own
# architectures.
cp -R "$tmp/sm90" "$tmp/multi"
expect 0 "emitted" "emit softmax sm90" "$aotc" emit "$root/templates/softmax.cu" --arch sm90 \
	--db "$root/templates" -o "$tmp/multi"
mkdir -p "$tmp/mout"
expect 0 "^aotc: linked sgemm \(sm80, sm90\); softmax \(sm90\)" "link two kernels" \
	"$aotc" link "$tmp/sm80" "$tmp/multi" -o "$tmp/mout/all.c"
if gcc $CFLAGS -c "$tmp/mout/all.c" -o "$tmp/mout/all.o" >"$tmp/out" 2>&1 &&
	grep -q 'int aot_softmax_cuda_select(int cc, int64_t rows, int64_t cols)' "$tmp/mout/all.c" &&
	grep -q 'aot_softmax_cuda_launch' "$tmp/mout/all.cu"; then
	ok "two kernels: both dispatches, compiles"
else
	no "two kernels"
fi

# Bad inputs: a message, exit 1, nothing written.
mkdir -p "$tmp/empty" "$tmp/bad"
expect 1 "$tmp/empty.*no emitted" "empty directory" "$aotc" link "$tmp/sm80" "$tmp/empty" -o "$tmp/bad/x.c"
expect 1 "cannot read directory" "missing directory" "$aotc" link "$tmp/nope" -o "$tmp/bad/x.c"
cp -R "$tmp/sm90" "$tmp/sm90copy"
expect 1 "sm90copy.*both for compute capability 9.0|both for compute capability 9.0.*sm90copy" \
	"same kernel and architecture twice" "$aotc" link "$tmp/sm90" "$tmp/sm90copy" -o "$tmp/bad/x.c"
# sm90a counts as 90: linking it beside sm90 is ambiguous.
mkdir -p "$tmp/sm90a"
for f in c h cu json; do
	sed 's/_cuda_sm90/_cuda_sm90a/g; s/CUDA_SM90_H/CUDA_SM90A_H/g; s/"arch": "sm90"/"arch": "sm90a"/' \
		"$tmp/sm90/_aot_sgemm_cuda_sm90.$f" >"$tmp/sm90a/_aot_sgemm_cuda_sm90a.$f"
done
expect 1 "both for compute capability 9.0" "sm90 and sm90a" "$aotc" link "$tmp/sm90" "$tmp/sm90a" -o "$tmp/bad/x.c"
mkdir -p "$tmp/link90a"
expect 0 "^aotc: linked sgemm" "link sm80 sm90a" "$aotc" link "$tmp/sm80" "$tmp/sm90a" -o "$tmp/link90a/l.c"
if grep -q '{80, 90}' "$tmp/link90a/l.c" && grep -q '"sm90a"' "$tmp/link90a/l.c"; then
	ok "sm90a is compute capability 90"
else
	no "sm90a table"
fi
# Signatures that differ between architectures.
m100=$tmp/sm100/_aot_sgemm_cuda_sm100.json
cp -R "$tmp/sm100" "$tmp/sig"
edit "$m100" "$tmp/sig/_aot_sgemm_cuda_sm100.json" 'del m["select"][2]'
expect 1 "_aot_sgemm_cuda_sm100.json: error: kernel sgemm: the select signature for sm100 .* differs" \
	"select signatures differ" "$aotc" link "$tmp/sm90" "$tmp/sig" -o "$tmp/bad/x.c"
edit "$m100" "$tmp/sig/_aot_sgemm_cuda_sm100.json" 'm["launch"][7]["type"] = "double *"'
expect 1 "launch signature for sm100 \(.*double \*C, cudaStream_t aot_stream\) differs" \
	"launch signatures differ" "$aotc" link "$tmp/sm90" "$tmp/sig" -o "$tmp/bad/x.c"
# Code in a type never reaches the output.
edit "$m100" "$tmp/sig/_aot_sgemm_cuda_sm100.json" 'm["launch"][0]["type"] = "int); int evil(void) { return 0; } void f(int"'
expect 1 '"launch"\[0\]: its type is not a type aotc writes' "injected code rejected" \
	"$aotc" link "$tmp/sig" -o "$tmp/bad/x.c"
edit "$m100" "$tmp/sig/_aot_sgemm_cuda_sm100.json" 'm["launch"][-1]["type"] = "hipStream_t"'
expect 1 '"launch"\[8\]: the last is not the stream' "a ROCm stream in a CUDA manifest" \
	"$aotc" link "$tmp/sig" -o "$tmp/bad/x.c"
# A manifest JSON cannot read: the position; a newer format; and every
# error of one run at once.
cp -R "$tmp/sm90" "$tmp/corrupt"
sed '5s/,$//' "$tmp/sm90/_aot_sgemm_cuda_sm90.json" >"$tmp/corrupt/_aot_sgemm_cuda_sm90.json"
expect 1 "_aot_sgemm_cuda_sm90.json:6:[0-9]+: error: not a manifest aotc emit writes" "corrupt manifest" \
	"$aotc" link "$tmp/corrupt" -o "$tmp/bad/x.c"
edit "$tmp/sm90/_aot_sgemm_cuda_sm90.json" "$tmp/corrupt/_aot_sgemm_cuda_sm90.json" 'm["aotc_manifest"] = 2'
expect 1 "written by a newer aotc \(manifest format 2" "manifest from a newer aotc" \
	"$aotc" link "$tmp/corrupt" -o "$tmp/bad/x.c"
edit "$tmp/sm90/_aot_sgemm_cuda_sm90.json" "$tmp/corrupt/_aot_sgemm_cuda_sm90.json" \
	'm["libraries"] = ["c blas"]; m["include"] = "a\"b.cu"; del m["variants"]'
"$aotc" link "$tmp/corrupt" -o "$tmp/bad/x.c" >"$tmp/out" 2>&1
if [ "$(grep -c 'error:' "$tmp/out")" -eq 3 ]; then ok "every error of a manifest reported"; else no "errors of a manifest: $(grep -c 'error:' "$tmp/out")"; fi
# Names that are not C identifiers, and architectures that are not ones.
mkdir -p "$tmp/name"
cp "$tmp/sm90/"_aot_sgemm_cuda_sm90.* "$tmp/name/"
edit "$tmp/sm90/_aot_sgemm_cuda_sm90.json" "$tmp/name/_aot_sgemm_cuda_sm90.json" 'm["kernel"] = "bad-name"'
expect 1 "kernel 'bad-name' is not a C identifier" "kernel name not an identifier" "$aotc" link "$tmp/name" -o "$tmp/bad/x.c"
edit "$tmp/sm90/_aot_sgemm_cuda_sm90.json" "$tmp/name/_aot_sgemm_cuda_sm90.json" 'm["arch"] = "sm9x"'
expect 1 "architecture 'sm9x' is not one this aotc knows" "architecture not an architecture" "$aotc" link "$tmp/name" -o "$tmp/bad/x.c"
edit "$tmp/sm90/_aot_sgemm_cuda_sm90.json" "$tmp/name/_aot_sgemm_cuda_sm90.json" 'm["arch"] = "sm80"'
expect 1 "whose manifest is _aot_sgemm_cuda_sm80.json" "manifest renamed" "$aotc" link "$tmp/name" -o "$tmp/bad/x.c"
# A manifest without its launcher (or .c) beside it.
mkdir -p "$tmp/half" && cp "$tmp/sm90/_aot_sgemm_cuda_sm90.h" "$tmp/sm90/_aot_sgemm_cuda_sm90.c" \
	"$tmp/sm90/_aot_sgemm_cuda_sm90.json" "$tmp/half/"
expect 1 "_aot_sgemm_cuda_sm90.cu' is missing beside '.*_aot_sgemm_cuda_sm90.json'" "missing launcher" \
	"$aotc" link "$tmp/half" -o "$tmp/bad/x.c"
# Emitted files without manifests: an older aotc's.
rm "$tmp/half/_aot_sgemm_cuda_sm90.json"
expect 1 "no emitted files with a manifest.*emit them again" "files without a manifest" \
	"$aotc" link "$tmp/half" -o "$tmp/bad/x.c"
# One platform per link: CUDA and ROCm apart; a host kernel has nothing to link.
expect 0 "emitted" "emit axpy gfx90a" "$aotc" emit "$root/tests/codegen/rocm/axpy.cu" --arch gfx90a \
	--db "$root/tests/codegen/rocm" -o "$tmp/rocm"
expect 1 "is CUDA \(sm90\) and .* is ROCm \(gfx90a\): one link joins one platform; link the CUDA and the ROCm directories separately" \
	"CUDA and ROCm mixed" "$aotc" link "$tmp/sm90" "$tmp/rocm" -o "$tmp/bad/x.c"
expect 0 "emitted" "emit matmul_host" "$aotc" emit "$root/templates/matmul_host.cpp" --arch host \
	--db "$root/tests/codegen" -o "$tmp/host"
expect 1 "host/?' holds only host kernels' files \(_aot_matmul_host_host.json\): nothing to link" \
	"only host manifests" "$aotc" link "$tmp/host" -o "$tmp/bad/x.c"
# Host files in one build directory with GPU ones are left out.
cp -R "$tmp/sm90" "$tmp/withhost" && cp "$tmp/host/"_aot_matmul_host_host.* "$tmp/withhost/"
mkdir -p "$tmp/hout"
expect 0 "^aotc: linked sgemm \(sm90\) into" "host files beside CUDA ones are left out" \
	"$aotc" link "$tmp/withhost" -o "$tmp/hout/l.c"
# -o must name a .c file, and not one of emit's.
expect 2 "must name the C file" "-o without .c" "$aotc" link "$tmp/sm90" -o "$tmp/bad/x.h"
expect 2 "_aot_" "-o over an emitted name" "$aotc" link "$tmp/sm90" -o "$tmp/bad/_aot_sgemm_cuda_sm90.c"
expect 2 "directory" "-o in a missing directory" "$aotc" link "$tmp/sm90" -o "$tmp/nodir/x.c"
if [ -z "$(ls "$tmp/bad")" ]; then ok "failed links wrote nothing"; else no "failed links left files: $(ls "$tmp/bad")"; fi
# The linked .cu includes the kernel source as the per-architecture ones do
# (by file name), once; aotc.h is copied beside it; --include-as overrides.
if [ "$(grep -c '^#include "sgemm.cu"$' "$tmp/link/aot_sgemm.cu")" -eq 1 ] && [ -f "$tmp/link/aotc.h" ]; then
	ok "linked .cu includes sgemm.cu by name, aotc.h beside it"
else
	no "linked .cu include / aotc.h: $(grep '^#include' "$tmp/link/aot_sgemm.cu" | head -3)"
fi
mkdir -p "$tmp/inc"
expect 0 "^aotc: linked sgemm" "link --include-as" "$aotc" link "$tmp/sm90" --include-as kernels/sgemm.cu \
	-o "$tmp/inc/l.c"
if grep -q '^#include "kernels/sgemm.cu"$' "$tmp/inc/l.cu" && ! grep -q '^#include "sgemm.cu"$' "$tmp/inc/l.cu"; then
	ok "--include-as names the kernel source in the linked .cu"
else
	no "--include-as in the linked .cu"
fi
expect 1 "names one kernel source" "--include-as with two sources" \
	"$aotc" link "$tmp/sm80" "$tmp/multi" --include-as k.cu -o "$tmp/bad/x.c"
expect 2 "cannot be written in an #include" "--include-as with a quote" \
	"$aotc" link "$tmp/sm90" --include-as 'a"b.cu' -o "$tmp/bad/x.c"
# Usage errors.
expect 2 "usage: aotc link" "no -o" "$aotc" link "$tmp/sm90"
expect 2 "usage: aotc link" "no directory" "$aotc" link -o "$tmp/bad/x.c"

finish

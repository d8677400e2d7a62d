#!/bin/sh
# The emitted files compile as docs/spec.md §8 promises: the dispatch .c as strict
# C99 under gcc and clang, the header from C99 and from C++, the CUDA
# launchers under nvcc for sm_90 (skipped without nvcc), the host launcher
# under g++.
# Usage: emit-compile.sh AOTC REPO_ROOT   (env NVCC overrides the compiler)
aotc=$1
root=$2
# Absolute paths: the script changes directory.
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../lib.sh"

# try NAME CMD...: CMD succeeds; its output is shown when it does not.
try() {
	name=$1
	shift
	if "$@" >"$tmp/log" 2>&1; then
		ok "$name"
	else
		bad "$name" "$*" "$(head -20 "$tmp/log")"
	fi
}

if [ -z "${NVCC:-}" ]; then
	if command -v nvcc >/dev/null 2>&1; then NVCC=nvcc
	elif [ -x /usr/local/cuda/bin/nvcc ]; then NVCC=/usr/local/cuda/bin/nvcc
	fi
fi

cd "$root" || exit 1
out=$tmp/out
mkdir -p "$out"
for spec in "templates/sgemm.cu sm90 templates" "templates/softmax.cu sm90 templates" \
	"templates/matmul_host.cpp host tests/codegen"; do
	set -- $spec
	if "$aotc" emit "$1" --arch "$2" --db "$3" -o "$out" >"$tmp/log" 2>&1; then
		ok "emit $1"
	else
		bad "emit $1" "$(tail -5 "$tmp/log")"
	fi
done

strict_c="-std=c99 -Wall -Wextra -Werror -pedantic"
for base in _aot_sgemm_cuda_sm90 _aot_softmax_cuda_sm90 _aot_matmul_host_host; do
	pfx=${base#_}
	# The dispatch: strict C99, no include path (it needs only its header,
	# next to it, and <stdint.h>/<stddef.h>).
	for cc in gcc clang; do
		try "$base.c: $cc $strict_c" $cc $strict_c -c -o "$tmp/$base.$cc.o" "$out/$base.c"
	done
	# No include beyond <stdint.h>/<stddef.h> and its own header.
	incs=$(grep '^[[:space:]]*#[[:space:]]*include' "$out/$base.c" |
		grep -v -e '<stdint.h>' -e '<stddef.h>' -e "\"$base.h\"")
	if [ -z "$incs" ]; then ok "$base.c: includes only stdint.h, stddef.h and its header"
	else bad "$base.c: includes only stdint.h, stddef.h and its header" "$incs"; fi

	# The header alone, from C99 and from C++: the declarations are usable
	# (each function called, so a wrong declaration cannot hide).
	cat >"$tmp/use_$base.c" <<END
#include "$base.h"
#include "$base.h" /* the include guard works */
int use(void);
int use(void)
{
	const int64_t *p = ${pfx}_variant_params(0);
	const char *n = ${pfx}_variant_name(0);
	return ${pfx}_num_variants() + (p != NULL) + (n != NULL);
}
END
	cp "$tmp/use_$base.c" "$tmp/use_$base.cpp"
	try "$base.h: from C99 (gcc)" gcc $strict_c -I "$out" -c -o "$tmp/u.o" "$tmp/use_$base.c"
	try "$base.h: from C99 (clang)" clang $strict_c -I "$out" -c -o "$tmp/u.o" "$tmp/use_$base.c"
	try "$base.h: from C++17 (g++)" g++ -std=c++17 -Wall -Wextra -Werror -I "$out" \
		-c -o "$tmp/u.o" "$tmp/use_$base.cpp"
done

# The C driver and the launcher object together: the symbols the header
# declares are the ones the .c defines (links, no undefined reference).
cat >"$tmp/link_host.cpp" <<'END'
#include "_aot_matmul_host_host.h"
int main() { return aot_matmul_host_host_select(64, 64, 64) < 0; }
END
# The launchers find the kernel source through the kernel's directory and
# aotc.h in the output directory: no installed aotc.h.
try "_aot_matmul_host_host.cpp: g++ -std=c++17" g++ -std=c++17 -Wall -Wextra -Werror \
	-I "$root/templates" -I "$out" -c -o "$tmp/launch_host.o" "$out/_aot_matmul_host_host.cpp"
try "host: .c + .cpp + a C++ main link" g++ -std=c++17 -I "$out" -o "$tmp/link_host" \
	"$tmp/link_host.cpp" "$tmp/_aot_matmul_host_host.gcc.o" "$tmp/launch_host.o"
try "host: the linked program selects a variant" "$tmp/link_host"

if [ -z "${NVCC:-}" ]; then
	echo "SKIP nvcc not found (PATH, /usr/local/cuda/bin): CUDA launchers not compiled"
else
	for base in _aot_sgemm_cuda_sm90 _aot_softmax_cuda_sm90; do
		try "$base.cu: nvcc -arch=sm_90 -std=c++17" "$NVCC" -arch=sm_90 -std=c++17 \
			-Werror all-warnings -I "$root/templates" -I "$out" -c -o "$tmp/$base.cu.o" "$out/$base.cu"
		# The launcher has C linkage, as the header declares it.
		if nm "$tmp/$base.cu.o" 2>/dev/null | grep -q " T ${base#_}_launch\$"; then
			ok "$base.cu: defines ${base#_}_launch with C linkage"
		else
			bad "$base.cu: defines ${base#_}_launch with C linkage" \
				"$(nm "$tmp/$base.cu.o" 2>&1 | grep launch | head -5)"
		fi
		# The launch declaration is visible to host C++ that includes
		# the CUDA runtime first, and matches the launcher's definition.
		cudainc=$(dirname "$(dirname "$(command -v "$NVCC")")")/include
		pfx=${base#_}
		cat >"$tmp/call_$base.cpp" <<END
#include <cuda_runtime.h>
#include "$base.h"
decltype(&${pfx}_launch) ptr = &${pfx}_launch;
END
		try "$base.h: declares the launcher after <cuda_runtime.h> (g++)" g++ -std=c++17 \
			-Wall -Wextra -Werror -I "$cudainc" -I "$out" -c -o "$tmp/c.o" "$tmp/call_$base.cpp"
	done
fi

finish

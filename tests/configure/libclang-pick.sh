#!/bin/sh
# meson setup must pass over an llvm-config without libclang beside it: a
# fake llvm-config-19 that is really llvm-14's (whose libclang-14-dev is not
# installed on a fresh Debian 12) comes first on PATH, and setup must still
# pick a libclang that has clang-c/Index.h. Configures only, into a temp dir.
# Usage: libclang-pick.sh REPO_ROOT
root=$1
real=/usr/lib/llvm-14/bin/llvm-config
[ -x "$real" ] || { echo "SKIP: no $real"; exit 77; }
command -v meson >/dev/null || { echo "SKIP: no meson on PATH"; exit 77; }
usable=
for n in 20 19 18 17 16 15 14; do
	d=/usr/lib/llvm-$n
	if [ -e "$d/lib/libclang.so" ] && [ -f "$d/include/clang-c/Index.h" ]; then usable=$d; break; fi
done
[ -n "$usable" ] || { echo "SKIP: no /usr/lib/llvm-N with libclang.so and clang-c/Index.h"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
ln -s "$real" "$tmp/bin/llvm-config-19"
if ! PATH=$tmp/bin:$PATH meson setup "$tmp/build" "$root" >"$tmp/log" 2>&1; then
	echo "FAIL: meson setup failed with a fake llvm-config-19 first on PATH"
	sed 's/^/    /' "$tmp/log"
	exit 1
fi
fail=0
if ! grep -q "^Program llvm-config-19 found: YES ($tmp/bin/llvm-config-19)" "$tmp/log"; then
	echo "FAIL: meson did not see the fake llvm-config-19"; fail=1
fi
picked=$(grep '^Message: libclang: ' "$tmp/log")
echo "$picked"
libdir=$(echo "$picked" | sed -n 's/^Message: libclang: [^ ]* from \([^ ]*\) (headers \([^;]*\);.*/\1/p')
incdir=$(echo "$picked" | sed -n 's/^Message: libclang: [^ ]* from \([^ ]*\) (headers \([^;]*\);.*/\2/p')
if [ -z "$libdir" ]; then
	echo "FAIL: no 'libclang: VERSION from LIBDIR (headers INCDIR; ...)' message"; fail=1
elif [ ! -f "$incdir/clang-c/Index.h" ] || ! ls "$libdir"/libclang.* >/dev/null 2>&1; then
	echo "FAIL: picked $libdir and $incdir, which lack libclang or clang-c/Index.h"; fail=1
fi
[ "$fail" -eq 0 ] && echo "PASS: picked $libdir"
exit "$fail"

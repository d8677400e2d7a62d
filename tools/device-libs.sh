# Sourced by the scripts that run a Debian build of aotc on the GPU machine
# (tools/device-tune.sh, examples/run-on-h200.sh), from the repository root.
# Debian names libclang-16 by its full version (libclang-16.so.16.0.6); give
# the loader that name for whatever libclang-16 the machine has.
if ldd build/aotc | grep -q 'not found'; then
	mkdir -p /tmp/aotc-lib
	for lib in $(ldd build/aotc | awk '/not found/ {print $1}'); do
		base=${lib%%.so*}
		cand=$(ls /usr/lib/x86_64-linux-gnu/$base.so* /usr/lib/llvm-16/lib/$base.so* 2>/dev/null | head -1)
		echo "linking $lib -> $cand"
		[ -n "$cand" ] && ln -sf "$cand" "/tmp/aotc-lib/$lib"
	done
	export LD_LIBRARY_PATH=/tmp/aotc-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

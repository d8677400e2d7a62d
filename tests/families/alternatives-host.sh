#!/bin/sh
# AOTC_ALTERNATIVE (docs/annotations.md): functions that compete in one
# dispatch, tuned for real on the host: tests/families/rowsum_alt.cpp (a
# planted answer: rowsum wins on small shapes, rowsum_setup on large ones;
# rowsum_twopass, two passes through scratch, is measured and verified on
# every shape), emitted and called from C and C++; a second compile is
# byte-identical; configs, report, the IR as JSON and hostile IR. The
# planted answer is timed: the test has the machine to itself
# (tests/meson.build). alternatives-built.sh: the errors, CUDA and HIP.
# Usage: alternatives-host.sh AOTC REPO_ROOT
. "$(dirname "$0")/setup.sh"

# ---- host: tuned for real -------------------------------------------------
cd "$tmp" || exit 1
cp "$src/rowsum_alt.cpp" .
if "$aotc" compile rowsum_alt.cpp --arch host --db db -o out >run1.log 2>&1; then
	ok "host: aotc compile tunes the three functions into one database and emits one dispatch"
else
	bad "host: aotc compile" "$(tail -15 run1.log)"
	finish
fi
if python3 - db/rowsum.host_*.json >dbcheck.log 2>&1 <<'END'
import json, sys
d = json.load(open(sys.argv[1]))
fn = {c["name"]: c.get("function") for c in d["configs"]}
want = {"rowsum<1>": None, "rowsum<4>": None, "rowsum_setup": "rowsum_setup",
        "rowsum_twopass<2>": "rowsum_twopass", "rowsum_twopass<8>": "rowsum_twopass"}
ok = fn == want
names = [c["name"] for c in d["configs"]]
two = [m for m in d["measurements"] if names[m["config"]].startswith("rowsum_twopass")]
ok &= len(two) == 2 * len(d["shapes"]) and all(m["status"] == "ok" for m in two)
print(fn, [m["status"] for m in two])
sys.exit(not ok)
END
then
	ok "host: the database holds every variant of the three functions, named by function; rowsum_twopass verified on every shape"
else
	bad "host: database" "$(cat dbcheck.log)"
fi

cat >sel.c <<'END'
#include <stdio.h>
#include <string.h>
#include "_aot_rowsum_host.h"
int main(void)
{
	/* rows, cols, the function the planted answer wants (measured shapes,
	 * then ones between and beyond) */
	static const struct { long long r, c; const char *want; } t[] = {
		{16, 64, "rowsum<"}, {2048, 2048, "rowsum_setup"}, {8, 32, "rowsum<"},
		{4096, 4096, "rowsum_setup"}, {16, 2048, "rowsum<"}, {3000, 1500, "rowsum_setup"},
	};
	int bad = 0;
	for (int i = 0; i < 6; i++) {
		int v = aot_rowsum_host_select(t[i].r, t[i].c);
		const char *n = aot_rowsum_host_variant_name(v);
		printf("%lld x %lld: %s\n", t[i].r, t[i].c, n ? n : "(none)");
		bad += !n || strncmp(n, t[i].want, strlen(t[i].want)) != 0 ||
		       (t[i].want[6] == '<' && !strchr(n, '<'));
	}
	return bad != 0;
}
END
if gcc -std=c99 -Wall -Wextra -Werror -I out -o sel sel.c out/_aot_rowsum_host.c >log 2>&1 && ./sel >sel.out 2>&1; then
	ok "host: the dispatch chooses rowsum on small shapes and rowsum_setup on large ones, unseen ones too"
else
	bad "host: per-shape choice among functions" "$(cat log sel.out 2>/dev/null | tail -8)"
fi

cat >run.cpp <<'END'
#include <cmath>
#include <cstdio>
#include <vector>
#include "_aot_rowsum_host.h"
int main()
{
	static const int shapes[][2] = {{16, 64}, {2048, 2048}, {300, 700}};
	int bad = 0;
	for (auto &s : shapes) {
		int rows = s[0], cols = s[1];
		std::vector<float> in((size_t)rows * cols), out(rows, -1);
		for (size_t i = 0; i < in.size(); i++)
			in[i] = (float)(i % 7) - 3;
		if (aot_rowsum_host_launch(out.data(), in.data(), rows, cols) != 0)
			bad++;
		for (int r = 0; r < rows; r++) {
			double want = 0;
			for (int c = 0; c < cols; c++)
				want += in[(size_t)r * cols + c];
			bad += std::fabs(out[r] - want) > 1e-3 * (1 + std::fabs(want));
		}
	}
	std::printf("%d wrong\n", bad);
	return bad != 0;
}
END
if g++ -std=c++17 -O1 -I out -I "$inc" -I . -o run run.cpp out/_aot_rowsum_host.cpp out/_aot_rowsum_host.c >log 2>&1 &&
	AOTC_LOG=1 ./run >run.out 2>run.err && grep -q "rowsum_setup" run.err && grep -q "rowsum<" run.err; then
	ok "host: the launcher runs whichever function the dispatch chooses (AOTC_LOG shows both), results right"
else
	bad "host: launcher across functions" "$(cat log run.out run.err 2>/dev/null | tail -8)"
fi

"$aotc" compile rowsum_alt.cpp --arch host --db db -o out1 >run2.log 2>&1
if [ $? -eq 0 ] && diff -r out out1 >/dev/null && grep -q '^0 measurements taken' run2.log; then
	ok "host: a second compile measures nothing and emits byte-identical files"
else
	bad "host: second compile" "$(diff -r out out1 | head -5; tail -5 run2.log)"
fi

"$aotc" configs rowsum_alt.cpp >cfg 2>&1
if grep -q "^rowsum: 5 configurations$" cfg && grep -q "^rowsum_setup$" cfg &&
	grep -q "^rowsum_twopass<8>$" cfg; then
	ok "host: configs lists the variants of every function"
else
	bad "host: configs" "$(cat cfg)"
fi
if "$aotc" report db/rowsum.*.json >rep.out 2>&1 && grep -q "rowsum_setup" rep.out; then
	ok "host: report names the alternatives' variants"
else
	bad "host: report" "$(head -12 rep.out)"
fi
"$aotc" parse rowsum_alt.cpp >ir.json 2>log && "$aotc" configs ir.json >cir 2>>log
if [ $? -eq 0 ] && diff cfg cir >/dev/null && grep -q '"alternative_of"' ir.json; then
	ok "host: the IR as JSON keeps the alternatives; configs from it agree"
else
	bad "host: IR JSON round trip" "$(tail -5 log; diff cfg cir | head -5)"
fi
if python3 - "$aotc" >irbad.log 2>&1 <<'END'
import copy, json, subprocess, sys
base = json.load(open("ir.json"))
alts = lambda d: d["kernels"][0]["alternatives"]
cases = [
    ("a parameter of another type", lambda d: alts(d)[0]["params"][1].update(dtype="f64"),
     "parameter 2 is not its primary's 'inp'"),
    ("another primary", lambda d: alts(d)[0]["alternative_of"].update(name="other"),
     "alternative_of must name 'rowsum'"),
    ("an alternative at top level", lambda d: d["kernels"].append(alts(d)[0]),
     "an alternative is read inside its primary's 'alternatives'"),
    ("one alternative twice", lambda d: alts(d).append(copy.deepcopy(alts(d)[0])),
     "a second alternative 'rowsum_setup'"),
    ("a host launcher of a host kernel", lambda d: alts(d)[0].update(host_launcher=True),
     "a host launcher belongs to a __global__ kernel"),
    ("an empty list", lambda d: d["kernels"][0].update(alternatives=[]),
     "'alternatives' must be a non-empty array"),
]
fails = 0
for name, change, want in cases:
    d = copy.deepcopy(base)
    change(d)
    json.dump(d, open("irbad.json", "w"))
    r = subprocess.run([sys.argv[1], "configs", "irbad.json"], capture_output=True, text=True)
    if r.returncode != 1 or want not in r.stderr:
        fails += 1
        print("%s: exit %d, %s" % (name, r.returncode, r.stderr[:300]))
sys.exit(fails != 0)
END
then
	ok "host: IR JSON with a parameter of another type, another primary, a stray or repeated alternative is refused"
else
	bad "host: hostile IR JSON" "$(cat irbad.log)"
fi

finish

#!/bin/sh
# The launcher's shared-memory opt-in (issue 29): cudaFuncSetAttribute(...,
# MaxDynamicSharedMemorySize) is emitted for exactly the variants whose
# AOTC_SMEM can exceed the 48 KiB a kernel gets without it, and nowhere for
# a kernel without AOTC_SMEM. On sgemm from the committed H200 database
# (less its cuBLAS routine, so that kernel variants are dispatched) with an
# AOTC_SMEM(BM * BN * 16) added: 32 x 64 needs 32 KiB, 64 x 64 needs 64.
# Usage: smem-optin.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"

mkdir -p "$tmp/k" "$tmp/db" "$tmp/db2"
# after the kernel's AOTC_BLOCK (the first; the reference has its own)
python3 -c 'import re, sys; t = open(sys.argv[1]).read(); sys.stdout.write(re.sub(r"^(AOTC_BLOCK\(.*\))$", r"\1\nAOTC_SMEM(BM * BN * 16)", t, count=1, flags=re.M))' \
	"$root/templates/sgemm.cu" >"$tmp/k/sgemm.cu"
grep -q '^AOTC_SMEM(BM \* BN \* 16)' "$tmp/k/sgemm.cu" || { bad "the test's kernel has no AOTC_SMEM"; finish; }
# The databases for both sources (their hashes differ), kernel variants only.
for src in "$root/templates/sgemm.cu:$tmp/db" "$tmp/k/sgemm.cu:$tmp/db2"; do
	file=${src%%:*} dir=${src#*:}
	"$aotc" parse "$file" >"$tmp/ir.json" 2>/dev/null
	python3 - "$root/templates/sgemm.cuda_NVIDIA_H200_13.0.json" "$dir/sgemm.cuda_NVIDIA_H200_13.0.json" "$tmp/ir.json" <<'END'
import json, sys
d = json.load(open(sys.argv[1]))
ir = json.load(open(sys.argv[3]))
k = ir["kernels"][0]
alts = {a["name"]: a["code"] for a in k.get("alternatives", [])}
for c in d["configs"]:  # measured from this source's code, as its tune would record
    c["code"] = alts[c["function"]] if c.get("function") else k["code"]
sys.argv[3] = ir["source_hash"]
keep = [i for i, c in enumerate(d["configs"]) if not c.get("extern")]
new = {old: i for i, old in enumerate(keep)}
d["configs"] = [d["configs"][i] for i in keep]
d["measurements"] = [dict(m, config=new[m["config"]]) for m in d["measurements"] if m["config"] in new]
d["source_hash"] = sys.argv[3]
json.dump(d, open(sys.argv[2], "w"))
END
	# every other shape: the opt-in, not what 100 shapes learn, is checked
	python3 "$root/tests/cut-db.py" "$dir/sgemm.cuda_NVIDIA_H200_13.0.json" "$dir/sgemm.cuda_NVIDIA_H200_13.0.json" --shapes 2
done
cp "$root/templates/sgemm.cu" "$tmp/sgemm.cu"
if "$aotc" emit "$tmp/sgemm.cu" --arch sm90 --db "$tmp/db" -o "$tmp/plain" >"$tmp/log" 2>&1; then ok "emit sgemm"
else bad "emit sgemm" "$(tail -5 "$tmp/log")"; fi
if "$aotc" emit "$tmp/k/sgemm.cu" --arch sm90 --db "$tmp/db2" -o "$tmp/smem" >"$tmp/log" 2>&1; then ok "emit sgemm with AOTC_SMEM"
else bad "emit sgemm with AOTC_SMEM" "$(tail -5 "$tmp/log")"; fi

n=$(grep -c MaxDynamicSharedMemorySize "$tmp/plain/_aot_sgemm_cuda_sm90.cu")
if [ "$n" -eq 0 ]; then ok "no opt-in without AOTC_SMEM"; else bad "no opt-in without AOTC_SMEM" "$n found"; fi

# Each case of the launcher's switch: its variant's BM and BN, and whether it opts in.
python3 - "$tmp/smem/_aot_sgemm_cuda_sm90.cu" >"$tmp/cases" <<'END'
import re, sys
text = open(sys.argv[1]).read()
for m in re.finditer(r"case (\d+):\n(.*?)(?=\n\tcase |\n\t\}|\ndefault)", text, re.S):
    body = m.group(2)
    t = re.search(r"sgemm<(\d+), (\d+),", body)
    if t:
        print(m.group(1), int(t.group(1)) * int(t.group(2)) * 16, int("MaxDynamicSharedMemorySize" in body))
END
total=$(wc -l <"$tmp/cases")
wrong=$(awk '($2 > 49152) != $3' "$tmp/cases" | wc -l)
need=$(awk '$3 == 1' "$tmp/cases" | wc -l)
if [ "$total" -gt 0 ] && [ "$wrong" -eq 0 ] && [ "$need" -gt 0 ] && [ "$need" -lt "$total" ]; then ok "opt-in exactly where BM * BN * 16 > 48 KiB ($need of $total variants)"
else bad "opt-in exactly where needed" "$(cat "$tmp/cases")"; fi

finish

#!/bin/sh
# Every command in a ```sh block of README.md and docs/*.md, run as written
# from the root of a copy of the repository (its tracked files, as a fresh
# clone has them), with build/aotc the aotc under test; then README's demo
# (tools/demo.sh). A block right after a line "<!-- tests/docs: REASON -->"
# is not run (it needs a GPU or a cluster: REASON says). A command ending in
# "# exit N" must exit N; every other one 0.
# Usage: commands.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
skipped=0

# The copy: the files git tracks, else everything but build outputs.
repo=$tmp/repo
mkdir -p "$repo"
if git -C "$root" ls-files >"$tmp/files" 2>/dev/null && [ -s "$tmp/files" ]; then
	(cd "$root" && tar cf - -T "$tmp/files") | (cd "$repo" && tar xf -)
else
	(cd "$root" && tar cf - --exclude='./build*' --exclude=./.git .) | (cd "$repo" && tar xf -)
fi
mkdir -p "$repo/build"
ln -s "$(cd "$(dirname "$aotc_real")" && pwd)/$(basename "$aotc_real")" "$repo/build/aotc"

# One line per command: FILE<TAB>LINE<TAB>STATUS<TAB>COMMAND, or FILE<TAB>LINE<TAB>skip<TAB>REASON.
python3 - "$root" >"$tmp/commands" <<'PY'
import glob, os, re, sys
root = sys.argv[1]
files = ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
for f in files:
    lines = open(os.path.join(root, f), encoding="utf-8").read().split("\n")
    i, reason = 0, None
    while i < len(lines):
        m = re.match(r"<!-- tests/docs: (.*) -->$", lines[i])
        if m:
            reason = m.group(1)
        elif lines[i].strip() == "```sh":
            start = i + 1
            i += 1
            cmd, first = "", None
            while i < len(lines) and lines[i].strip() != "```":
                line = lines[i]
                if first is None:
                    first = i + 1
                if line.endswith("\\"):
                    cmd += line[:-1] + " "
                else:
                    cmd += line
                    c = cmd.strip()
                    if c and not c.startswith("#"):
                        if reason:
                            print(f"{f}\t{first}\tskip\t{reason}")
                        else:
                            st = re.search(r"#\s*exit (\d+)\s*$", c)
                            print(f"{f}\t{first}\t{st.group(1) if st else 0}\t{c}")
                    cmd, first = "", None
                i += 1
            reason = None
        elif lines[i].strip():
            reason = reason if lines[i].startswith("<!--") else None
        i += 1
PY
[ -s "$tmp/commands" ] || { bad "no commands found"; finish; }

tab=$(printf '\t')
: >"$tmp/reports"
while IFS="$tab" read -r file line want cmd; do
	if [ "$want" = skip ]; then
		echo "SKIP $file:$line ($cmd)"
		skipped=$((skipped + 1))
		continue
	fi
	# `aotc report` only reads its database (the committed one, unchanged by
	# any command here): the same command line as one that passed already
	# (README's and docs/cli.md's HTML report of sgemm) is that run again.
	case $cmd in build/aotc\ report\ *)
		first=$(awk -F "$tab" -v c="$want$tab$cmd" '$2 "\t" $3 == c { print $1; exit }' "$tmp/reports")
		if [ -n "$first" ]; then
			echo "PASS $file:$line (as $first): $cmd"
			pass=$((pass + 1))
			continue
		fi ;;
	esac
	start=$(date +%s)
	# The host tune in README flushes a cache-sized buffer before each timed
	# launch (2 to 3 minutes here); a small one keeps the commands as
	# written and checks the same (tests/tuner/search.sh does as well).
	(cd "$repo" && AOTC_HOST_FLUSH_BYTES=${AOTC_HOST_FLUSH_BYTES:-65536} timeout 600 sh -c "$cmd") >"$tmp/out" 2>&1 </dev/null
	got=$?
	secs=$(( $(date +%s) - start ))
	if [ "$got" -eq "$want" ]; then
		echo "PASS $file:$line ($secs s): $cmd"
		pass=$((pass + 1))
		printf '%s\t%s\t%s\n' "$file:$line" "$want" "$cmd" >>"$tmp/reports"
	else
		bad "$file:$line: exit $got, expected $want: $cmd" "$(tail -15 "$tmp/out")"
	fi
done <"$tmp/commands"

# README's second half of the first command (tools/setup.sh is what CI runs).
# It runs as written; what it shows is checked from its --tsv rows by
# tests/docs/demo.sh.
if (cd "$repo" && timeout 300 tools/demo.sh) >"$tmp/out" 2>&1 && grep -q '^held-out ' "$tmp/out"; then
	ok "tools/demo.sh"
else
	bad "tools/demo.sh" "$(tail -15 "$tmp/out")"
fi

echo "$skipped not run (they say why)"
finish

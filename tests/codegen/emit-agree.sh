#!/bin/sh
# The compiled dispatch agrees with aotc's own: select() with the decision
# tree and AOTC_VALID_IFs as aotc holds them in memory, launch_dims() with
# the IR evaluator (checked 64-bit arithmetic, the same failures), on every
# database shape and 2000 random ones (odd, negative, zero, huge), as
# `aotc __dispatch-check` prints them. Also the variant table: names and
# params for every index select() returns, num_variants(), and NULL / -1
# for indices out of range.
# Usage: emit-agree.sh AOTC REPO_ROOT
aotc=$1
root=$2
# Absolute paths: the script changes directory.
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../lib.sh"

cd "$root" || exit 1

# args N: "a[0], a[1], ..., a[N-1]"
args() {
	i=0 s=
	while [ "$i" -lt "$1" ]; do
		s="$s${s:+, }a[$i]"
		i=$((i + 1))
	done
	echo "$s"
}

# kernel NAME SOURCE ARCH DB TAG NSHAPE NINT: NSHAPE shape arguments
# (select's), NINT integer parameters (launch_dims'; 0 for a host kernel).
kernel() {
	name=$1 src=$2 arch=$3 db=$4 tag=$5 ns=$6 ni=$7
	pfx=aot_${name}_$tag
	dir=$tmp/$name
	mkdir -p "$dir"
	if ! "$aotc" emit "$src" --arch "$arch" --db "$db" -o "$dir" >"$dir/emit.log" 2>&1; then
		bad "$name: aotc emit" "$(tail -5 "$dir/emit.log")"
		return
	fi
	if ! "$aotc" __dispatch-check "$src" --arch "$arch" --db "$db" >"$dir/want" 2>"$dir/check.log"; then
		bad "$name: aotc __dispatch-check" "$(tail -5 "$dir/check.log")"
		return
	fi
	# The kernel's number of tunables, from the IR.
	nt=$("$aotc" parse "$src" | python3 -c '
import json, sys
print(len([k for k in json.load(sys.stdin)["kernels"] if k["name"] == sys.argv[1]][0]["tunables"]))' "$name")
	# How many variants aotc says it emitted ("...: 4 variants, ...").
	nv=$(sed -n 's/.*: \([0-9][0-9]*\) variants\{0,1\}, .*/\1/p' "$dir/emit.log")
	if [ "$ni" -gt 0 ]; then
		global=1
		dims="$pfx""_launch_dims(v, $(args "$ni"), g, b, &smem)"
	else
		global=0
		dims=0
	fi

	# The driver: reads __dispatch-check's lines on stdin and answers each
	# from the emitted functions in the same format. Inconsistencies in
	# the variant table go to stderr and the exit status.
	cat >"$dir/driver.c" <<END
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_${pfx}.h"

#define NS $ns
#define NI $ni
#define NT $nt
#define GLOBAL $global

static int errors;

static void problem(const char *what, int v)
{
	fprintf(stderr, "%s (variant %d)\\n", what, v);
	errors++;
}

/* The name "k<1, 2, 3>" holds the tunable values in declaration order:
 * exactly NT of them, equal to variant_params(v); a routine's (sgemm_cublas)
 * is an identifier and its params are 0. */
static void check_variant(int v)
{
	const char *n = ${pfx}_variant_name(v), *s;
	const int64_t *t = ${pfx}_variant_params(v);
	int i = 0;
	if (!n || !t) {
		problem("variant_name or variant_params is NULL", v);
		return;
	}
	s = strchr(n, '<');
	if (!s) {
		/* an AOTC_EXTERN routine: named as its function, no tunables */
		for (i = 0; i < NT; i++)
			if (t[i] != 0)
				problem("a routine with tunable values", v);
		if (!*n || strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") != strlen(n))
			problem("a routine's name that is not an identifier", v);
		return;
	}
	while (s && *s && *s != '>') {
		char *end;
		long long x = strtoll(s + 1, &end, 10);
		if (end == s + 1)
			break;
		if (i >= NT || x != t[i])
			problem("name and params disagree", v);
		i++;
		s = end;
		while (*s == ' ')
			s++;
	}
	if (i != NT)
		problem("name does not hold NT tunable values", v);
}

int main(int argc, char **argv)
{
	char buf[4096];
	int nv = ${pfx}_num_variants(), v;
	if (argc > 1 && !strcmp(argv[1], "table")) {
		/* The variant table itself, and indices out of range. */
		int bad[] = {-1, nv, nv + 1, -2147483647 - 1, 2147483647};
		size_t i;
		printf("%d\\n", nv);
		for (v = 0; v < nv; v++)
			check_variant(v);
		for (i = 0; i < sizeof bad / sizeof *bad; i++) {
			int64_t a[NI + 1] = {0};
			uint32_t g[3], b[3], smem;
			int j;
			for (j = 0; j < NI; j++)
				a[j] = 256;
			(void)a; (void)g; (void)b; (void)smem;
			if (${pfx}_variant_name(bad[i]) || ${pfx}_variant_params(bad[i]))
				problem("out-of-range index gives non-NULL", bad[i]);
			if (GLOBAL && $dims != -1)
				problem("out-of-range index: launch_dims does not return -1", bad[i]);
		}
		return errors != 0;
	}
	while (fgets(buf, sizeof buf, stdin)) {
		int64_t a[(NS > NI ? NS : NI) + 1];
		char *p = buf, *end;
		int n, i;
		if (!strncmp(p, "select ", 7)) {
			n = NS;
			p += 7;
		} else if (!strncmp(p, "dims ", 5)) {
			n = NI;
			v = (int)strtol(p + 5, &end, 10);
			p = end;
		} else {
			fprintf(stderr, "unexpected line: %s", buf);
			return 2;
		}
		for (i = 0; i < n; i++) {
			a[i] = strtoll(p, &end, 10);
			p = end;
		}
		if (buf[0] == 's') {
			v = ${pfx}_select($(args "$ns"));
			printf("select");
			for (i = 0; i < n; i++)
				printf(" %" PRId64, a[i]);
			printf(" -> %d\\n", v);
			if (v >= 0)
				check_variant(v);
			if (v < -1 || v >= nv)
				problem("select returns an index out of range", v);
		} else {
			uint32_t g[3] = {0}, b[3] = {0}, smem = 0;
			printf("dims %d", v);
			for (i = 0; i < n; i++)
				printf(" %" PRId64, a[i]);
			if ($dims == 0)
				printf(" -> %u %u %u %u %u %u %u\\n", (unsigned)g[0], (unsigned)g[1],
				       (unsigned)g[2], (unsigned)b[0], (unsigned)b[1], (unsigned)b[2],
				       (unsigned)smem);
			else
				printf(" -> -1\\n");
		}
	}
	return errors != 0;
}
END
	if ! gcc -std=c99 -Wall -Wextra -Werror -pedantic -I "$dir" -o "$dir/driver" \
		"$dir/driver.c" "$dir/_$pfx.c" >"$dir/cc.log" 2>&1; then
		bad "$name: driver compiles" "$(head -20 "$dir/cc.log")"
		return
	fi

	nsel=$(grep -c '^select ' "$dir/want")
	ndims=$(grep -c '^dims ' "$dir/want")
	"$dir/driver" <"$dir/want" >"$dir/got" 2>"$dir/driver.log"
	st=$?
	if [ "$st" -eq 0 ]; then
		ok "$name: names and params of every selected variant"
	else
		bad "$name: names and params of every selected variant" "$(sort "$dir/driver.log" | uniq -c | head -10)"
	fi
	if [ "$nsel" -lt 2000 ]; then
		bad "$name: __dispatch-check gives >= 2000 select lines" "got $nsel"
	elif cmp -s "$dir/want" "$dir/got"; then
		ok "$name: select() agrees on $nsel shapes"
	else
		bad "$name: select() agrees with the in-memory tree" \
			"$(diff "$dir/want" "$dir/got" | grep '^[<>] select' | head -10)"
	fi
	if [ "$global" = 1 ]; then
		if [ "$ndims" -lt 2000 ]; then
			bad "$name: __dispatch-check gives dims lines" "got $ndims"
		elif [ "$(grep '^dims ' "$dir/want")" = "$(grep '^dims ' "$dir/got")" ]; then
			ok "$name: launch_dims() agrees with the IR evaluator on $ndims cases"
		else
			bad "$name: launch_dims() agrees with the IR evaluator" \
				"$(diff "$dir/want" "$dir/got" | grep '^[<>] dims' | head -10)"
		fi
		# Both answers seen: some shapes valid, some (negative, zero,
		# overflowing) not, else the comparison proves little.
		# (A dispatch of library routines alone launches nothing itself.)
		if grep -q '^dims .* -> -1$' "$dir/want" && grep -q '^dims .* -> [0-9]* ' "$dir/want"; then
			ok "$name: dims cases include failures and successes"
		elif ! grep -q '^dims .* -> [0-9]* ' "$dir/want" && ! grep -q '^	"[A-Za-z_0-9]*<' "$dir/_$pfx.c"; then
			ok "$name: dims cases all -1: every variant is a library routine"
		else
			bad "$name: dims cases include failures and successes"
		fi
		# One dims line per emitted variant per shape: the variant count.
		nvd=$(sed -n 's/^dims \([0-9]*\) .*/\1/p' "$dir/want" | sort -un | wc -l)
	else
		nvd=$nv
	fi

	"$dir/driver" table >"$dir/table" 2>"$dir/table.log"
	st=$?
	got_nv=$(head -1 "$dir/table")
	if [ "$got_nv" = "$nv" ] && [ "$nvd" -eq "$nv" ]; then
		ok "$name: num_variants() is $nv, as aotc reports"
	else
		bad "$name: num_variants()" "num_variants() $got_nv, aotc emit says $nv, dims lines have $nvd"
	fi
	if [ "$st" -eq 0 ]; then
		ok "$name: variant table, out-of-range indices give NULL${global:+ and -1}"
	else
		bad "$name: variant table, out-of-range indices" "$(cat "$dir/table.log")"
	fi
}

kernel sgemm templates/sgemm.cu sm90 templates cuda_sm90 3 3
kernel softmax templates/softmax.cu sm90 templates cuda_sm90 2 2
kernel matmul_host templates/matmul_host.cpp host tests/codegen host 3 0

finish

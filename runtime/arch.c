#include "arch.h"

#include <stdio.h>
#include <string.h>

#define CUDA(cc, sfx) {ARCH_CUDA, "sm" #cc sfx, cc, cc / 10, cc % 10}
#define ROCM(hex) {ARCH_ROCM, "gfx" #hex, 0x##hex, 0, 0}

static const arch_info table[] = {
	CUDA(75, ""), CUDA(80, ""), CUDA(86, ""), CUDA(87, ""), CUDA(89, ""), CUDA(90, ""),
	CUDA(90, "a"), CUDA(100, ""), CUDA(100, "a"), CUDA(103, ""), CUDA(110, ""), CUDA(120, ""),
	ROCM(900), ROCM(906), ROCM(908), ROCM(90a), ROCM(940), ROCM(941), ROCM(942), ROCM(950),
	{ARCH_HOST, "host", 0, 0, 0},
};

const arch_info *arch_parse(const char *name)
{
	for (size_t i = 0; i < sizeof table / sizeof *table; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

int arch_count(void) { return (int)(sizeof table / sizeof *table); }

const arch_info *arch_at(int i) { return i >= 0 && i < arch_count() ? &table[i] : NULL; }

const char *arch_kind_name(arch_kind k)
{
	switch (k) {
	case ARCH_CUDA: return "cuda";
	case ARCH_ROCM: return "rocm";
	case ARCH_HOST: break;
	}
	return "host";
}

void arch_tag(const arch_info *a, char *buf, size_t n)
{
	if (a->kind == ARCH_HOST)
		snprintf(buf, n, "host");
	else
		snprintf(buf, n, "%s_%s", arch_kind_name(a->kind), a->name);
}

/* Finding an instantiation among a compiled ELF's function symbols (a
 * CUBIN from nvcc, an AMDGPU code object from hipcc): each symbol is
 * demangled and compared with the instance in a canonical spelling. */
#include "elfsym.h"

#include <ctype.h>
#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler; it has C linkage. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* A C++ name in a canonical spelling: no spaces, no integer-literal
 * suffixes (64u, 8l), true/false as 1/0. "sgemm<64, 8>" and the
 * demangler's "sgemm<64u, 8l>" come out the same. */
static void canonical(const char *s, size_t n, strbuf *out)
{
	out->len = 0;
	out->data[0] = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == ' ')
			continue;
		bool start = i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_');
		if (start && strncmp(s + i, "true", 4) == 0 &&
		    (i + 4 >= n || !(isalnum((unsigned char)s[i + 4]) || s[i + 4] == '_'))) {
			strbuf_putc(out, '1');
			i += 3;
			continue;
		}
		if (start && strncmp(s + i, "false", 5) == 0 &&
		    (i + 5 >= n || !(isalnum((unsigned char)s[i + 5]) || s[i + 5] == '_'))) {
			strbuf_putc(out, '0');
			i += 4;
			continue;
		}
		if (start && isdigit((unsigned char)c)) {
			while (i < n && isalnum((unsigned char)s[i])) {
				if (!strchr("uUlL", s[i]))
					strbuf_putc(out, s[i]);
				i++;
			}
			i--;
			continue;
		}
		strbuf_putc(out, c);
	}
}

/* The demangled function's name with its template arguments: "void
 * f<1>(int)" -> "f<1>", "g(int)" -> "g". */
static void function_name(const char *demangled, const char **b, size_t *n)
{
	const char *s = demangled;
	if (strncmp(s, "void ", 5) == 0)
		s += 5;
	int depth = 0;
	const char *p = s;
	for (; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>')
			depth--;
		else if (*p == '(' && depth == 0)
			break;
	}
	*b = s;
	*n = (size_t)(p - s);
}

char *elf_find_kernel(const unsigned char *elf, size_t size, const char *instance,
                      const char *compiler, strbuf *err)
{
	const Elf64_Ehdr *eh = (const void *)elf;
	if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr)) {
		strbuf_printf(err, "%s's output is not a 64-bit ELF", compiler);
		return NULL;
	}
	const Elf64_Shdr *sh = (const void *)(elf + eh->e_shoff);
	strbuf want, got;
	strbuf_init(&want);
	strbuf_init(&got);
	canonical(instance, strlen(instance), &want);
	/* The base name, "sgemm<", for the fallback below. */
	size_t base = strcspn(want.data, "<");
	char *found = NULL, *only = NULL;
	int nbase = 0;
	strbuf cands;
	strbuf_init(&cands);
	for (int i = 0; i < eh->e_shnum && !found; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_offset > size ||
		    sh[i].sh_size > size - sh[i].sh_offset)
			continue;
		const Elf64_Shdr *strs = &sh[sh[i].sh_link];
		if (strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
			continue;
		const char *names = (const char *)elf + strs->sh_offset;
		const Elf64_Sym *sym = (const void *)(elf + sh[i].sh_offset);
		size_t nsym = sh[i].sh_size / sizeof *sym;
		for (size_t j = 0; j < nsym && !found; j++) {
			if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC || sym[j].st_name >= strs->sh_size)
				continue;
			const char *mangled = names + sym[j].st_name;
			if (!memchr(mangled, 0, strs->sh_size - sym[j].st_name))
				continue;
			int status = 0;
			char *dem = __cxa_demangle(mangled, NULL, NULL, &status);
			const char *b = mangled;
			size_t n = strlen(mangled);
			if (status == 0 && dem)
				function_name(dem, &b, &n);
			canonical(b, n, &got);
			if (strcmp(got.data, want.data) == 0) {
				found = xstrdup(mangled);
			} else if (want.data[base] == '<' && strncmp(got.data, want.data, base + 1) == 0) {
				nbase++;
				free(only);
				only = xstrdup(mangled);
				strbuf_printf(&cands, "%s%.*s", cands.len ? ", " : "", (int)n, b);
			}
			free(dem);
		}
	}
	/* A spelling the canonical form does not cover (a defaulted type
	 * argument, an enum): the one instance of that template is it. */
	if (!found && nbase == 1) {
		found = only;
		only = NULL;
	}
	if (!found)
		strbuf_printf(err, "%s compiled %s but its output has no such kernel%s%s%s", compiler, instance,
		              cands.len ? " (instances found: " : "", cands.data, cands.len ? ")" : "");
	free(only);
	strbuf_finish(&cands);
	strbuf_finish(&want);
	strbuf_finish(&got);
	return found;
}

bool elf_find_kernels(const unsigned char *elf, size_t size, const char *const *instances, int n,
                      const char *compiler, char **symbols, strbuf *err)
{
	for (int i = 0; i < n; i++)
		if (!(symbols[i] = elf_find_kernel(elf, size, instances[i], compiler, err))) {
			while (i-- > 0) {
				free(symbols[i]);
				symbols[i] = NULL;
			}
			return false;
		}
	return true;
}

/* The mangled name of a kernel instantiation in a compiled ELF. */
#ifndef AOTC_ELFSYM_H
#define AOTC_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* The mangled name of instance ("sgemm<64, 8>") among the function symbols
 * of the 64-bit ELF at elf (malloc'd); NULL with the reason (and the
 * instances of that template it found) in err. compiler names what made
 * the ELF, for the message. */
char *elf_find_kernel(const unsigned char *elf, size_t size, const char *instance,
                      const char *compiler, strbuf *err);

/* elf_find_kernel for each of instances[0..n) (one compiler run's) into
 * symbols[i]; false, with none left allocated, at the first not found. */
bool elf_find_kernels(const unsigned char *elf, size_t size, const char *const *instances, int n,
                      const char *compiler, char **symbols, strbuf *err);

#endif

/* Helpers shared by the emitters (emit.c, link.c): one emit point for
 * generated text, and the checks on what from an input may reach it. */
#ifndef AOTC_TEXT_H
#define AOTC_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* Generated text, built in memory and written out once. */
typedef struct out {
	strbuf sb;
	int indent;
} out;

/* A line at the current indentation (tabs). */
void out_line(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_raw(out *o, const char *text);

bool is_identifier(const char *s);
bool is_identifier_n(const char *s, size_t n);

/* Every string from an input (IR, database, command line) that goes into a
 * comment of an emitted file goes through here: the '/' and '*' of a
 * comment opener or closer (also one formed with what sb ends with), "??"
 * (a trigraph such as ??/ could splice lines under -std=c99), a trailing
 * backslash, control characters and bytes above 0x7e become spaces. The
 * caller writes no '/' or '*' right after it. */
void put_comment_text(strbuf *sb, const char *s);

/* A path that can be written between the quotes of an #include and in a
 * comment as is: no quote, backslash, space or control character. */
bool path_is_plain(const char *s);

/* Text that may stand between the quotes of an #include line in emitted
 * code (a kernel's file name, --include-as): not empty, no control
 * character, no quote, no backslash, no comment opener or closer, no "??".
 * Bytes above 0x7f pass: a header name is not a string literal, its bytes
 * are the file's name as is. */
bool include_text_ok(const char *s);

/* How emitted comments name a source file: its base name, always
 * (templates/softmax.cu and /src/x/softmax.cu are both "softmax.cu").
 * Emitted bytes must not depend on where the files live: not on the
 * working directory, the absolute location, how the path was typed, or
 * whether the tree is a git checkout or an unpacked `git archive` (a
 * rule keyed on .git named templates/softmax.cu in a checkout and
 * softmax.cu in a tarball). The base name is also what the launcher's
 * #include names by default, and the source hash beside it in the
 * header identifies the content. Appends to sb. */
void source_name(strbuf *sb, const char *file);

/* target relative to directory base; both absolute and resolved. */
void relative_path(strbuf *sb, const char *base, const char *target);

#endif

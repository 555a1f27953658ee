/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One print path for text and JSON output.
 *
 * Callers describe what they print (objects, arrays, keyed values) and the
 * printer emits either the one-line text form or JSON. In text mode objects
 * and arrays are invisible, values print as "label value" separated by single
 * spaces, and pr_eol() ends the line. In JSON mode labels are not used, keys
 * name the members, and closing the outermost container ends the document
 * with a newline.
 *
 * The printer keeps its state in this module (one document at a time), which
 * is all a command-line tool needs.
 */
#ifndef GPUVIRTCTL_PRINT_H
#define GPUVIRTCTL_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Start printing to @out in text or JSON form; @pretty indents JSON. */
void pr_init(FILE *out, bool json, bool pretty);
bool pr_is_json(void);

/*
 * Containers, JSON only. @key names the member when the container is inside
 * an object; it must be NULL at the top level and inside arrays.
 */
void pr_open_object(const char *key);
void pr_close_object(void);
void pr_open_array(const char *key);
void pr_close_array(void);

/*
 * Values. @key is the JSON member name (NULL inside arrays). @label is what
 * text mode prints before the value: NULL means "same as key", "" means the
 * value alone.
 */
void pr_uint(const char *key, const char *label, uint64_t val);
void pr_string(const char *key, const char *label, const char *val);
/* Sizes in bytes: JSON prints bytes, text a binary suffix (512M, 141G). */
void pr_size(const char *key, const char *label, uint64_t bytes);

/*
 * Durations in nanoseconds: JSON prints nanoseconds, text the largest unit
 * reached with one decimal (1.5s, 250us); UINT64_MAX means no bound.
 */
void pr_time(const char *key, const char *label, uint64_t ns);
/* Booleans: JSON true or false, text the same words. */
void pr_bool(const char *key, const char *label, bool val);

/* Text only: a bare word such as "[gpu add]". */
void pr_text(const char *word);
/* Text only: end the current line, if anything is on it. */
void pr_eol(void);

/* Flush the output; returns -1 if writing failed at any point. */
int pr_flush(void);

/* @s as a JSON string literal, quotes included; exposed for the tests. */
void pr_json_escape(FILE *out, const char *s);

#endif /* GPUVIRTCTL_PRINT_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Text and JSON printer, see print.h.
 */
#include <inttypes.h>
#include <string.h>

#include "print.h"
#include "units.h"

#define PR_MAX_DEPTH	16
#define PR_INDENT	4

struct pr_level {
	bool array;		/* array, else object */
	unsigned int count;	/* members printed so far */
};

static struct {
	FILE *out;
	bool json;
	bool pretty;
	bool line_used;		/* text: something printed on this line */
	unsigned int depth;
	struct pr_level stack[PR_MAX_DEPTH];
} pr = { .out = NULL };

void pr_init(FILE *out, bool json, bool pretty)
{
	memset(&pr, 0, sizeof(pr));
	pr.out = out;
	pr.json = json;
	pr.pretty = json && pretty;
}

bool pr_is_json(void)
{
	return pr.json;
}

/* JSON string escaping ------------------------------------------------ */

/*
 * Length of the valid UTF-8 sequence starting at @s, or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid).
 */
static size_t utf8_seq_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}

	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static const char *json_named_escape(unsigned char c)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	default:
		return NULL;
	}
}

void pr_json_escape(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		const char *esc = json_named_escape(*s);
		size_t n = 1;

		if (esc) {
			fputs(esc, out);
		} else if (*s < 0x20 || *s == 0x7f) {
			fprintf(out, "\\u%04x", *s);
		} else if (*s < 0x80) {
			fputc(*s, out);
		} else {
			n = utf8_seq_len(s);
			if (n) {
				fwrite(s, 1, n, out);
			} else {
				/* Not UTF-8: keep the output valid JSON. */
				fputs("\\ufffd", out);
				n = 1;
			}
		}
		s += n;
	}
	fputc('"', out);
}

/* Text strings: control characters would corrupt the line, so escape them. */
static void text_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!*s) {
		fputs("\"\"", out);
		return;
	}
	for (; *s; s++) {
		if (*s < 0x20 || *s == 0x7f)
			fprintf(out, "\\x%02x", *s);
		else
			fputc(*s, out);
	}
}

/* Structure --------------------------------------------------------------- */

static void json_newline_indent(unsigned int depth)
{
	unsigned int i;

	if (!pr.pretty)
		return;
	fputc('\n', pr.out);
	for (i = 0; i < depth * PR_INDENT; i++)
		fputc(' ', pr.out);
}

/* Separator and key before a JSON value in the current container. */
static void json_member(const char *key)
{
	struct pr_level *lvl;

	if (!pr.depth)
		return;		/* the document's root value */
	lvl = &pr.stack[pr.depth - 1];
	if (lvl->count++)
		fputc(',', pr.out);
	json_newline_indent(pr.depth);
	if (!lvl->array && key) {
		pr_json_escape(pr.out, key);
		fputs(pr.pretty ? ": " : ":", pr.out);
	}
}

/* Separator and label before a text value. */
static void text_field(const char *key, const char *label)
{
	if (!label)
		label = key;
	if (pr.line_used)
		fputc(' ', pr.out);
	pr.line_used = true;
	if (label && *label)
		fprintf(pr.out, "%s ", label);
}

static void open_container(const char *key, bool array)
{
	if (!pr.json)
		return;
	json_member(key);
	fputc(array ? '[' : '{', pr.out);
	if (pr.depth < PR_MAX_DEPTH) {
		pr.stack[pr.depth].array = array;
		pr.stack[pr.depth].count = 0;
	}
	pr.depth++;
}

static void close_container(bool array)
{
	if (!pr.json || !pr.depth)
		return;
	pr.depth--;
	if (pr.depth < PR_MAX_DEPTH && pr.stack[pr.depth].count)
		json_newline_indent(pr.depth);
	fputc(array ? ']' : '}', pr.out);
	if (!pr.depth)
		fputc('\n', pr.out);
}

void pr_open_object(const char *key)
{
	open_container(key, false);
}

void pr_close_object(void)
{
	close_container(false);
}

void pr_open_array(const char *key)
{
	open_container(key, true);
}

void pr_close_array(void)
{
	close_container(true);
}

/* Values ------------------------------------------------------------------ */

void pr_uint(const char *key, const char *label, uint64_t val)
{
	if (pr.json)
		json_member(key);
	else
		text_field(key, label);
	fprintf(pr.out, "%" PRIu64, val);
}

void pr_string(const char *key, const char *label, const char *val)
{
	if (pr.json) {
		json_member(key);
		pr_json_escape(pr.out, val);
	} else {
		text_field(key, label);
		text_string(pr.out, val);
	}
}

void pr_size(const char *key, const char *label, uint64_t bytes)
{
	char buf[32];

	if (pr.json) {
		pr_uint(key, label, bytes);
		return;
	}
	units_format_size(buf, sizeof(buf), bytes);
	text_field(key, label);
	fputs(buf, pr.out);
}

void pr_time(const char *key, const char *label, uint64_t ns)
{
	char buf[32];

	if (pr.json) {
		pr_uint(key, label, ns);
		return;
	}
	units_format_time(buf, sizeof(buf), ns);
	text_field(key, label);
	fputs(buf, pr.out);
}

void pr_bool(const char *key, const char *label, bool val)
{
	if (pr.json)
		json_member(key);
	else
		text_field(key, label);
	fputs(val ? "true" : "false", pr.out);
}

void pr_text(const char *word)
{
	if (pr.json)
		return;
	text_field(NULL, "");
	fputs(word, pr.out);
}

void pr_eol(void)
{
	if (pr.json || !pr.line_used)
		return;
	fputc('\n', pr.out);
	pr.line_used = false;
}

int pr_flush(void)
{
	if (fflush(pr.out) || ferror(pr.out))
		return -1;
	return 0;
}

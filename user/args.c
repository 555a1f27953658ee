// SPDX-License-Identifier: GPL-2.0-only
/*
 * Table-driven argument parser, see args.h.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "units.h"

/* Bounded appending to a string buffer; keeps the length it wanted. */
struct strbuf {
	char *buf;
	size_t len;
	size_t used;
};

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	size_t room = sb->used < sb->len ? sb->len - sb->used : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? sb->buf + sb->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->used += (size_t)n;
}

static uint64_t spec_max(const struct arg_spec *spec)
{
	if (spec->max)
		return spec->max;
	return spec->type == ARG_U32 ? UINT32_MAX : UINT64_MAX;
}

static void enum_list(struct strbuf *sb, const struct arg_enum *e,
		      const char *sep)
{
	for (; e && e->name; e++)
		sb_printf(sb, "%s%s", e->name, e[1].name ? sep : "");
}

static void keyword_list(struct strbuf *sb, const struct arg_spec *specs)
{
	const struct arg_spec *s;

	for (s = specs; s->keyword; s++)
		sb_printf(sb, "%s%s", s->keyword, s[1].keyword ? ", " : "");
}

static const struct arg_spec *find_spec(const struct arg_spec *specs,
					const char *word)
{
	const struct arg_spec *s;

	for (s = specs; s->keyword; s++)
		if (!strcmp(s->keyword, word))
			return s;
	return NULL;
}

/* The positional argument still to be given, if the table has one. */
static const struct arg_spec *find_positional(const struct arg_spec *specs,
					      uint64_t mask)
{
	unsigned int i;

	for (i = 0; i < ARG_MAX_SPECS && specs[i].keyword; i++)
		if ((specs[i].flags & ARG_POSITIONAL) &&
		    (!(mask & ARG_BIT(i)) || (specs[i].flags & ARG_REPEAT)))
			return &specs[i];
	return NULL;
}

/* Convert @val for @spec and store it; on error describe the problem. */
static int store_value(const struct arg_spec *spec, const char *val,
		       void *opts, struct strbuf *err)
{
	char *dst = (char *)opts + spec->offset;
	uint64_t max = spec_max(spec);
	const struct arg_enum *e;
	uint64_t v;
	uint32_t v32;

	switch (spec->type) {
	case ARG_U32:
	case ARG_U64:
		if (units_parse_u64(val, &v) ||
		    ((v < spec->min || v > max) &&
		     !(v == 0 && (spec->flags & ARG_ZERO)))) {
			sb_printf(err, "\"%s\" expects %sa number from %" PRIu64
				  " to %" PRIu64 ", got \"%s\"", spec->keyword,
				  spec->flags & ARG_ZERO ? "0 or " : "",
				  spec->min, max, val);
			return -1;
		}
		if (spec->type == ARG_U32) {
			v32 = (uint32_t)v;
			memcpy(dst, &v32, sizeof(v32));
		} else {
			memcpy(dst, &v, sizeof(v));
		}
		return 0;
	case ARG_SIZE:
		if (units_parse_size(val, &v) || v < spec->min || v > max) {
			char lo[32], hi[32];

			units_format_size(lo, sizeof(lo), spec->min);
			units_format_size(hi, sizeof(hi), max);
			sb_printf(err, "\"%s\" expects a size from %s to %s "
				  "(suffixes K, M, G, T), got \"%s\"",
				  spec->keyword, lo, hi, val);
			return -1;
		}
		memcpy(dst, &v, sizeof(v));
		return 0;
	case ARG_STRING:
		if (spec->max_len && strlen(val) > spec->max_len) {
			sb_printf(err, "\"%s\" expects at most %zu characters, "
				  "got \"%s\"", spec->keyword, spec->max_len,
				  val);
			return -1;
		}
		if (spec->flags & ARG_REPEAT) {
			struct arg_list *list = (struct arg_list *)dst;

			if (list->n >= ARG_LIST_MAX) {
				sb_printf(err, "\"%s\" takes at most %d values",
					  spec->meta ? spec->meta : spec->keyword,
					  ARG_LIST_MAX);
				return -1;
			}
			list->val[list->n++] = val;
			return 0;
		}
		memcpy(dst, &val, sizeof(val));
		return 0;
	case ARG_ENUM:
		for (e = spec->enums; e && e->name; e++) {
			if (!strcmp(e->name, val)) {
				memcpy(dst, &e->value, sizeof(e->value));
				return 0;
			}
		}
		sb_printf(err, "\"%s\" expects one of ", spec->keyword);
		enum_list(err, spec->enums, ", ");
		sb_printf(err, ", got \"%s\"", val);
		return -1;
	case ARG_UUID:
		if (units_parse_uuid(val, dst)) {
			sb_printf(err, "\"%s\" expects a UUID "
				  "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), "
				  "got \"%s\"", spec->keyword, val);
			return -1;
		}
		return 0;
	case ARG_FLAG:
		break;
	}
	return 0;
}

/* The keyword of the first argument of @mask in @specs. */
static const char *first_keyword(const struct arg_spec *specs, uint64_t mask)
{
	unsigned int i;

	for (i = 0; i < ARG_MAX_SPECS && specs[i].keyword; i++)
		if (mask & ARG_BIT(i))
			return specs[i].keyword;
	return "?";
}

/* How the given arguments go together; 0 or -1 with a message. */
static int check_combination(const struct arg_spec *specs, uint64_t mask,
			     struct strbuf *sb)
{
	const struct arg_spec *spec;
	uint64_t one_of = 0;
	unsigned int i;

	for (spec = specs, i = 0; spec->keyword; spec++, i++) {
		if ((spec->flags & ARG_REQUIRED) && !(mask & ARG_BIT(i))) {
			if (spec->flags & ARG_POSITIONAL)
				sb_printf(sb, "missing argument %s",
					  spec->meta ? spec->meta : "VALUE");
			else
				sb_printf(sb, "missing argument \"%s\"",
					  spec->keyword);
			return -1;
		}
		if (spec->flags & ARG_ONE_OF)
			one_of |= ARG_BIT(i);
	}
	if (one_of && !(mask & one_of)) {
		sb_printf(sb, "missing argument: give at least one of ");
		for (spec = specs, i = 0; spec->keyword; spec++, i++) {
			if (!(one_of & ARG_BIT(i)))
				continue;
			one_of &= ~ARG_BIT(i);
			sb_printf(sb, "\"%s\"%s", spec->keyword,
				  one_of ? ", " : "");
		}
		return -1;
	}
	for (spec = specs, i = 0; spec->keyword; spec++, i++) {
		if (!(mask & ARG_BIT(i)))
			continue;
		if ((spec->needs & mask) != spec->needs) {
			sb_printf(sb, "\"%s\" needs \"%s\"", spec->keyword,
				  first_keyword(specs, spec->needs & ~mask));
			return -1;
		}
		if (spec->excludes & mask) {
			sb_printf(sb, "\"%s\" and \"%s\" cannot be given "
				  "together", spec->keyword,
				  first_keyword(specs, spec->excludes & mask));
			return -1;
		}
	}
	return 0;
}

int args_parse(const struct arg_spec *specs, int argc, char *const *argv,
	       void *opts, uint64_t *given, char *err, size_t errlen)
{
	struct strbuf sb = { .buf = err, .len = errlen };
	uint64_t mask = 0;
	bool flag = true;
	int a;

	if (errlen)
		err[0] = '\0';

	for (a = 0; a < argc; a++) {
		const struct arg_spec *spec = find_spec(specs, argv[a]);
		bool bare = false;
		unsigned int i;

		if (!spec) {
			spec = find_positional(specs, mask);
			bare = spec != NULL;
		}
		if (!spec) {
			if (!specs->keyword) {
				sb_printf(&sb, "unexpected argument \"%s\"",
					  argv[a]);
			} else {
				sb_printf(&sb, "unknown argument \"%s\" "
					  "(expected ", argv[a]);
				keyword_list(&sb, specs);
				sb_printf(&sb, ")");
			}
			return -1;
		}
		i = (unsigned int)(spec - specs);
		if (i >= ARG_MAX_SPECS) {
			sb_printf(&sb, "too many arguments in table");
			return -1;
		}
		if ((mask & ARG_BIT(i)) && !(spec->flags & ARG_REPEAT)) {
			sb_printf(&sb, "\"%s\" given more than once",
				  spec->keyword);
			return -1;
		}
		mask |= ARG_BIT(i);

		if (spec->type == ARG_FLAG) {
			memcpy((char *)opts + spec->offset, &flag,
			       sizeof(flag));
			continue;
		}
		if (bare) {
			if (store_value(spec, argv[a], opts, &sb))
				return -1;
			continue;
		}
		if (a + 1 >= argc) {
			sb_printf(&sb, "\"%s\" needs a value", spec->keyword);
			return -1;
		}
		if (store_value(spec, argv[++a], opts, &sb))
			return -1;
	}

	if (check_combination(specs, mask, &sb))
		return -1;

	*given = mask;
	return 0;
}

/* "keyword VALUE", as the usage line shows one argument. */
static void usage_arg(struct strbuf *sb, const struct arg_spec *s)
{
	if (s->flags & ARG_POSITIONAL) {
		sb_printf(sb, "%s", s->meta ? s->meta : "VALUE");
		return;
	}
	sb_printf(sb, "%s", s->keyword);
	if (s->type == ARG_ENUM) {
		sb_printf(sb, " { ");
		enum_list(sb, s->enums, " | ");
		sb_printf(sb, " }");
	} else if (s->type != ARG_FLAG) {
		sb_printf(sb, " %s", s->meta ? s->meta : "VALUE");
	}
}

/*
 * Optional arguments that exclude each other share one bracket, the first
 * one's: "[ uuid UUID | gpu ID ]".
 */
size_t args_usage(const struct arg_spec *specs, char *buf, size_t len)
{
	struct strbuf sb = { .buf = buf, .len = len };
	uint64_t shown = 0;
	unsigned int i, j;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < ARG_MAX_SPECS && specs[i].keyword; i++) {
		const struct arg_spec *s = &specs[i];
		bool opt = !(s->flags & ARG_REQUIRED);

		if (shown & ARG_BIT(i))
			continue;
		sb_printf(&sb, "%s%s", sb.used ? " " : "", opt ? "[ " : "");
		usage_arg(&sb, s);
		for (j = i + 1; opt && j < ARG_MAX_SPECS && specs[j].keyword;
		     j++) {
			if (!(s->excludes & ARG_BIT(j)) ||
			    (specs[j].flags & ARG_REQUIRED))
				continue;
			sb_printf(&sb, " | ");
			usage_arg(&sb, &specs[j]);
			shown |= ARG_BIT(j);
		}
		if (opt)
			sb_printf(&sb, " ]");
	}
	return sb.used;
}

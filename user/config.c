// SPDX-License-Identifier: GPL-2.0-only
/*
 * The declarative configuration, see config.h.
 *
 * libyaml loads the document into a node tree (aliases resolved, marks
 * kept); this file walks it against tables of the keys each mapping may
 * hold, the way args.c walks the command line, and checks what goes
 * together: required keys, duplicates, min-pct against max-pct and the
 * minimums of a GPU against 100 %.
 *
 * libyaml gives every scalar the string tag; it does not resolve plain
 * scalars the way YAML 1.1 does. This file does that much of it itself, so
 * that "type: 35" or "type: yes" is a number or a boolean where a name is
 * expected, and "weight: '100'" a string where a number is.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include <uapi/linux/gpuvirt.h>

#include "config.h"
#include "nl-gen.h"

const struct arg_enum config_vgpu_modes[] = {
	{ "homogeneous",	CONFIG_VGPU_MODE_HOMOGENEOUS },
	{ "mixed",		CONFIG_VGPU_MODE_MIXED },
	{ .name = NULL }
};

const struct arg_enum config_vgpu_models[] = {
	{ "mdev",		CONFIG_VGPU_MODEL_MDEV },
	{ "sriov",		CONFIG_VGPU_MODEL_SRIOV },
	{ .name = NULL }
};

const struct arg_enum config_pt_drivers[] = {
	{ "gpuvirt_vfio_pci",	CONFIG_PT_GPUVIRT },
	{ "vfio-pci",		CONFIG_PT_VFIO_PCI },
	{ .name = NULL }
};

struct parser {
	yaml_document_t doc;
	const char *name;
	char *err;
	size_t errlen;
	struct config *cfg;
};

/* Errors ------------------------------------------------------------------ */

__attribute__((format(printf, 4, 5)))
static int perr_at(struct parser *p, unsigned int line, unsigned int col,
		   const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "%s:%u:%u: ", p->name, line, col);

	if (n >= 0 && (size_t)n < p->errlen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static unsigned int node_line(const yaml_node_t *n)
{
	return (unsigned int)n->start_mark.line + 1;
}

static unsigned int node_col(const yaml_node_t *n)
{
	return (unsigned int)n->start_mark.column + 1;
}

#define perr(p, node, ...) \
	perr_at(p, node_line(node), node_col(node), __VA_ARGS__)

/* What a plain scalar means in YAML 1.1 ----------------------------------- */

enum scalar_kind { SK_STRING, SK_NUMBER, SK_BOOL, SK_NULL };

static bool one_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (!strcmp(s, *words))
			return true;
	return false;
}

/* Characters of @s from @set, at least one, up to the end or a stop. */
static const char *span(const char *s, const char *set)
{
	return s + strspn(s, set);
}

#define DEC	"0123456789"

/* YAML 1.1 int: 0b.., 0x.., 0.. (octal), decimal and base 60. */
static bool is_yaml_int(const char *s)
{
	const char *e;

	if (*s == '-' || *s == '+')
		s++;
	if (s[0] == '0' && s[1] == 'b')
		return s[2] && !*span(s + 2, "01_");
	if (s[0] == '0' && s[1] == 'x')
		return s[2] && !*span(s + 2, DEC "abcdefABCDEF_");
	if (s[0] == '0')
		return !*span(s + 1, "01234567_");
	if (*s < '1' || *s > '9')
		return false;
	e = span(s, DEC "_");
	while (*e == ':') {
		/* Base 60: ":" then one or two digits, the first 0 to 5. */
		const char *d = e + 1;

		if (*d >= '0' && *d <= '5' && d[1] >= '0' && d[1] <= '9')
			d += 2;
		else if (*d >= '0' && *d <= '9')
			d += 1;
		else
			return false;
		e = d;
	}
	return !*e;
}

/* YAML 1.1 float, including base 60 and the special values. */
static bool is_yaml_float(const char *s)
{
	static const char *const nan[] = { ".nan", ".NaN", ".NAN", NULL };
	static const char *const inf[] = { ".inf", ".Inf", ".INF", NULL };
	const char *e;

	if (one_of(s, nan))
		return true;
	if (*s == '-' || *s == '+')
		s++;
	if (one_of(s, inf))
		return true;
	e = span(s, DEC "_:");
	if (*e != '.' || (e == s && !(e[1] >= '0' && e[1] <= '9')))
		return false;
	e = span(e + 1, DEC "._");
	if (*e == 'e' || *e == 'E') {
		e++;
		if (*e != '-' && *e != '+')
			return false;
		e++;
		if (!*e || *span(e, DEC))
			return false;
		return true;
	}
	return !*e;
}

static enum scalar_kind scalar_kind(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL",
					     NULL };
	static const char *const bools[] = {
		"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
		"true", "True", "TRUE", "false", "False", "FALSE",
		"on", "On", "ON", "off", "Off", "OFF", NULL
	};
	const char *s = (const char *)n->data.scalar.value;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return SK_STRING;
	if (one_of(s, nulls))
		return SK_NULL;
	if (one_of(s, bools))
		return SK_BOOL;
	if (is_yaml_int(s) || is_yaml_float(s))
		return SK_NUMBER;
	return SK_STRING;
}

/* "a list", "a number (35)", ... for "expects X, got Y". */
static void node_desc(const yaml_node_t *n, char *buf, size_t len)
{
	const char *s;

	switch (n->type) {
	case YAML_SEQUENCE_NODE:
		snprintf(buf, len, "a list");
		return;
	case YAML_MAPPING_NODE:
		snprintf(buf, len, "a mapping");
		return;
	case YAML_SCALAR_NODE:
		break;
	default:
		snprintf(buf, len, "nothing");
		return;
	}
	s = (const char *)n->data.scalar.value;
	switch (scalar_kind(n)) {
	case SK_NULL:
		snprintf(buf, len, "an empty value");
		break;
	case SK_BOOL:
		snprintf(buf, len, "a boolean (%s)", s);
		break;
	case SK_NUMBER:
		snprintf(buf, len, "a number (%s)", s);
		break;
	case SK_STRING:
		snprintf(buf, len, "a string (\"%s\")", s);
		break;
	}
}

/* Nodes -------------------------------------------------------------------- */

static const yaml_node_t *node_get(struct parser *p, int index)
{
	return yaml_document_get_node(&p->doc, index);
}

/* The text of a scalar, or NULL (reported) if it holds a NUL byte. */
static const char *scalar_text(struct parser *p, const yaml_node_t *n,
			       const char *key)
{
	const char *s = (const char *)n->data.scalar.value;

	if (strlen(s) != n->data.scalar.length) {
		perr(p, n, "\"%s\" holds a NUL character", key);
		return NULL;
	}
	return s;
}

/* Tags: only YAML's own ones (!!str, !!int, ...); libyaml adds them. */
static int check_tag(struct parser *p, const yaml_node_t *n)
{
	static const char prefix[] = "tag:yaml.org,2002:";
	const char *tag = (const char *)n->tag;

	if (tag && strncmp(tag, prefix, sizeof(prefix) - 1))
		return perr(p, n, "unsupported tag \"%s\"", tag);
	return 0;
}

/* Fields ------------------------------------------------------------------- */

enum field_kind {
	F_U32,		/* uint32_t in min..max (or 0 with FLD_ZERO) */
	F_SIZE,		/* uint64_t bytes, K/M/G/T suffixes, min..max */
	F_MODEL,	/* char[CONFIG_NAME_MAX + 1]: a-z 0-9 - . */
	F_TYPE,		/* char[CONFIG_NAME_MAX + 1]: A-Z a-z 0-9 - _ . */
	F_UUID,		/* char[UNITS_UUID_LEN] */
	F_BDF,		/* char[CONFIG_BDF_LEN]: a PCI address */
	F_ENUM,		/* uint32_t, one of enums */
	F_BOOL,		/* bool: YAML 1.1 true/false, yes/no, on/off */
	F_LIST,		/* a list, each item handed to sub() */
	F_MAP,		/* a mapping, handed to sub() */
	F_DEVICE,	/* char[CONFIG_DEV_LEN]: a PCI address or a name */
	F_DTYPE,	/* char[CONFIG_DTYPE_LEN]: another stack's type */
	F_ANY,		/* any value, not stored: only whether it is there */
};

#define FLD_REQUIRED	0x1
#define FLD_ZERO	0x2

struct field {
	const char *key;
	enum field_kind kind;
	size_t offset;
	unsigned int flags;
	uint64_t min, max;
	const struct arg_enum *enums;
	size_t max_items;	/* F_LIST */
	/* F_LIST: called per item with its index; F_MAP: once, index 0. */
	int (*sub)(struct parser *p, const yaml_node_t *n, size_t index,
		   void *obj);
};

#define MAX_FIELDS	8

static int expect_failed(struct parser *p, const yaml_node_t *n,
			 const char *key, const char *what)
{
	char got[96];

	node_desc(n, got, sizeof(got));
	return perr(p, n, "\"%s\" expects %s, got %s", key, what, got);
}

/* A scalar that is a string by YAML's rules, or NULL (reported). */
static const char *string_value(struct parser *p, const yaml_node_t *n,
				const char *key, const char *what)
{
	if (n->type != YAML_SCALAR_NODE || scalar_kind(n) != SK_STRING) {
		expect_failed(p, n, key, what);
		return NULL;
	}
	return scalar_text(p, n, key);
}

static int parse_u32(struct parser *p, const yaml_node_t *n,
		     const struct field *f, void *dst)
{
	char what[96];
	const char *s;
	uint64_t v;
	uint32_t v32;

	snprintf(what, sizeof(what), "%sa number from %" PRIu64 " to %" PRIu64,
		 f->flags & FLD_ZERO ? "0 or " : "", f->min, f->max);
	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return expect_failed(p, n, f->key, what);
	s = (const char *)n->data.scalar.value;
	/* No leading zeros: YAML 1.1 reads 010 as octal, JSON refuses it. */
	if (units_parse_u64(s, &v) || (s[0] == '0' && s[1] >= '0' && s[1] <= '9') ||
	    ((v < f->min || v > f->max) && !(v == 0 && (f->flags & FLD_ZERO))))
		return perr(p, n, "\"%s\" expects %s, got \"%s\"", f->key, what,
			    s);
	v32 = (uint32_t)v;
	memcpy(dst, &v32, sizeof(v32));
	return 0;
}

static int parse_size(struct parser *p, const yaml_node_t *n,
		      const struct field *f, void *dst)
{
	char lo[32], hi[32], what[128];
	const char *s;
	uint64_t v;

	units_format_size(lo, sizeof(lo), f->min);
	units_format_size(hi, sizeof(hi), f->max);
	snprintf(what, sizeof(what), "a size from %s to %s (suffixes K, M, G, T)",
		 lo, hi);
	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return expect_failed(p, n, f->key, what);
	s = (const char *)n->data.scalar.value;
	if (units_parse_size(s, &v) || v < f->min || v > f->max)
		return perr(p, n, "\"%s\" expects %s, got \"%s\"", f->key, what,
			    s);
	memcpy(dst, &v, sizeof(v));
	return 0;
}

static int parse_name(struct parser *p, const yaml_node_t *n,
		      const struct field *f, char *dst)
{
	const char *chars, *what, *s;
	char desc[128];

	if (f->kind == F_MODEL) {
		chars = "abcdefghijklmnopqrstuvwxyz" DEC "-.";
		what = "a-z, 0-9, '-' and '.'";
	} else {
		chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			DEC "-_.";
		what = "letters, digits, '-', '_' and '.'";
	}
	snprintf(desc, sizeof(desc), "a name of 1 to %d characters of %s",
		 CONFIG_NAME_MAX, what);
	s = string_value(p, n, f->key, "a string");
	if (!s)
		return -1;
	if (!*s || strlen(s) > CONFIG_NAME_MAX || *span(s, chars))
		return perr(p, n, "\"%s\" expects %s, got \"%s\"", f->key, desc,
			    s);
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

/* Append @word and, unless @last, ", " to @buf; truncation stays ended. */
static void list_add(char *buf, size_t len, size_t *used, const char *word,
		     bool last)
{
	int n;

	if (*used >= len)
		return;
	n = snprintf(buf + *used, len - *used, "%s%s", word, last ? "" : ", ");
	if (n > 0)
		*used += (size_t)n;
}

static void enum_list(char *buf, size_t len, const struct arg_enum *e)
{
	size_t used = 0;

	buf[0] = '\0';
	for (; e->name; e++)
		list_add(buf, len, &used, e->name, !e[1].name);
}

static int parse_enum(struct parser *p, const yaml_node_t *n,
		      const struct field *f, void *dst)
{
	const struct arg_enum *e;
	char what[160], list[128];
	const char *s;

	enum_list(list, sizeof(list), f->enums);
	snprintf(what, sizeof(what), "one of %s", list);
	s = string_value(p, n, f->key, what);
	if (!s)
		return -1;
	for (e = f->enums; e->name; e++) {
		if (!strcmp(e->name, s)) {
			memcpy(dst, &e->value, sizeof(e->value));
			return 0;
		}
	}
	return perr(p, n, "\"%s\" expects %s, got \"%s\"", f->key, what, s);
}

static int parse_uuid(struct parser *p, const yaml_node_t *n,
		      const struct field *f, char *dst)
{
	static const char what[] =
		"a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)";
	const char *s;

	/* A UUID of digits only is a number to YAML: quoted or not, take it. */
	if (n->type != YAML_SCALAR_NODE)
		return expect_failed(p, n, f->key, what);
	s = scalar_text(p, n, f->key);
	if (!s)
		return -1;
	if (units_parse_uuid(s, dst))
		return perr(p, n, "\"%s\" expects %s, got \"%s\"", f->key, what,
			    s);
	return 0;
}

/* @n hex digits at @s, then @end; their value in @val. */
static bool hex_digits(const char *s, size_t n, char end, unsigned long *val)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	if (s[n] != end)
		return false;
	*val = strtoul(s, NULL, 16);
	return true;
}

/*
 * A PCI address, "DDDD:BB:DD.F" or "BB:DD.F" (domain 0), in the canonical
 * lower-case form. Unquoted, YAML 1.1 reads "0000:01:00.0" as a base 60
 * number: quoted or not, take the text, as for UUIDs.
 */
static int parse_bdf(struct parser *p, const yaml_node_t *n,
		     const struct field *f, char *dst)
{
	static const char what[] =
		"a PCI address DDDD:BB:DD.F (as 0000:01:00.0; device 00 to 1f, function 0 to 7)";
	unsigned long dom = 0, bus, dev, fn;
	const char *s, *t;

	if (n->type != YAML_SCALAR_NODE)
		return expect_failed(p, n, f->key, what);
	s = scalar_text(p, n, f->key);
	if (!s)
		return -1;
	t = s;
	if (strlen(s) == CONFIG_BDF_LEN - 1) {
		if (!hex_digits(s, 4, ':', &dom))
			goto bad;
		t += 5;
	}
	if (!hex_digits(t, 2, ':', &bus) || !hex_digits(t + 3, 2, '.', &dev) ||
	    dev > 0x1f || t[6] < '0' || t[6] > '7' || t[7])
		goto bad;
	fn = (unsigned long)(t[6] - '0');
	snprintf(dst, CONFIG_BDF_LEN, "%04lx:%02lx:%02lx.%lu", dom, bus, dev,
		 fn);
	return 0;

bad:
	return perr(p, n, "\"%s\" expects %s, got \"%s\"", f->key, what, s);
}

/*
 * Another stack's device, "0000:41:00.0" (made canonical) or an mdev
 * parent's name ("mtty"); or its type, as admins write it ("A100-4C",
 * "nvidia-558", "GVTg_V5_4"), blanks allowed.
 */
static int parse_devname(struct parser *p, const yaml_node_t *n,
			 const struct field *f, char *dst)
{
	const bool dev = f->kind == F_DEVICE;
	const size_t max = dev ? CONFIG_DEV_LEN - 1 : CONFIG_DTYPE_LEN - 1;
	const char *chars = dev ?
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" DEC "-_.:" :
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" DEC "-_. ";
	const char *s;

	if (n->type != YAML_SCALAR_NODE)
		return expect_failed(p, n, f->key, "a string");
	s = scalar_text(p, n, f->key);
	if (!s)
		return -1;
	if (!*s || strlen(s) > max || *span(s, chars))
		return perr(p, n, "\"%s\" expects %s of 1 to %zu characters of letters, digits and %s, got \"%s\"",
			    f->key, dev ? "a PCI address or a device name" :
			    "a type name", max, dev ? "'-', '_', '.', ':'" :
			    "'-', '_', '.', ' '", s);
	if (dev && strchr(s, ':'))
		return parse_bdf(p, n, f, dst);
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

static int parse_bool(struct parser *p, const yaml_node_t *n,
		      const struct field *f, void *dst)
{
	static const char *const yes[] = { "y", "Y", "yes", "Yes", "YES",
		"true", "True", "TRUE", "on", "On", "ON", NULL };
	bool v;

	if (n->type != YAML_SCALAR_NODE || scalar_kind(n) != SK_BOOL)
		return expect_failed(p, n, f->key, "on or off");
	v = one_of((const char *)n->data.scalar.value, yes);
	memcpy(dst, &v, sizeof(v));
	return 0;
}

static int parse_list(struct parser *p, const yaml_node_t *n,
		      const struct field *f, void *obj)
{
	const yaml_node_item_t *it;
	size_t i = 0;

	if (n->type != YAML_SEQUENCE_NODE)
		return expect_failed(p, n, f->key, "a list");
	for (it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++, i++) {
		const yaml_node_t *item;

		if (i >= f->max_items)
			return perr(p, n, "\"%s\" has more than %zu entries",
				    f->key, f->max_items);
		item = node_get(p, *it);
		if (!item || check_tag(p, item) || f->sub(p, item, i, obj))
			return -1;
	}
	return 0;
}

static int parse_value(struct parser *p, const yaml_node_t *n,
		       const struct field *f, void *obj)
{
	char *dst = (char *)obj + f->offset;

	if (check_tag(p, n))
		return -1;
	switch (f->kind) {
	case F_U32:
		return parse_u32(p, n, f, dst);
	case F_SIZE:
		return parse_size(p, n, f, dst);
	case F_MODEL:
	case F_TYPE:
		return parse_name(p, n, f, dst);
	case F_UUID:
		return parse_uuid(p, n, f, dst);
	case F_BDF:
		return parse_bdf(p, n, f, dst);
	case F_ENUM:
		return parse_enum(p, n, f, dst);
	case F_BOOL:
		return parse_bool(p, n, f, dst);
	case F_LIST:
		return parse_list(p, n, f, obj);
	case F_MAP:
		if (n->type != YAML_MAPPING_NODE)
			return expect_failed(p, n, f->key, "a mapping");
		return f->sub(p, n, 0, obj);
	case F_DEVICE:
	case F_DTYPE:
		return parse_devname(p, n, f, dst);
	case F_ANY:
		return 0;
	}
	return 0;
}

/*
 * Walk the mapping @n, @what in messages ("a vGPU"), against the keys of
 * @fields (ended by a NULL key) into @obj. @seen[i] is set to the value node
 * of fields[i], or NULL when the key is not there.
 */
static int parse_map(struct parser *p, const yaml_node_t *n, const char *what,
		     const struct field *fields, void *obj,
		     const yaml_node_t **seen)
{
	const yaml_node_t *keys[MAX_FIELDS] = { NULL };
	const yaml_node_pair_t *pair;
	const struct field *f;
	size_t i;

	if (n->type != YAML_MAPPING_NODE) {
		char got[96];

		node_desc(n, got, sizeof(got));
		return perr(p, n, "%s must be a mapping, got %s", what, got);
	}
	for (i = 0; fields[i].key; i++)
		seen[i] = NULL;

	for (pair = n->data.mapping.pairs.start;
	     pair < n->data.mapping.pairs.top; pair++) {
		const yaml_node_t *key = node_get(p, pair->key);
		const yaml_node_t *val = node_get(p, pair->value);
		const char *k;

		if (!key || !val)
			return perr(p, n, "malformed document");
		if (key->type != YAML_SCALAR_NODE)
			return perr(p, key, "a key of %s must be a string", what);
		k = scalar_text(p, key, "key");
		if (!k)
			return -1;
		for (f = fields; f->key && strcmp(f->key, k); f++)
			;
		if (!f->key) {
			char expected[128] = "";
			size_t used = 0;

			for (f = fields; f->key; f++)
				list_add(expected, sizeof(expected), &used,
					 f->key, !f[1].key);
			return perr(p, key, "unknown key \"%s\" in %s (expected %s)",
				    k, what, expected);
		}
		i = (size_t)(f - fields);
		if (seen[i])
			return perr(p, key, "\"%s\" is given twice (first on line %u)",
				    k, node_line(keys[i]));
		seen[i] = val;
		keys[i] = key;
		if (parse_value(p, val, f, obj))
			return -1;
	}

	for (i = 0; fields[i].key; i++)
		if ((fields[i].flags & FLD_REQUIRED) && !seen[i])
			return perr(p, n, "%s needs \"%s\"", what,
				    fields[i].key);
	return 0;
}

/* Growing an array by one zeroed element. */
static void *grow(void *arr, size_t n, size_t size)
{
	char *a = realloc(arr, (n + 1) * size);

	if (a)
		memset(a + n * size, 0, size);
	return a;
}

/* simulated-gpus ------------------------------------------------------------ */

enum { SIM_ID, SIM_MODEL, SIM_VRAM, SIM_ENGINES };

static const struct field sim_fields[] = {
	[SIM_ID] = { "id", F_U32, offsetof(struct config_sim, id),
		     FLD_REQUIRED, 0, UINT32_MAX },
	[SIM_MODEL] = { "model", F_MODEL, offsetof(struct config_sim, model),
			FLD_REQUIRED },
	[SIM_VRAM] = { "vram", F_SIZE, offsetof(struct config_sim, vram), 0,
		       1ULL << 30, 1ULL << 40 },
	[SIM_ENGINES] = { "engines", F_U32,
			  offsetof(struct config_sim, engines), 0, 1, 64 },
	{ .key = NULL }
};

static int parse_sim(struct parser *p, const yaml_node_t *n, size_t index,
		     void *obj)
{
	const yaml_node_t *seen[MAX_FIELDS];
	struct config *cfg = obj;
	struct config_sim *sim, *other;
	bool custom;

	(void)index;
	sim = grow(cfg->sims, cfg->n_sims, sizeof(*sim));
	if (!sim)
		return perr(p, n, "out of memory");
	cfg->sims = sim;
	sim += cfg->n_sims;
	sim->line = node_line(n);
	if (parse_map(p, n, "a simulated GPU", sim_fields, sim, seen))
		return -1;

	custom = !strcmp(sim->model, "custom");
	if (custom && !seen[SIM_VRAM])
		return perr(p, n, "a custom simulated GPU needs \"vram\"");
	if (custom && !seen[SIM_ENGINES])
		return perr(p, n, "a custom simulated GPU needs \"engines\"");
	if (!custom && seen[SIM_VRAM])
		return perr(p, seen[SIM_VRAM],
			    "\"vram\" is only for model custom");
	if (!custom && seen[SIM_ENGINES])
		return perr(p, seen[SIM_ENGINES],
			    "\"engines\" is only for model custom");
	for (other = cfg->sims; other < sim; other++)
		if (other->id == sim->id)
			return perr(p, n, "simulated GPU %u is listed twice (first on line %u)",
				    sim->id, other->line);
	cfg->n_sims++;
	return 0;
}

/* gpus ---------------------------------------------------------------------- */

enum {
	VGPU_UUID, VGPU_VF, VGPU_TYPE, VGPU_WEIGHT, VGPU_MIN, VGPU_MAX, VGPU_GI
};

static const struct field vgpu_fields[] = {
	[VGPU_UUID] = { "uuid", F_UUID, offsetof(struct config_vgpu, uuid) },
	[VGPU_VF] = { "vf", F_BDF, offsetof(struct config_vgpu, vf) },
	[VGPU_TYPE] = { "type", F_TYPE, offsetof(struct config_vgpu, type),
			FLD_REQUIRED },
	[VGPU_WEIGHT] = { "weight", F_U32, offsetof(struct config_vgpu, weight),
			  0, 1, 10000 },
	[VGPU_MIN] = { "min-pct", F_U32, offsetof(struct config_vgpu, min_pct),
		       0, 0, 100 },
	[VGPU_MAX] = { "max-pct", F_U32, offsetof(struct config_vgpu, max_pct),
		       0, 1, 100 },
	[VGPU_GI] = { "gi", F_U32, offsetof(struct config_vgpu, gi),
		      0, 0, CONFIG_MAX_GIS - 1 },
	{ .key = NULL }
};

static int parse_vgpu(struct parser *p, const yaml_node_t *n, size_t index,
		      void *obj)
{
	const yaml_node_t *seen[MAX_FIELDS];
	struct config_gpu *gpu = obj, *og;
	struct config_vgpu *v;
	size_t i;

	(void)index;
	v = grow(gpu->vgpus, gpu->n_vgpus, sizeof(*v));
	if (!v)
		return perr(p, n, "out of memory");
	gpu->vgpus = v;
	v += gpu->n_vgpus;
	v->line = node_line(n);
	v->column = node_col(n);
	if (parse_map(p, n, "a vGPU", vgpu_fields, v, seen))
		return -1;
	v->has_weight = seen[VGPU_WEIGHT];
	v->has_min = seen[VGPU_MIN];
	v->has_max = seen[VGPU_MAX];
	v->has_gi = seen[VGPU_GI];
	if (!seen[VGPU_UUID] == !seen[VGPU_VF])
		return perr(p, n, seen[VGPU_UUID] ?
			    "a vGPU takes \"uuid\" (an mdev vGPU) or \"vf\" (a VF vGPU, sriov model), not both" :
			    "a vGPU needs \"uuid\" (an mdev vGPU) or \"vf\" (a VF vGPU, sriov model)");
	if (seen[VGPU_VF] && v->has_gi)
		return perr(p, seen[VGPU_GI],
			    "\"gi\" is not for a VF vGPU: the kernel places it on the lowest GI of its type's profile with room");
	if (v->has_min && v->has_max && v->min_pct > v->max_pct)
		return perr(p, seen[VGPU_MIN],
			    "\"min-pct\" (%u) must not be above \"max-pct\" (%u)",
			    v->min_pct, v->max_pct);

	/*
	 * UUIDs and VFs are unique on the host, so across GPUs; the GPU being
	 * parsed is already counted in p->cfg->n_gpus, with the vGPUs before
	 * this.
	 */
	for (og = p->cfg->gpus; og < p->cfg->gpus + p->cfg->n_gpus; og++)
		for (i = 0; i < og->n_vgpus; i++)
			if (!strcmp(og->vgpus[i].uuid, v->uuid) &&
			    !strcmp(og->vgpus[i].vf, v->vf))
				return perr(p, n, "vGPU %s is listed twice (first on line %u)",
					    config_vgpu_name(v),
					    og->vgpus[i].line);
	gpu->n_vgpus++;
	return 0;
}

enum { SCHED_POLICY, SCHED_TIMESLICE };

static const struct field sched_fields[] = {
	[SCHED_POLICY] = { "policy", F_ENUM, offsetof(struct config_gpu, policy),
			   .enums = sched_policy_names },
	/* 0 is the default for the vGPU count; the spec's range otherwise. */
	[SCHED_TIMESLICE] = { "timeslice-us", F_U32,
			      offsetof(struct config_gpu, timeslice_us),
			      FLD_ZERO, 100, 100000 },
	{ .key = NULL }
};

static int parse_sched(struct parser *p, const yaml_node_t *n, size_t index,
		       void *obj)
{
	const yaml_node_t *seen[MAX_FIELDS];
	struct config_gpu *gpu = obj;

	(void)index;
	if (parse_map(p, n, "\"sched\"", sched_fields, gpu, seen))
		return -1;
	gpu->has_policy = seen[SCHED_POLICY];
	gpu->has_timeslice = seen[SCHED_TIMESLICE];
	return 0;
}

/* mig ----------------------------------------------------------------------- */

/*
 * "PROFILE" or "PROFILExCOUNT": PROFILE of the form <n>g.<n>gb[+me], as
 * every GI profile is named; COUNT 1 to 7. Which profiles a GPU has is
 * for apply.c to check against its model.
 */
static int parse_gi(struct parser *p, const yaml_node_t *n, size_t index,
		    void *obj)
{
	static const char what[] =
		"a GI profile, as 1g.18gb, 1g.18gb+me or 1g.18gbx2 (a count of 1 to 7)";
	struct config_mig *mig = obj;
	struct config_gi *gi;
	const char *s, *e, *x;
	unsigned int total = 0;
	size_t len, i;

	(void)index;
	s = string_value(p, n, "instances", what);
	if (!s)
		return -1;
	x = strrchr(s, 'x');
	len = x ? (size_t)(x - s) : strlen(s);
	e = span(s, DEC);
	if (e == s || *e++ != 'g' || *e++ != '.' || span(e, DEC) == e)
		goto bad;
	e = span(e, DEC);
	if (strncmp(e, "gb", 2))
		goto bad;
	e += 2;
	if (!strncmp(e, "+me", 3))
		e += 3;
	if ((size_t)(e - s) != len || len > CONFIG_GI_NAME_MAX)
		goto bad;
	if (x && (!x[1] || *span(x + 1, DEC)))
		goto bad;
	if (x && (x[1] < '1' || x[1] > '7' || x[2]))
		return perr(p, n, "\"%s\": the count after \"x\" must be from 1 to %d",
			    s, CONFIG_MAX_GIS);
	for (i = 0; i < mig->n_gis; i++)
		total += mig->gis[i].count;
	total += x ? (unsigned int)(x[1] - '0') : 1;
	if (total > CONFIG_MAX_GIS)
		return perr(p, n, "\"instances\" holds more than %d GIs, the most a GPU has",
			    CONFIG_MAX_GIS);
	gi = &mig->gis[mig->n_gis++];
	memcpy(gi->profile, s, len);
	gi->profile[len] = '\0';
	gi->count = x ? (uint32_t)(x[1] - '0') : 1;
	gi->line = node_line(n);
	gi->column = node_col(n);
	return 0;

bad:
	return perr(p, n, "\"instances\" expects %s, got \"%s\"", what, s);
}

enum { MIG_MODE, MIG_INSTANCES };

static const struct field mig_fields[] = {
	[MIG_MODE] = { "mode", F_BOOL, offsetof(struct config_mig, on) },
	[MIG_INSTANCES] = { "instances", F_LIST, .max_items = CONFIG_MAX_GIS,
			    .sub = parse_gi },
	{ .key = NULL }
};

static int parse_mig(struct parser *p, const yaml_node_t *n, size_t index,
		     void *obj)
{
	const yaml_node_t *seen[MAX_FIELDS];
	struct config_mig *mig = &((struct config_gpu *)obj)->mig;

	(void)index;
	mig->set = true;
	mig->line = node_line(n);
	if (parse_map(p, n, "\"mig\"", mig_fields, mig, seen))
		return -1;
	if (!seen[MIG_MODE])
		mig->on = true;
	if (!mig->on && mig->n_gis)
		return perr(p, seen[MIG_INSTANCES],
			    "\"instances\" needs MIG mode on, and \"mode\" is off");
	return 0;
}

enum { GPU_ID, GPU_MODE, GPU_MODEL, GPU_VFS, GPU_SCHED, GPU_VGPUS, GPU_MIG };

static const struct field gpu_fields[] = {
	[GPU_ID] = { "id", F_U32, offsetof(struct config_gpu, id),
		     FLD_REQUIRED, 0, UINT32_MAX },
	[GPU_MODE] = { "vgpu-mode", F_ENUM,
		       offsetof(struct config_gpu, vgpu_mode),
		       .enums = config_vgpu_modes },
	[GPU_MODEL] = { "vgpu-model", F_ENUM,
			offsetof(struct config_gpu, vgpu_model),
			.enums = config_vgpu_models },
	/* the PCI core's own bound: sriov_totalvfs is 16 bits */
	[GPU_VFS] = { "vfs", F_U32, offsetof(struct config_gpu, vfs),
		      0, 0, 65535 },
	[GPU_SCHED] = { "sched", F_MAP, .sub = parse_sched },
	[GPU_VGPUS] = { "vgpus", F_LIST, .max_items = CONFIG_MAX_VGPUS,
			.sub = parse_vgpu },
	[GPU_MIG] = { "mig", F_MAP, .sub = parse_mig },
	{ .key = NULL }
};

/* What the kernel would refuse about the vGPUs of one GPU as a whole. */
static int check_gpu(struct parser *p, const struct config_gpu *gpu)
{
	unsigned int sum = 0;
	size_t i, j;

	for (i = 0; i < gpu->n_vgpus; i++) {
		const struct config_vgpu *v = &gpu->vgpus[i];

		if (gpu->vgpu_model == CONFIG_VGPU_MODEL_SRIOV && !v->vf[0])
			return perr_at(p, v->line, v->column,
				       "GPU %u has the sriov vGPU model: its vGPUs are VFs, listed by \"vf\" (the kernel gives each its UUID)",
				       gpu->id);
		if (gpu->vgpu_model == CONFIG_VGPU_MODEL_MDEV && v->vf[0])
			return perr_at(p, v->line, v->column,
				       "GPU %u has the mdev vGPU model: its vGPUs are mdev devices, listed by \"uuid\" (\"vf\" needs vgpu-model: sriov)",
				       gpu->id);
		if (v->has_gi && gpu->mig.set && !gpu->mig.on)
			return perr_at(p, v->line, v->column,
				       "vGPU %s is on GI %u, but GPU %u has MIG mode off",
				       v->uuid, v->gi, gpu->id);
		for (j = 0; v->has_gi && j < i; j++)
			if (gpu->vgpus[j].has_gi && gpu->vgpus[j].gi == v->gi)
				return perr_at(p, v->line, v->column,
					       "GI %u of GPU %u holds one vGPU, and %s is there (line %u)",
					       v->gi, gpu->id, gpu->vgpus[j].uuid,
					       gpu->vgpus[j].line);

		if (v->has_min)
			sum += v->min_pct;
		if (sum > 100)
			return perr_at(p, v->line, v->column,
				       "the \"min-pct\" of the vGPUs of GPU %u add up to more than 100",
				       gpu->id);
		if (gpu->vgpu_mode == CONFIG_VGPU_MODE_HOMOGENEOUS &&
		    strcmp(v->type, gpu->vgpus[0].type))
			return perr_at(p, v->line, v->column,
				       "GPU %u is homogeneous, but its vGPUs are of types %s and %s",
				       gpu->id, gpu->vgpus[0].type, v->type);
	}
	return 0;
}

/* Another stack's devices ---------------------------------------------------- */

enum { DV_UUID, DV_VF, DV_TYPE, DV_WEIGHT, DV_MIN, DV_MAX, DV_GI };

static const struct field dvgpu_fields[] = {
	[DV_UUID] = { "uuid", F_UUID, offsetof(struct config_dvgpu, uuid) },
	[DV_VF] = { "vf", F_BDF, offsetof(struct config_dvgpu, vf) },
	[DV_TYPE] = { "type", F_DTYPE, offsetof(struct config_dvgpu, type),
		      FLD_REQUIRED },
	/* gpuvirt's own: kept for apply to refuse, naming the stack */
	[DV_WEIGHT] = { "weight", F_U32, offsetof(struct config_dvgpu, weight),
			0, 0, UINT32_MAX },
	[DV_MIN] = { "min-pct", F_U32, offsetof(struct config_dvgpu, min_pct),
		     0, 0, UINT32_MAX },
	[DV_MAX] = { "max-pct", F_U32, offsetof(struct config_dvgpu, max_pct),
		     0, 0, UINT32_MAX },
	[DV_GI] = { "gi", F_U32, offsetof(struct config_dvgpu, gi),
		    0, 0, UINT32_MAX },
	{ .key = NULL }
};

static int parse_dvgpu(struct parser *p, const yaml_node_t *n, size_t index,
		       void *obj)
{
	const yaml_node_t *seen[MAX_FIELDS];
	struct config_dev *dev = obj;
	const struct config_dev *od;
	struct config_dvgpu *v;
	size_t i, k;

	(void)index;
	v = grow(dev->vgpus, dev->n_vgpus, sizeof(*v));
	if (!v)
		return perr(p, n, "out of memory");
	dev->vgpus = v;
	v += dev->n_vgpus;
	v->line = node_line(n);
	v->column = node_col(n);
	if (parse_map(p, n, "a vGPU", dvgpu_fields, v, seen))
		return -1;
	v->has_uuid = seen[DV_UUID];
	v->has_vf = seen[DV_VF];
	if (v->has_uuid == v->has_vf)
		return perr(p, n, v->has_uuid ?
			    "a vGPU of device %s takes \"uuid\" (mdev) or \"vf\" (nvidia-vf), not both" :
			    "a vGPU of device %s needs \"uuid\" (mdev) or \"vf\" (nvidia-vf)",
			    dev->device);
	for (k = DV_WEIGHT; k <= DV_GI && !v->ours_only; k++)
		if (seen[k])
			v->ours_only = dvgpu_fields[k].key;

	/* a UUID or a VF once on the host: every device, this one so far */
	for (od = p->cfg->devs; od <= dev; od++)
		for (i = 0; i < od->n_vgpus && (od < dev || &od->vgpus[i] < v); i++)
			if ((v->has_uuid && !strcmp(od->vgpus[i].uuid, v->uuid)) ||
			    (v->has_vf && !strcmp(od->vgpus[i].vf, v->vf)))
				return perr(p, n, "vGPU %s is listed twice (first on line %u)",
					    v->has_uuid ? v->uuid : v->vf,
					    od->vgpus[i].line);
	dev->n_vgpus++;
	return 0;
}

enum { DEV_DEVICE, DEV_VFS, DEV_VGPUS, DEV_MODE, DEV_SCHED, DEV_MIG };

static const struct field dev_fields[] = {
	[DEV_DEVICE] = { "device", F_DEVICE, offsetof(struct config_dev, device),
			 FLD_REQUIRED },
	[DEV_VFS] = { "vfs", F_U32, offsetof(struct config_dev, vfs), 0, 1,
		      65535 },
	[DEV_VGPUS] = { "vgpus", F_LIST, .max_items = CONFIG_MAX_VGPUS,
			.sub = parse_dvgpu },
	/* gpuvirt's own, whatever their value: apply refuses them */
	[DEV_MODE] = { "vgpu-mode", F_ANY },
	[DEV_SCHED] = { "sched", F_ANY },
	[DEV_MIG] = { "mig", F_ANY },
	{ .key = NULL }
};

/* Does the mapping @n have the key @key? */
static bool has_key(struct parser *p, const yaml_node_t *n, const char *key)
{
	const yaml_node_pair_t *pair;

	if (n->type != YAML_MAPPING_NODE)
		return false;
	for (pair = n->data.mapping.pairs.start;
	     pair < n->data.mapping.pairs.top; pair++) {
		const yaml_node_t *k = node_get(p, pair->key);

		if (k && k->type == YAML_SCALAR_NODE &&
		    !strcmp((const char *)k->data.scalar.value, key))
			return true;
	}
	return false;
}

/*
 * "gpus: - device: NAME": a device of another stack. Its "vgpu-mode",
 * "sched" and "mig" are only looked at for being there: apply, which knows
 * the stack, refuses them.
 */
static int parse_dev(struct parser *p, const yaml_node_t *n)
{
	const yaml_node_t *seen[MAX_FIELDS];
	struct config *cfg = p->cfg;
	struct config_dev *dev, *other;
	size_t k;

	dev = grow(cfg->devs, cfg->n_devs, sizeof(*dev));
	if (!dev)
		return perr(p, n, "out of memory");
	cfg->devs = dev;
	dev += cfg->n_devs;
	dev->line = node_line(n);
	/* Counted at once, so that config_free() frees its vGPUs. */
	cfg->n_devs++;
	if (parse_map(p, n, "a device", dev_fields, dev, seen))
		return -1;
	dev->has_vfs = seen[DEV_VFS];
	for (k = DEV_MODE; k <= DEV_MIG && !dev->ours_only; k++)
		if (seen[k])
			dev->ours_only = dev_fields[k].key;
	for (other = cfg->devs; other < dev; other++)
		if (!strcmp(other->device, dev->device))
			return perr(p, n, "device %s is listed twice (first on line %u)",
				    dev->device, other->line);
	return 0;
}

static int parse_gpu(struct parser *p, const yaml_node_t *n, size_t index,
		     void *obj)
{
	const yaml_node_t *seen[MAX_FIELDS];
	struct config *cfg = obj;
	struct config_gpu *gpu, *other;

	(void)index;
	if (has_key(p, n, "device")) {
		if (has_key(p, n, "id"))
			return perr(p, n, "a GPU is named by \"id\" (gpuvirt) or by \"device\" (another stack), not both");
		return parse_dev(p, n);
	}
	gpu = grow(cfg->gpus, cfg->n_gpus, sizeof(*gpu));
	if (!gpu)
		return perr(p, n, "out of memory");
	cfg->gpus = gpu;
	gpu += cfg->n_gpus;
	gpu->line = node_line(n);
	/* Counted at once, so that config_free() frees its vGPUs. */
	cfg->n_gpus++;
	if (parse_map(p, n, "a GPU", gpu_fields, gpu, seen))
		return -1;
	gpu->has_vfs = seen[GPU_VFS];
	if (gpu->has_vfs && gpu->vgpu_model == CONFIG_VGPU_MODEL_MDEV)
		return perr(p, seen[GPU_VFS],
			    "\"vfs\" needs vgpu-model: sriov (the kernel refuses VFs to a GPU whose vGPUs are mdev devices)");
	for (other = cfg->gpus; other < gpu; other++)
		if (other->id == gpu->id)
			return perr(p, n, "GPU %u is listed twice (first on line %u)",
				    gpu->id, other->line);
	return check_gpu(p, gpu);
}

/* passthrough --------------------------------------------------------------- */

enum { PT_DEVICE, PT_DRIVER, PT_FORCE, PT_PERSISTENT };

static const struct field pt_fields[] = {
	[PT_DEVICE] = { "device", F_BDF, offsetof(struct config_pt, device),
			FLD_REQUIRED },
	[PT_DRIVER] = { "driver", F_ENUM, offsetof(struct config_pt, driver),
			.enums = config_pt_drivers },
	[PT_FORCE] = { "force", F_BOOL, offsetof(struct config_pt, force) },
	[PT_PERSISTENT] = { "persistent", F_BOOL,
			    offsetof(struct config_pt, persistent) },
	{ .key = NULL }
};

static int parse_pt(struct parser *p, const yaml_node_t *n, size_t index,
		    void *obj)
{
	const yaml_node_t *seen[MAX_FIELDS];
	struct config *cfg = obj;
	struct config_pt *pt, *other;

	(void)index;
	pt = grow(cfg->pts, cfg->n_pts, sizeof(*pt));
	if (!pt)
		return perr(p, n, "out of memory");
	cfg->pts = pt;
	pt += cfg->n_pts;
	pt->line = node_line(n);
	pt->column = node_col(n);
	if (parse_map(p, n, "a passthrough device", pt_fields, pt, seen))
		return -1;
	for (other = cfg->pts; other < pt; other++)
		if (!strcmp(other->device, pt->device))
			return perr(p, seen[PT_DEVICE],
				    "device %s is listed twice (first on line %u)",
				    pt->device, other->line);
	cfg->n_pts++;
	return 0;
}

/* The document -------------------------------------------------------------- */

static const struct field top_fields[] = {
	{ "simulated-gpus", F_LIST, .max_items = CONFIG_MAX_SIMS,
	  .sub = parse_sim },
	{ "gpus", F_LIST, .max_items = CONFIG_MAX_GPUS, .sub = parse_gpu },
	{ "passthrough", F_LIST, .max_items = CONFIG_MAX_PTS,
	  .sub = parse_pt },
	{ .key = NULL }
};

static int yaml_error(struct parser *p, const yaml_parser_t *yp)
{
	const yaml_mark_t *m = &yp->problem_mark;
	const char *problem = yp->problem ? yp->problem : "malformed YAML";

	if (yp->error == YAML_MEMORY_ERROR)
		return perr_at(p, 1, 1, "out of memory");
	if (yp->context)
		return perr_at(p, (unsigned int)m->line + 1,
			       (unsigned int)m->column + 1,
			       "%s %s at line %u, column %u", problem,
			       yp->context,
			       (unsigned int)yp->context_mark.line + 1,
			       (unsigned int)yp->context_mark.column + 1);
	return perr_at(p, (unsigned int)m->line + 1,
		       (unsigned int)m->column + 1, "%s", problem);
}

void config_free(struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->n_gpus; i++)
		free(cfg->gpus[i].vgpus);
	free(cfg->gpus);
	free(cfg->sims);
	free(cfg->pts);
	for (i = 0; i < cfg->n_devs; i++)
		free(cfg->devs[i].vgpus);
	free(cfg->devs);
	memset(cfg, 0, sizeof(*cfg));
}

int config_parse(const char *name, const char *text, size_t len,
		 struct config *cfg, char *err, size_t errlen)
{
	struct parser p = { .name = name, .err = err, .errlen = errlen,
			    .cfg = cfg };
	const yaml_node_t *seen[MAX_FIELDS];
	const yaml_node_t *root;
	yaml_document_t extra;
	yaml_parser_t yp;
	int ret = -1;

	memset(cfg, 0, sizeof(*cfg));
	if (errlen)
		err[0] = '\0';
	if (!yaml_parser_initialize(&yp))
		return perr_at(&p, 1, 1, "out of memory");
	yaml_parser_set_input_string(&yp, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&yp, YAML_UTF8_ENCODING);

	if (!yaml_parser_load(&yp, &p.doc)) {
		yaml_error(&p, &yp);
		goto out_parser;
	}
	root = yaml_document_get_root_node(&p.doc);
	if (!root) {
		perr_at(&p, 1, 1, "the file holds no document (write {} for an empty configuration)");
		goto out_doc;
	}
	if (check_tag(&p, root) ||
	    parse_map(&p, root, "the file", top_fields, cfg, seen))
		goto out_doc;

	/* One document: a second one would be ignored silently otherwise. */
	if (!yaml_parser_load(&yp, &extra)) {
		yaml_error(&p, &yp);
		goto out_doc;
	}
	if (yaml_document_get_root_node(&extra)) {
		perr_at(&p, (unsigned int)extra.start_mark.line + 1,
			(unsigned int)extra.start_mark.column + 1,
			"only one document is allowed");
		yaml_document_delete(&extra);
		goto out_doc;
	}
	yaml_document_delete(&extra);
	ret = 0;

out_doc:
	yaml_document_delete(&p.doc);
out_parser:
	yaml_parser_delete(&yp);
	if (ret)
		config_free(cfg);
	return ret;
}

/* Look-ups ------------------------------------------------------------------ */

const struct config_sim *config_find_sim(const struct config *cfg, uint32_t id)
{
	size_t i;

	for (i = 0; i < cfg->n_sims; i++)
		if (cfg->sims[i].id == id)
			return &cfg->sims[i];
	return NULL;
}

const struct config_gpu *config_find_gpu(const struct config *cfg, uint32_t id)
{
	size_t i;

	for (i = 0; i < cfg->n_gpus; i++)
		if (cfg->gpus[i].id == id)
			return &cfg->gpus[i];
	return NULL;
}

const struct config_vgpu *config_find_vgpu(const struct config_gpu *gpu,
					   const char *uuid)
{
	size_t i;

	for (i = 0; i < gpu->n_vgpus; i++)
		if (!strcmp(gpu->vgpus[i].uuid, uuid))
			return &gpu->vgpus[i];
	return NULL;
}

const struct config_vgpu *config_find_vf(const struct config_gpu *gpu,
					 const char *vf)
{
	size_t i;

	for (i = 0; i < gpu->n_vgpus; i++)
		if (gpu->vgpus[i].vf[0] && !strcmp(gpu->vgpus[i].vf, vf))
			return &gpu->vgpus[i];
	return NULL;
}

const char *config_vgpu_name(const struct config_vgpu *v)
{
	return v->vf[0] ? v->vf : v->uuid;
}

const struct config_pt *config_find_pt(const struct config *cfg,
				       const char *device)
{
	size_t i;

	for (i = 0; i < cfg->n_pts; i++)
		if (!strcmp(cfg->pts[i].device, device))
			return &cfg->pts[i];
	return NULL;
}

const char *config_enum_name(const struct arg_enum *names, uint32_t val)
{
	for (; names->name; names++)
		if (names->value == val)
			return names->name;
	return NULL;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Parser for /sys/bus/gpuvirt_sim/{new,del}_device.
 *
 *   new_device: "ID MODEL"                  a catalogue model
 *               "ID custom VRAM ENGINES"    VRAM with a K, M, G or T suffix
 *   del_device: "ID"
 *
 * Fields are separated by blanks; one trailing newline is allowed. On error
 * the functions return -EINVAL and point *why at a message for the log.
 * Pure logic, also built into the userspace unit tests.
 */
#include "size.h"
#include "spec.h"

struct gpuvirt_sim_cursor {
	const char *p;
	const char *end;
};

static bool gpuvirt_sim_is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Next blank-separated field; returns its length, 0 at the end. */
static size_t gpuvirt_sim_field(struct gpuvirt_sim_cursor *c, const char **f)
{
	const char *s;

	while (c->p < c->end && gpuvirt_sim_is_blank(*c->p))
		c->p++;
	s = c->p;
	while (c->p < c->end && !gpuvirt_sim_is_blank(*c->p))
		c->p++;
	*f = s;
	return c->p - s;
}

static bool gpuvirt_sim_name_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

static size_t gpuvirt_sim_trim(const char *buf, size_t len)
{
	if (len && buf[len - 1] == '\n')
		len--;
	return len;
}

int gpuvirt_sim_parse_new(const char *buf, size_t len,
			  struct gpuvirt_sim_spec *spec, const char **why)
{
	struct gpuvirt_sim_cursor c = { buf, buf + gpuvirt_sim_trim(buf, len) };
	const char *f;
	size_t n;
	u64 v;

	memset(spec, 0, sizeof(*spec));
	*why = "expected \"ID MODEL\" or \"ID custom VRAM ENGINES\"";

	n = gpuvirt_sim_field(&c, &f);
	if (gpuvirt_parse_dec(f, n, U32_MAX, &v)) {
		*why = "ID must be a decimal number from 0 to 4294967295";
		return -EINVAL;
	}
	spec->id = (u32)v;

	n = gpuvirt_sim_field(&c, &f);
	if (!n)
		return -EINVAL;
	if (n >= sizeof(spec->model)) {
		*why = "MODEL name is too long";
		return -EINVAL;
	}
	if (!gpuvirt_sim_name_ok(f, n)) {
		*why = "MODEL may only hold a-z, 0-9, '-' and '.'";
		return -EINVAL;
	}
	memcpy(spec->model, f, n);
	spec->model[n] = '\0';

	if (!strcmp(spec->model, GPUVIRT_MODEL_CUSTOM)) {
		n = gpuvirt_sim_field(&c, &f);
		if (gpuvirt_parse_size(f, n, &spec->vram_size) ||
		    spec->vram_size < GPUVIRT_CUSTOM_VRAM_MIN ||
		    spec->vram_size > GPUVIRT_CUSTOM_VRAM_MAX) {
			*why = "custom VRAM must be a size from 1G to 1T";
			return -EINVAL;
		}
		n = gpuvirt_sim_field(&c, &f);
		if (gpuvirt_parse_dec(f, n, GPUVIRT_ENGINES_MAX, &v) || !v) {
			*why = "custom ENGINES must be a number from 1 to 64";
			return -EINVAL;
		}
		spec->engines = (u32)v;
	}

	n = gpuvirt_sim_field(&c, &f);
	if (n) {
		*why = "unexpected text after the last field";
		return -EINVAL;
	}
	*why = NULL;
	return 0;
}

int gpuvirt_sim_parse_del(const char *buf, size_t len, u32 *id,
			  const char **why)
{
	struct gpuvirt_sim_cursor c = { buf, buf + gpuvirt_sim_trim(buf, len) };
	const char *f;
	size_t n;
	u64 v;

	n = gpuvirt_sim_field(&c, &f);
	if (gpuvirt_parse_dec(f, n, U32_MAX, &v)) {
		*why = "expected \"ID\", a decimal number from 0 to 4294967295";
		return -EINVAL;
	}
	n = gpuvirt_sim_field(&c, &f);
	if (n) {
		*why = "unexpected text after ID";
		return -EINVAL;
	}
	*id = (u32)v;
	*why = NULL;
	return 0;
}

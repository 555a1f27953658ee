// SPDX-License-Identifier: GPL-2.0-only
/*
 * Time-sliced vGPU type tables; see profiles.h for how they are derived.
 *
 * Pure logic: built into gpuvirt.ko and into the userspace unit tests, so
 * the strings are put together by hand rather than with snprintf().
 */
#include "profiles.h"

/*
 * Display parameters of each series, the values NVIDIA's descriptions show:
 *  Q (workstation): 4 heads, frame rate limiter 60 fps, up to 7680x4320;
 *  B (desktop):     4 heads, 45 fps, up to 5120x2880;
 *  A (applications): 1 head, 60 fps, 1280x1024 (a published app session);
 *  C (compute):     1 head, 60 fps, 4096x2160 (console only).
 */
struct gpuvirt_profile_display {
	char letter;
	u32 heads;
	u32 frl;
	u32 width;
	u32 height;
};

static const struct gpuvirt_profile_display gpuvirt_profile_displays[] = {
	[GPUVIRT_SERIES_Q] = { 'Q', 4, 60, 7680, 4320 },
	[GPUVIRT_SERIES_B] = { 'B', 4, 45, 5120, 2880 },
	[GPUVIRT_SERIES_A] = { 'A', 1, 60, 1280, 1024 },
	[GPUVIRT_SERIES_C] = { 'C', 1, 60, 4096, 2160 },
};

/* One C-series size: framebuffer in GB and homogeneous max instances. */
struct gpuvirt_profile_size {
	u32 gb;
	u32 max;
};

struct gpuvirt_profile_model {
	const char *model;
	const struct gpuvirt_profile_size *sizes;
	unsigned int count;
};

static const struct gpuvirt_profile_size gpuvirt_profile_a100_40[] = {
	{ 40, 1 }, { 20, 2 }, { 10, 4 }, { 8, 5 }, { 5, 8 }, { 4, 10 },
};

static const struct gpuvirt_profile_size gpuvirt_profile_80gb[] = {
	{ 80, 1 }, { 40, 2 }, { 20, 4 }, { 16, 5 }, { 10, 8 }, { 8, 10 },
	{ 4, 20 },
};

static const struct gpuvirt_profile_size gpuvirt_profile_h200[] = {
	{ 141, 1 }, { 70, 2 }, { 35, 4 }, { 28, 5 }, { 17, 8 }, { 14, 10 },
	{ 8, 16 }, { 7, 20 }, { 4, 32 },
};

static const struct gpuvirt_profile_model gpuvirt_profile_models[] = {
	{ "a100-40gb", gpuvirt_profile_a100_40,
	  ARRAY_SIZE(gpuvirt_profile_a100_40) },
	{ "a100-80gb", gpuvirt_profile_80gb, ARRAY_SIZE(gpuvirt_profile_80gb) },
	{ "h100-80gb", gpuvirt_profile_80gb, ARRAY_SIZE(gpuvirt_profile_80gb) },
	{ "h200-141gb", gpuvirt_profile_h200, ARRAY_SIZE(gpuvirt_profile_h200) },
};

/* A series: sizes up to this many GB. */
#define GPUVIRT_PROFILE_A_MAX_GB	8

/* A bounded string being built; @left counts the room for the NUL. */
struct gpuvirt_profile_buf {
	char *p;
	size_t left;
};

static void gpuvirt_profile_putc(struct gpuvirt_profile_buf *b, char c)
{
	if (b->left > 1) {
		*b->p++ = c;
		b->left--;
	}
	*b->p = '\0';
}

static void gpuvirt_profile_puts(struct gpuvirt_profile_buf *b, const char *s)
{
	while (*s)
		gpuvirt_profile_putc(b, *s++);
}

static void gpuvirt_profile_putu(struct gpuvirt_profile_buf *b, u64 v)
{
	char digits[21];
	int n = 0;

	do {
		digits[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (n)
		gpuvirt_profile_putc(b, digits[--n]);
}

static u32 gpuvirt_profile_pow2_floor(u32 v)
{
	u32 p = 1;

	while (p <= v / 2)
		p *= 2;
	return p;
}

/* Fill @p; @fb_size is a whole number of GB, or 512 MiB. */
static void gpuvirt_profile_fill(struct gpuvirt_profile *p, const char *prefix,
				 enum gpuvirt_series series, u64 fb_size,
				 u32 max)
{
	const struct gpuvirt_profile_display *d =
		&gpuvirt_profile_displays[series];
	struct gpuvirt_profile_buf b;

	memset(p, 0, sizeof(*p));
	p->series = series;
	p->fb_size = fb_size;
	p->max_instances = max;
	p->mixed_max_instances = gpuvirt_profile_pow2_floor(max);
	p->heads = d->heads;
	p->frl = d->frl;
	p->max_width = d->width;
	p->max_height = d->height;

	b.p = p->name;
	b.left = sizeof(p->name);
	gpuvirt_profile_puts(&b, prefix);
	gpuvirt_profile_putc(&b, '-');
	gpuvirt_profile_putu(&b, fb_size / SZ_1G);	/* 512 MiB is "0" */
	gpuvirt_profile_putc(&b, d->letter);

	b.p = p->description;
	b.left = sizeof(p->description);
	gpuvirt_profile_puts(&b, "num_heads=");
	gpuvirt_profile_putu(&b, d->heads);
	gpuvirt_profile_puts(&b, ", frl_config=");
	gpuvirt_profile_putu(&b, d->frl);
	gpuvirt_profile_puts(&b, ", framebuffer=");
	gpuvirt_profile_putu(&b, fb_size / SZ_1M);
	gpuvirt_profile_puts(&b, "M, max_resolution=");
	gpuvirt_profile_putu(&b, d->width);
	gpuvirt_profile_putc(&b, 'x');
	gpuvirt_profile_putu(&b, d->height);
	gpuvirt_profile_puts(&b, ", max_instance=");
	gpuvirt_profile_putu(&b, max);
	gpuvirt_profile_puts(&b, ", series=");
	gpuvirt_profile_putc(&b, d->letter);
}

/**
 * gpuvirt_profile_fill_mig() - the profile of a MIG-backed vGPU type
 * @p: filled in
 * @name: the type's name, e.g. "H200-3-71C" (struct gpuvirt_mig_profile)
 * @fb_size: the VRAM of one GPU instance of the profile
 *
 * A MIG-backed vGPU takes a whole GPU instance, so each instance holds
 * one: the profile allows one instance on its parent, the GI.
 */
void gpuvirt_profile_fill_mig(struct gpuvirt_profile *p, const char *name,
			      u64 fb_size)
{
	struct gpuvirt_profile_buf b;

	gpuvirt_profile_fill(p, "", GPUVIRT_SERIES_C, fb_size, 1);
	memset(p->name, 0, sizeof(p->name));
	b.p = p->name;
	b.left = sizeof(p->name);
	gpuvirt_profile_puts(&b, name);
}

/* Append one profile to the output; -ENOSPC when @max is reached. */
static int gpuvirt_profile_add(struct gpuvirt_profile *out, unsigned int max,
			       unsigned int *n, const char *prefix,
			       enum gpuvirt_series series, u64 fb_size,
			       u32 instances)
{
	if (*n >= max)
		return -ENOSPC;
	gpuvirt_profile_fill(&out[(*n)++], prefix, series, fb_size, instances);
	return 0;
}

static int gpuvirt_profile_from_table(const struct gpuvirt_profile_model *t,
				      const char *prefix, u64 vram_size,
				      struct gpuvirt_profile *out,
				      unsigned int max)
{
	static const enum gpuvirt_series order[] = {
		GPUVIRT_SERIES_C, GPUVIRT_SERIES_Q, GPUVIRT_SERIES_A,
	};
	static const u32 b_gb[] = { 2, 1 };
	unsigned int n = 0, s, i;
	int ret;

	for (s = 0; s < ARRAY_SIZE(order); s++) {
		for (i = 0; i < t->count; i++) {
			const struct gpuvirt_profile_size *sz = &t->sizes[i];

			if (order[s] == GPUVIRT_SERIES_A &&
			    sz->gb > GPUVIRT_PROFILE_A_MAX_GB)
				continue;
			ret = gpuvirt_profile_add(out, max, &n, prefix, order[s],
						  (u64)sz->gb * SZ_1G, sz->max);
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < ARRAY_SIZE(b_gb); i++) {
		u64 fb = (u64)b_gb[i] * SZ_1G;
		u64 fit = vram_size / fb;

		if (!fit)
			continue;
		ret = gpuvirt_profile_add(out, max, &n, prefix, GPUVIRT_SERIES_B,
					  fb, fit < GPUVIRT_PROFILE_INSTANCES_MAX ?
					  (u32)fit : GPUVIRT_PROFILE_INSTANCES_MAX);
		if (ret)
			return ret;
	}
	return n;
}

static int gpuvirt_profile_generate(const char *prefix, u64 vram_size,
				    struct gpuvirt_profile *out,
				    unsigned int max)
{
	static const enum gpuvirt_series order[] = {
		GPUVIRT_SERIES_C, GPUVIRT_SERIES_Q,
	};
	u64 gb = vram_size / SZ_1G;
	unsigned int n = 0, s;
	u32 den;
	int ret;

	for (s = 0; s < ARRAY_SIZE(order); s++) {
		for (den = 1; den <= GPUVIRT_PROFILE_INSTANCES_MAX &&
		     gb / den >= 1; den *= 2) {
			ret = gpuvirt_profile_add(out, max, &n, prefix, order[s],
						  gb / den * SZ_1G, den);
			if (ret)
				return ret;
		}
	}
	return n;
}

/**
 * gpuvirt_profiles_build() - the time-sliced vGPU types of a GPU
 * @model: catalogue model, or NULL for a custom GPU
 * @vram_size: the GPU's framebuffer in bytes; only used for a custom GPU
 *	(a catalogue model's own size is used otherwise)
 * @out: array that receives the profiles, C series first, then Q, A and B,
 *	largest framebuffer first within a series
 * @max: room in @out; GPUVIRT_PROFILES_MAX is always enough
 *
 * A catalogue model without a table of its own gets the generated profiles
 * of a custom GPU of its size, named with its own prefix.
 *
 * Return: the number of profiles written (0 for a custom GPU under 1 GB),
 * or -ENOSPC if @max is too small.
 */
int gpuvirt_profiles_build(const struct gpuvirt_model *model, u64 vram_size,
			   struct gpuvirt_profile *out, unsigned int max)
{
	unsigned int i;

	if (!model)
		return gpuvirt_profile_generate(GPUVIRT_PROFILE_CUSTOM_PREFIX,
						vram_size, out, max);
	for (i = 0; i < ARRAY_SIZE(gpuvirt_profile_models); i++)
		if (!strcmp(gpuvirt_profile_models[i].model, model->name))
			return gpuvirt_profile_from_table(&gpuvirt_profile_models[i],
							  model->profile_prefix,
							  model->vram_size,
							  out, max);
	return gpuvirt_profile_generate(model->profile_prefix, model->vram_size,
					out, max);
}

/**
 * gpuvirt_profile_find() - look a profile up by name
 * @table: profiles, as filled by gpuvirt_profiles_build()
 * @count: number of profiles in @table
 * @name: type name, matched exactly (case-sensitive), e.g. "H200-35C"
 *
 * Return: the profile, or NULL if @table has no such name.
 */
const struct gpuvirt_profile *
gpuvirt_profile_find(const struct gpuvirt_profile *table, unsigned int count,
		     const char *name)
{
	unsigned int i;

	for (i = 0; i < count; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

/**
 * gpuvirt_profile_series_letter() - the letter of a series
 * @series: the series
 *
 * Return: 'Q', 'B', 'A' or 'C'; '?' for a value out of range.
 */
char gpuvirt_profile_series_letter(enum gpuvirt_series series)
{
	if ((unsigned int)series >= ARRAY_SIZE(gpuvirt_profile_displays))
		return '?';
	return gpuvirt_profile_displays[series].letter;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * MIG GI profiles, placement and the partition planner; the rules are in
 * mig.h, and Documentation/mig.rst says the same for admins.
 *
 * Pure logic: built into gpuvirt.ko and into the userspace unit tests, so
 * the messages are put together by hand rather than with snprintf().
 */
#include "mig.h"
#include "profiles.h"

/* A profile's shape; see the table in mig.h. */
struct gpuvirt_mig_shape {
	u8 slices;
	u8 slots;
	u8 max;
	u8 starts;
	bool media;
};

static const struct gpuvirt_mig_shape gpuvirt_mig_shapes[GPUVIRT_MIG_PROFILES] = {
	{ 1, 1, 7, 0x7f, false },	/* 1g:       {0,1,2,3,4,5,6}:1 */
	{ 1, 1, 1, 0x7f, true },	/* 1g+me:    {0..6}:1 */
	{ 1, 2, 4, 0x55, false },	/* 1g, wide: {0,2,4,6}:2 */
	{ 2, 2, 3, 0x15, false },	/* 2g:       {0,2,4}:2 */
	{ 3, 4, 2, 0x11, false },	/* 3g:       {0,4}:4 */
	{ 4, 4, 1, 0x01, false },	/* 4g:       {0}:4 */
	{ 7, 8, 1, 0x01, false },	/* 7g:       {0}:8 */
};

/* NVIDIA's profile names, in the order of gpuvirt_mig_shapes. */
struct gpuvirt_mig_names {
	const char *model;
	const char *name[GPUVIRT_MIG_PROFILES];
};

static const struct gpuvirt_mig_names gpuvirt_mig_models[] = {
	{ "a100-40gb", { "1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb",
			 "3g.20gb", "4g.20gb", "7g.40gb" } },
	{ "a100-80gb", { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb",
			 "3g.40gb", "4g.40gb", "7g.80gb" } },
	{ "h100-80gb", { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb",
			 "3g.40gb", "4g.40gb", "7g.80gb" } },
	{ "h200-141gb", { "1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb",
			  "3g.71gb", "4g.71gb", "7g.141gb" } },
};

/* A bounded string being built; @left counts the room for the NUL. */
struct gpuvirt_mig_buf {
	char *p;
	size_t left;
};

static void gpuvirt_mig_buf_init(struct gpuvirt_mig_buf *b, char *s,
				 size_t size)
{
	b->p = s;
	b->left = size;
	*s = '\0';
}

static void gpuvirt_mig_putc(struct gpuvirt_mig_buf *b, char c)
{
	if (b->left > 1) {
		*b->p++ = c;
		b->left--;
	}
	*b->p = '\0';
}

static void gpuvirt_mig_puts(struct gpuvirt_mig_buf *b, const char *s)
{
	while (*s)
		gpuvirt_mig_putc(b, *s++);
}

static void gpuvirt_mig_putu(struct gpuvirt_mig_buf *b, u64 v)
{
	char digits[21];
	int n = 0;

	do {
		digits[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (n)
		gpuvirt_mig_putc(b, digits[--n]);
}

/* "0-6", "0,2,4,6": the set bits of @mask, runs of two or more as a-b. */
static void gpuvirt_mig_put_mask(struct gpuvirt_mig_buf *b, unsigned int mask)
{
	bool first = true;
	unsigned int i = 0, j;

	while (i < 32) {
		if (!(mask & (1U << i))) {
			i++;
			continue;
		}
		j = i;
		while (j + 1 < 32 && (mask & (1U << (j + 1))))
			j++;
		if (!first)
			gpuvirt_mig_putc(b, ',');
		first = false;
		gpuvirt_mig_putu(b, i);
		if (j > i) {
			gpuvirt_mig_putc(b, '-');
			gpuvirt_mig_putu(b, j);
		}
		i = j + 1;
	}
}

static unsigned int gpuvirt_mig_weight(unsigned int mask)
{
	unsigned int n = 0;

	for (; mask; mask &= mask - 1)
		n++;
	return n;
}

static unsigned int gpuvirt_mig_lowest(unsigned int mask)
{
	unsigned int i = 0;

	while (!(mask & (1U << i)))
		i++;
	return i;
}

static unsigned int gpuvirt_mig_highest(unsigned int mask)
{
	unsigned int i = 31;

	while (!(mask & (1U << i)))
		i--;
	return i;
}

/* Memory slots and compute slices of profile @p placed at @start. */
static u8 gpuvirt_mig_slot_mask(const struct gpuvirt_mig_profile *p,
				unsigned int start)
{
	return (u8)(((1U << p->slots) - 1) << start);
}

static u8 gpuvirt_mig_slice_mask(const struct gpuvirt_mig_profile *p,
				 unsigned int start)
{
	return (u8)(((1U << p->slices) - 1) << start);
}

/* Everything the GIs of @l in the id mask @among take. */
static void gpuvirt_mig_taken(const struct gpuvirt_mig_table *t,
			      const struct gpuvirt_mig_layout *l,
			      unsigned int among, u8 *slots, u8 *slices)
{
	unsigned int i;

	*slots = 0;
	*slices = 0;
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct gpuvirt_mig_gi *gi = &l->gi[i];

		if (!gi->used || !(among & (1U << i)))
			continue;
		*slots |= gpuvirt_mig_slot_mask(&t->profile[gi->profile],
						gi->start);
		*slices |= gpuvirt_mig_slice_mask(&t->profile[gi->profile],
						  gi->start);
	}
}

/* Start a refusal: fill in @why and return the buffer for its message. */
static struct gpuvirt_mig_buf gpuvirt_mig_refuse(struct gpuvirt_mig_why *why,
						 enum gpuvirt_mig_reason reason,
						 int gi, int profile)
{
	struct gpuvirt_mig_buf b;

	why->reason = reason;
	why->gi = gi;
	why->profile = profile;
	gpuvirt_mig_buf_init(&b, why->msg, sizeof(why->msg));
	return b;
}

static void gpuvirt_mig_why_clear(struct gpuvirt_mig_why *why)
{
	gpuvirt_mig_refuse(why, GPUVIRT_MIG_OK, -1, -1);
}

/* "GI 2 (3g.71gb)" */
static void gpuvirt_mig_put_gi(struct gpuvirt_mig_buf *b,
			       const struct gpuvirt_mig_table *t,
			       const struct gpuvirt_mig_layout *l,
			       unsigned int gi)
{
	gpuvirt_mig_puts(b, "GI ");
	gpuvirt_mig_putu(b, gi);
	gpuvirt_mig_puts(b, " (");
	gpuvirt_mig_puts(b, t->profile[l->gi[gi].profile].name);
	gpuvirt_mig_putc(b, ')');
}

/*
 * The GI of @l (among the id mask @among) in the way of profile @p at
 * @start: the one holding the lowest memory slot wanted, or failing that
 * the lowest compute slice. Return its id and whether the clash is on the
 * memory axis, or -1 when nothing is in the way.
 */
static int gpuvirt_mig_blocker(const struct gpuvirt_mig_table *t,
			       const struct gpuvirt_mig_layout *l,
			       unsigned int among,
			       const struct gpuvirt_mig_profile *p,
			       unsigned int start, bool *memory)
{
	u8 want[2] = {
		gpuvirt_mig_slot_mask(p, start),
		gpuvirt_mig_slice_mask(p, start),
	};
	unsigned int axis, i, lo;
	int best;

	for (axis = 0; axis < 2; axis++) {
		best = -1;
		lo = 32;
		for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
			const struct gpuvirt_mig_gi *gi = &l->gi[i];
			const struct gpuvirt_mig_profile *q;
			u8 has;

			if (!gi->used || !(among & (1U << i)))
				continue;
			q = &t->profile[gi->profile];
			has = axis ? gpuvirt_mig_slice_mask(q, gi->start) :
				     gpuvirt_mig_slot_mask(q, gi->start);
			if ((has & want[axis]) &&
			    gpuvirt_mig_lowest(has & want[axis]) < lo) {
				lo = gpuvirt_mig_lowest(has & want[axis]);
				best = i;
			}
		}
		if (best >= 0) {
			*memory = !axis;
			return best;
		}
	}
	return -1;
}

/* "memory slots 4-7 are taken by GI 2 (3g.71gb)" for gpuvirt_mig_blocker() */
static void gpuvirt_mig_put_blocker(struct gpuvirt_mig_buf *b,
				    const struct gpuvirt_mig_table *t,
				    const struct gpuvirt_mig_layout *l,
				    unsigned int gi,
				    const struct gpuvirt_mig_profile *p,
				    unsigned int start, bool memory)
{
	const struct gpuvirt_mig_profile *q = &t->profile[l->gi[gi].profile];
	unsigned int s = l->gi[gi].start;
	unsigned int clash, lo, hi;

	if (memory)
		clash = gpuvirt_mig_slot_mask(q, s) &
			gpuvirt_mig_slot_mask(p, start);
	else
		clash = gpuvirt_mig_slice_mask(q, s) &
			gpuvirt_mig_slice_mask(p, start);
	lo = gpuvirt_mig_lowest(clash);
	hi = gpuvirt_mig_highest(clash);
	gpuvirt_mig_puts(b, memory ? "memory slot" : "compute slice");
	if (hi > lo) {
		gpuvirt_mig_puts(b, "s ");
		gpuvirt_mig_putu(b, lo);
		gpuvirt_mig_putc(b, '-');
		gpuvirt_mig_putu(b, hi);
		gpuvirt_mig_puts(b, " are");
	} else {
		gpuvirt_mig_putc(b, ' ');
		gpuvirt_mig_putu(b, lo);
		gpuvirt_mig_puts(b, " is");
	}
	gpuvirt_mig_puts(b, " taken by ");
	gpuvirt_mig_put_gi(b, t, l, gi);
}

/* The GB figure of a profile name: the digits after the dot. */
static u32 gpuvirt_mig_name_gb(const char *name)
{
	u32 gb = 0;

	while (*name && *name != '.')
		name++;
	if (*name)
		name++;
	while (*name >= '0' && *name <= '9')
		gb = gb * 10 + (*name++ - '0');
	return gb;
}

static void gpuvirt_mig_fill(struct gpuvirt_mig_profile *p,
			     const struct gpuvirt_mig_shape *sh,
			     const char *name, const char *prefix,
			     u64 vram_size, u64 slot_size)
{
	struct gpuvirt_mig_buf b;

	p->slices = sh->slices;
	p->slots = sh->slots;
	p->max = sh->max;
	p->starts = sh->starts;
	p->media = sh->media;
	p->mem_size = sh->slots * slot_size;

	gpuvirt_mig_buf_init(&b, p->name, sizeof(p->name));
	if (name) {
		gpuvirt_mig_puts(&b, name);
		p->gb = gpuvirt_mig_name_gb(name);
	} else {
		/* slots x VRAM / 8 in GiB, to the nearest, halves up */
		p->gb = (u32)((sh->slots * vram_size + 4 * (u64)SZ_1G) >> 33);
		gpuvirt_mig_putu(&b, sh->slices);
		gpuvirt_mig_puts(&b, "g.");
		gpuvirt_mig_putu(&b, p->gb);
		gpuvirt_mig_puts(&b, "gb");
		if (sh->media)
			gpuvirt_mig_puts(&b, "+me");
	}

	gpuvirt_mig_buf_init(&b, p->vgpu_name, sizeof(p->vgpu_name));
	gpuvirt_mig_puts(&b, prefix);
	gpuvirt_mig_putc(&b, '-');
	gpuvirt_mig_putu(&b, sh->slices);
	gpuvirt_mig_putc(&b, '-');
	gpuvirt_mig_putu(&b, p->gb);
	gpuvirt_mig_puts(&b, sh->media ? "CME" : "C");
}

/**
 * gpuvirt_mig_table_build() - the GI profiles of a GPU
 * @model: catalogue model, or NULL for a custom GPU
 * @vram_size: a custom GPU's VRAM in bytes (unused for a catalogue model)
 * @engines: a custom GPU's engine count (unused for a catalogue model)
 * @t: filled in with the profiles, in the order of the table in mig.h
 *
 * Return: 0; -EOPNOTSUPP for a model that is not MIG-capable, or a GPU
 * without a table of its own that has less than GPUVIRT_MIG_VRAM_MIN of
 * VRAM or fewer than GPUVIRT_MIG_SLICES engines (@t then has no profiles);
 * -EINVAL for VRAM above GPUVIRT_CUSTOM_VRAM_MAX.
 */
int gpuvirt_mig_table_build(const struct gpuvirt_model *model, u64 vram_size,
			    u32 engines, struct gpuvirt_mig_table *t)
{
	const struct gpuvirt_mig_names *names = NULL;
	const char *prefix = GPUVIRT_PROFILE_CUSTOM_PREFIX;
	unsigned int i;

	memset(t, 0, sizeof(*t));
	if (model) {
		if (!model->mig_capable)
			return -EOPNOTSUPP;
		vram_size = model->vram_size;
		engines = model->engines;
		prefix = model->profile_prefix;
		for (i = 0; i < ARRAY_SIZE(gpuvirt_mig_models); i++)
			if (!strcmp(gpuvirt_mig_models[i].model, model->name))
				names = &gpuvirt_mig_models[i];
	}
	if (vram_size > GPUVIRT_CUSTOM_VRAM_MAX)
		return -EINVAL;
	if (!names && (vram_size < GPUVIRT_MIG_VRAM_MIN ||
		       engines < GPUVIRT_MIG_SLICES))
		return -EOPNOTSUPP;

	t->slot_size = (vram_size / GPUVIRT_MIG_SLOTS) & ~((u64)SZ_1M - 1);
	for (i = 0; i < GPUVIRT_MIG_PROFILES; i++)
		gpuvirt_mig_fill(&t->profile[i], &gpuvirt_mig_shapes[i],
				 names ? names->name[i] : NULL, prefix,
				 vram_size, t->slot_size);
	t->count = GPUVIRT_MIG_PROFILES;
	return 0;
}

/**
 * gpuvirt_mig_table_find() - the GI profiles of a catalogue model
 * @model_name: catalogue model name, e.g. "h200-141gb"
 * @t: filled in as by gpuvirt_mig_table_build()
 *
 * Return: 0, -ENOENT for a name not in the catalogue, or -EOPNOTSUPP for
 * a model that is not MIG-capable.
 */
int gpuvirt_mig_table_find(const char *model_name, struct gpuvirt_mig_table *t)
{
	const struct gpuvirt_model *m = gpuvirt_catalogue_find(model_name);

	if (!m) {
		memset(t, 0, sizeof(*t));
		return -ENOENT;
	}
	return gpuvirt_mig_table_build(m, 0, 0, t);
}

/**
 * gpuvirt_mig_profile_find() - a GI profile by name
 * @t: the GPU's profiles
 * @name: profile name, matched exactly, e.g. "3g.71gb"
 *
 * Return: the profile's index in @t, or -ENOENT.
 */
int gpuvirt_mig_profile_find(const struct gpuvirt_mig_table *t,
			     const char *name)
{
	unsigned int i;

	for (i = 0; i < t->count; i++)
		if (!strcmp(t->profile[i].name, name))
			return i;
	return -ENOENT;
}

/**
 * gpuvirt_mig_vgpu_find() - the GI profile of a MIG-backed vGPU type
 * @t: the GPU's profiles
 * @vgpu_name: type name, matched exactly, e.g. "H200-3-71C"
 *
 * Return: the profile's index in @t, or -ENOENT.
 */
int gpuvirt_mig_vgpu_find(const struct gpuvirt_mig_table *t,
			  const char *vgpu_name)
{
	unsigned int i;

	for (i = 0; i < t->count; i++)
		if (!strcmp(t->profile[i].vgpu_name, vgpu_name))
			return i;
	return -ENOENT;
}

/**
 * gpuvirt_mig_layout_init() - an empty layout: no GIs
 * @l: the layout
 */
void gpuvirt_mig_layout_init(struct gpuvirt_mig_layout *l)
{
	memset(l, 0, sizeof(*l));
}

static unsigned int gpuvirt_mig_count(const struct gpuvirt_mig_layout *l,
				      unsigned int profile)
{
	unsigned int i, n = 0;

	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++)
		n += l->gi[i].used && l->gi[i].profile == profile;
	return n;
}

/* Refuse @p at @start if a GI of @l is in the way; 0 if it is free. */
static int gpuvirt_mig_clash(const struct gpuvirt_mig_table *t,
			     const struct gpuvirt_mig_layout *l,
			     const struct gpuvirt_mig_profile *p,
			     unsigned int start, struct gpuvirt_mig_why *why)
{
	struct gpuvirt_mig_buf b;
	bool memory;
	int gi;

	gi = gpuvirt_mig_blocker(t, l, ~0U, p, start, &memory);
	if (gi < 0)
		return 0;
	b = gpuvirt_mig_refuse(why, memory ? GPUVIRT_MIG_ERR_MEMORY :
			       GPUVIRT_MIG_ERR_COMPUTE, gi, p - t->profile);
	gpuvirt_mig_put_blocker(&b, t, l, gi, p, start, memory);
	return -ENOSPC;
}

/**
 * gpuvirt_mig_gi_check() - may a GI be added to a layout, and where
 * @t: the GPU's profiles
 * @l: its current GIs
 * @profile: index in @t
 * @start: first memory slot, or any negative value (GPUVIRT_MIG_START_ANY)
 *	for the lowest legal start that is free
 * @why: filled in with the reason when refused; may be NULL
 *
 * The checks, in this order: the profile exists and @start is one of its
 * legal starts (-EINVAL); the GPU holds fewer than 7 GIs, fewer than the
 * profile's max count of it, and the placement is free on both axes
 * (-ENOSPC).
 *
 * Return: the start the GI would take, or a negative errno.
 */
int gpuvirt_mig_gi_check(const struct gpuvirt_mig_table *t,
			 const struct gpuvirt_mig_layout *l,
			 unsigned int profile, int start,
			 struct gpuvirt_mig_why *why)
{
	const struct gpuvirt_mig_profile *p;
	struct gpuvirt_mig_why local;
	struct gpuvirt_mig_buf b;
	unsigned int s;
	bool memory;
	int gi;

	if (!why)
		why = &local;
	gpuvirt_mig_why_clear(why);
	if (profile >= t->count) {
		b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_PROFILE, -1, -1);
		gpuvirt_mig_puts(&b, "no profile ");
		gpuvirt_mig_putu(&b, profile);
		gpuvirt_mig_puts(&b, " (the GPU has ");
		gpuvirt_mig_putu(&b, t->count);
		gpuvirt_mig_putc(&b, ')');
		return -EINVAL;
	}
	p = &t->profile[profile];
	if (start >= 0 &&
	    (start >= GPUVIRT_MIG_SLOTS || !(p->starts & (1U << start)))) {
		b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_START, -1, profile);
		gpuvirt_mig_puts(&b, p->name);
		gpuvirt_mig_puts(&b, " cannot start at memory slot ");
		gpuvirt_mig_putu(&b, start);
		gpuvirt_mig_puts(&b, " (starts ");
		gpuvirt_mig_put_mask(&b, p->starts);
		gpuvirt_mig_putc(&b, ')');
		return -EINVAL;
	}
	if (l->nr >= GPUVIRT_MIG_GIS_MAX) {
		b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_GIS, -1, profile);
		gpuvirt_mig_puts(&b, "at most ");
		gpuvirt_mig_putu(&b, GPUVIRT_MIG_GIS_MAX);
		gpuvirt_mig_puts(&b, " GIs");
		return -ENOSPC;
	}
	if (gpuvirt_mig_count(l, profile) >= p->max) {
		b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_MAX, -1, profile);
		gpuvirt_mig_puts(&b, "at most ");
		gpuvirt_mig_putu(&b, p->max);
		gpuvirt_mig_puts(&b, " of ");
		gpuvirt_mig_puts(&b, p->name);
		return -ENOSPC;
	}
	if (start >= 0) {
		if (gpuvirt_mig_clash(t, l, p, start, why))
			return -ENOSPC;
		return start;
	}

	for (s = 0; s < GPUVIRT_MIG_SLOTS; s++)
		if ((p->starts & (1U << s)) &&
		    gpuvirt_mig_blocker(t, l, ~0U, p, s, &memory) < 0)
			return s;
	/* every legal start is blocked: name what blocks the lowest */
	s = gpuvirt_mig_lowest(p->starts);
	gi = gpuvirt_mig_blocker(t, l, ~0U, p, s, &memory);
	b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_NO_START, gi, profile);
	gpuvirt_mig_puts(&b, "no free start for ");
	gpuvirt_mig_puts(&b, p->name);
	gpuvirt_mig_puts(&b, " (");
	gpuvirt_mig_put_mask(&b, p->starts);
	gpuvirt_mig_puts(&b, "): ");
	gpuvirt_mig_put_blocker(&b, t, l, gi, p, s, memory);
	return -ENOSPC;
}

/**
 * gpuvirt_mig_gi_add() - add a GI to a layout
 * @t: the GPU's profiles
 * @l: its GIs; changed only on success
 * @profile: index in @t
 * @start: first memory slot, or GPUVIRT_MIG_START_ANY
 * @why: filled in with the reason when refused; may be NULL
 *
 * Checks as gpuvirt_mig_gi_check() does.
 *
 * Return: the new GI's id (the lowest free one), or a negative errno.
 */
int gpuvirt_mig_gi_add(const struct gpuvirt_mig_table *t,
		       struct gpuvirt_mig_layout *l, unsigned int profile,
		       int start, struct gpuvirt_mig_why *why)
{
	unsigned int i;
	int s;

	s = gpuvirt_mig_gi_check(t, l, profile, start, why);
	if (s < 0)
		return s;
	i = 0;
	while (i < GPUVIRT_MIG_GIS_MAX && l->gi[i].used)
		i++;
	if (i == GPUVIRT_MIG_GIS_MAX)
		return -ENOSPC;		/* @l->nr is wrong; not reached */
	l->gi[i].used = true;
	l->gi[i].profile = profile;
	l->gi[i].start = s;
	l->nr++;
	return i;
}

/**
 * gpuvirt_mig_gi_remove() - remove a GI from a layout
 * @l: the GIs
 * @gi: id of the GI
 *
 * Return: 0, or -ENOENT when @l has no GI @gi.
 */
int gpuvirt_mig_gi_remove(struct gpuvirt_mig_layout *l, unsigned int gi)
{
	if (gi >= GPUVIRT_MIG_GIS_MAX || !l->gi[gi].used)
		return -ENOENT;
	memset(&l->gi[gi], 0, sizeof(l->gi[gi]));
	l->nr--;
	return 0;
}

/*
 * The placement search: the profiles of the GIs to place, largest first,
 * and the start found for each.
 */
struct gpuvirt_mig_search {
	const struct gpuvirt_mig_table *t;
	unsigned int n;
	u8 profile[GPUVIRT_MIG_GIS_MAX];
	u8 start[GPUVIRT_MIG_GIS_MAX];
};

/* Profile indexes, largest first: most slots, most slices, table order. */
static void gpuvirt_mig_canonical(const struct gpuvirt_mig_table *t, u8 *order)
{
	unsigned int i, j;

	for (i = 0; i < t->count; i++) {
		const struct gpuvirt_mig_profile *p = &t->profile[i];

		for (j = i; j > 0; j--) {
			const struct gpuvirt_mig_profile *q =
				&t->profile[order[j - 1]];

			if (q->slots > p->slots ||
			    (q->slots == p->slots && q->slices >= p->slices))
				break;
			order[j] = order[j - 1];
		}
		order[j] = i;
	}
}

/*
 * Fill @s with @count[p] GIs of each profile p, largest first; the counts
 * have been checked to add up to at most GPUVIRT_MIG_GIS_MAX.
 */
static void gpuvirt_mig_search_init(struct gpuvirt_mig_search *s,
				    const struct gpuvirt_mig_table *t,
				    const unsigned int *count)
{
	u8 order[GPUVIRT_MIG_PROFILES];
	unsigned int i, k;

	gpuvirt_mig_canonical(t, order);
	s->t = t;
	s->n = 0;
	for (i = 0; i < t->count; i++)
		for (k = 0; k < count[order[i]] && s->n < GPUVIRT_MIG_GIS_MAX;
		     k++)
			s->profile[s->n++] = order[i];
}

/*
 * Place GIs @k.. of @s around what is taken, each at its lowest start that
 * lets the rest fit. GIs of one profile take increasing starts, which
 * skips the orders of equal GIs that would give the same layout.
 */
static bool gpuvirt_mig_place(struct gpuvirt_mig_search *s, unsigned int k,
			      u8 slots, u8 slices)
{
	const struct gpuvirt_mig_profile *p;
	unsigned int start = 0;

	if (k == s->n)
		return true;
	p = &s->t->profile[s->profile[k]];
	if (k && s->profile[k - 1] == s->profile[k])
		start = s->start[k - 1] + 1;
	for (; start < GPUVIRT_MIG_SLOTS; start++) {
		u8 ms, cs;

		if (!(p->starts & (1U << start)))
			continue;
		ms = gpuvirt_mig_slot_mask(p, start);
		cs = gpuvirt_mig_slice_mask(p, start);
		if ((ms & slots) || (cs & slices))
			continue;
		s->start[k] = start;
		if (gpuvirt_mig_place(s, k + 1, slots | ms, slices | cs))
			return true;
	}
	return false;
}

/* The counts that refuse @want on any GPU: max, GIs, slices, slots. */
static int gpuvirt_mig_plan_counts(const struct gpuvirt_mig_table *t,
				   const unsigned int *want,
				   struct gpuvirt_mig_why *why)
{
	unsigned int i, gis = 0, slices = 0, slots = 0;
	struct gpuvirt_mig_buf b;

	for (i = 0; i < t->count; i++) {
		const struct gpuvirt_mig_profile *p = &t->profile[i];

		if (want[i] > p->max) {
			b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_MAX, -1, i);
			gpuvirt_mig_puts(&b, "at most ");
			gpuvirt_mig_putu(&b, p->max);
			gpuvirt_mig_puts(&b, " of ");
			gpuvirt_mig_puts(&b, p->name);
			gpuvirt_mig_puts(&b, " (");
			gpuvirt_mig_putu(&b, want[i]);
			gpuvirt_mig_puts(&b, " wanted)");
			return -ENOSPC;
		}
		gis += want[i];
		slices += want[i] * p->slices;
		slots += want[i] * p->slots;
	}
	if (gis > GPUVIRT_MIG_GIS_MAX) {
		b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_GIS, -1, -1);
		gpuvirt_mig_puts(&b, "at most ");
		gpuvirt_mig_putu(&b, GPUVIRT_MIG_GIS_MAX);
		gpuvirt_mig_puts(&b, " GIs (");
		gpuvirt_mig_putu(&b, gis);
		gpuvirt_mig_puts(&b, " wanted)");
		return -ENOSPC;
	}
	if (slices > GPUVIRT_MIG_SLICES) {
		b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_SLICES, -1, -1);
		gpuvirt_mig_puts(&b, "the GIs need ");
		gpuvirt_mig_putu(&b, slices);
		gpuvirt_mig_puts(&b, " compute slices (the GPU has ");
		gpuvirt_mig_putu(&b, GPUVIRT_MIG_SLICES);
		gpuvirt_mig_putc(&b, ')');
		return -ENOSPC;
	}
	if (slots > GPUVIRT_MIG_SLOTS) {
		b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_SLOTS, -1, -1);
		gpuvirt_mig_puts(&b, "the GIs need ");
		gpuvirt_mig_putu(&b, slots);
		gpuvirt_mig_puts(&b, " memory slots (the GPU has ");
		gpuvirt_mig_putu(&b, GPUVIRT_MIG_SLOTS);
		gpuvirt_mig_putc(&b, ')');
		return -ENOSPC;
	}
	return 0;
}

/*
 * Why the GIs @left (a count per profile) do not fit around the busy GIs
 * although the whole wanted set fits an empty GPU: the first profile,
 * largest first, that does not fit on its own, with a busy GI in the way
 * of it; else the busy GIs together.
 */
static int gpuvirt_mig_plan_busy(const struct gpuvirt_mig_table *t,
				 const struct gpuvirt_mig_layout *cur,
				 unsigned int busy, const unsigned int *left,
				 struct gpuvirt_mig_why *why)
{
	unsigned int one[GPUVIRT_MIG_PROFILES] = { 0 };
	u8 order[GPUVIRT_MIG_PROFILES];
	struct gpuvirt_mig_search s;
	struct gpuvirt_mig_buf b;
	unsigned int i, st;
	u8 slots, slices;
	bool memory;
	int gi;

	gpuvirt_mig_taken(t, cur, busy, &slots, &slices);
	gpuvirt_mig_canonical(t, order);
	for (i = 0; i < t->count; i++) {
		const struct gpuvirt_mig_profile *p = &t->profile[order[i]];

		if (!left[order[i]])
			continue;
		one[order[i]] = left[order[i]];
		gpuvirt_mig_search_init(&s, t, one);
		one[order[i]] = 0;
		if (gpuvirt_mig_place(&s, 0, slots, slices))
			continue;
		for (st = 0; st < GPUVIRT_MIG_SLOTS; st++) {
			if (!(p->starts & (1U << st)))
				continue;
			gi = gpuvirt_mig_blocker(t, cur, busy, p, st, &memory);
			if (gi < 0)
				continue;
			b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_BUSY_PLACE,
					       gi, order[i]);
			gpuvirt_mig_puts(&b, "busy ");
			gpuvirt_mig_put_gi(&b, t, cur, gi);
			gpuvirt_mig_puts(&b, " leaves no room for ");
			if (left[order[i]] > 1) {
				gpuvirt_mig_putu(&b, left[order[i]]);
				gpuvirt_mig_puts(&b, " of ");
			}
			gpuvirt_mig_puts(&b, p->name);
			return -EBUSY;
		}
	}
	gi = gpuvirt_mig_lowest(busy);
	b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_BUSY_PLACE, gi, -1);
	if (gpuvirt_mig_weight(busy) > 1) {
		gpuvirt_mig_puts(&b, "busy GIs ");
		gpuvirt_mig_put_mask(&b, busy);
		gpuvirt_mig_puts(&b, " leave");
	} else {
		gpuvirt_mig_puts(&b, "busy ");
		gpuvirt_mig_put_gi(&b, t, cur, gi);
		gpuvirt_mig_puts(&b, " leaves");
	}
	gpuvirt_mig_puts(&b, " no room for the wanted GIs together");
	return -EBUSY;
}

/* Write the plan that keeps the GIs @keep of @cur and places @s. */
static int gpuvirt_mig_plan_fill(const struct gpuvirt_mig_table *t,
				 const struct gpuvirt_mig_layout *cur,
				 unsigned int keep,
				 const struct gpuvirt_mig_search *s,
				 struct gpuvirt_mig_plan *plan,
				 struct gpuvirt_mig_why *why)
{
	unsigned int i;
	int gi;

	memset(plan, 0, sizeof(*plan));
	plan->layout = *cur;
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		if (!cur->gi[i].used || (keep & (1U << i)))
			continue;
		plan->destroy[plan->nr_destroy++] = i;
		gpuvirt_mig_gi_remove(&plan->layout, i);
	}
	for (i = 0; i < s->n; i++) {
		/* cannot fail: the search found room for every GI */
		gi = gpuvirt_mig_gi_add(t, &plan->layout, s->profile[i],
					s->start[i], why);
		if (gi < 0)
			return gi;
		plan->create[i].profile = s->profile[i];
		plan->create[i].start = s->start[i];
		plan->create[i].gi = gi;
	}
	plan->nr_create = s->n;
	return 0;
}

/**
 * gpuvirt_mig_plan() - plan a partition of a GPU
 * @t: the GPU's profiles
 * @cur: its GIs now; NULL for none
 * @busy: id mask of the GIs of @cur that must stay where they are
 * @want: the wanted GIs after the change, busy ones included: a count per
 *	profile, @t->count entries
 * @plan: filled in with the plan on success
 * @why: filled in with the reason when refused; may be NULL
 *
 * See mig.h for what the plan guarantees. The checks, in this order: every
 * busy GI exists (-EINVAL); no profile is wanted more than its max count,
 * at most 7 GIs, 7 compute slices and 8 memory slots are wanted in all
 * (-ENOSPC); every busy GI is wanted (-EBUSY); some placement holds the
 * wanted GIs (-ENOSPC, fragmentation); one does with the busy GIs where
 * they are (-EBUSY).
 *
 * Return: 0 or a negative errno.
 */
int gpuvirt_mig_plan(const struct gpuvirt_mig_table *t,
		     const struct gpuvirt_mig_layout *cur, u8 busy,
		     const unsigned int *want, struct gpuvirt_mig_plan *plan,
		     struct gpuvirt_mig_why *why)
{
	unsigned int have[GPUVIRT_MIG_PROFILES] = { 0 };
	unsigned int left[GPUVIRT_MIG_PROFILES];
	struct gpuvirt_mig_layout empty;
	struct gpuvirt_mig_search s;
	struct gpuvirt_mig_why local;
	struct gpuvirt_mig_buf b;
	unsigned int i, idle = 0, keep, k;
	u8 slots, slices;
	int ret;

	if (!why)
		why = &local;
	gpuvirt_mig_why_clear(why);
	gpuvirt_mig_layout_init(&empty);
	if (!cur)
		cur = &empty;
	for (i = 0; i < 8 * sizeof(busy); i++) {
		if (!(busy & (1U << i)))
			continue;
		if (i >= GPUVIRT_MIG_GIS_MAX || !cur->gi[i].used) {
			b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_GI, i, -1);
			gpuvirt_mig_puts(&b, "busy GI ");
			gpuvirt_mig_putu(&b, i);
			gpuvirt_mig_puts(&b, " does not exist");
			return -EINVAL;
		}
	}
	ret = gpuvirt_mig_plan_counts(t, want, why);
	if (ret)
		return ret;
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct gpuvirt_mig_gi *gi = &cur->gi[i];

		if (!gi->used)
			continue;
		if (!(busy & (1U << i))) {
			idle |= 1U << i;
			continue;
		}
		if (++have[gi->profile] <= want[gi->profile])
			continue;
		b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_BUSY, i,
				       gi->profile);
		gpuvirt_mig_put_gi(&b, t, cur, i);
		gpuvirt_mig_puts(&b, " is busy and ");
		if (want[gi->profile]) {
			gpuvirt_mig_puts(&b, "only ");
			gpuvirt_mig_putu(&b, want[gi->profile]);
			gpuvirt_mig_puts(&b, " of ");
			gpuvirt_mig_puts(&b, t->profile[gi->profile].name);
			gpuvirt_mig_puts(&b, " is wanted");
		} else {
			gpuvirt_mig_puts(&b, "not wanted");
		}
		return -EBUSY;
	}

	/* Keep as many idle GIs as can stay; the fewest destroyed. */
	for (k = gpuvirt_mig_weight(idle) + 1; k-- > 0;) {
		for (keep = 0; keep <= idle; keep++) {
			if ((keep & ~idle) || gpuvirt_mig_weight(keep) != k)
				continue;
			for (i = 0; i < t->count; i++)
				left[i] = want[i] - have[i];
			for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
				if (!(keep & (1U << i)))
					continue;
				if (!left[cur->gi[i].profile])
					break;
				left[cur->gi[i].profile]--;
			}
			if (i < GPUVIRT_MIG_GIS_MAX)
				continue;
			gpuvirt_mig_taken(t, cur, busy | keep, &slots, &slices);
			gpuvirt_mig_search_init(&s, t, left);
			if (gpuvirt_mig_place(&s, 0, slots, slices))
				return gpuvirt_mig_plan_fill(t, cur, busy | keep,
							     &s, plan, why);
		}
	}

	gpuvirt_mig_search_init(&s, t, want);
	if (!gpuvirt_mig_place(&s, 0, 0, 0)) {
		b = gpuvirt_mig_refuse(why, GPUVIRT_MIG_ERR_FRAGMENT, -1, -1);
		gpuvirt_mig_puts(&b, "no placement holds all the wanted GIs");
		return -ENOSPC;
	}
	for (i = 0; i < t->count; i++)
		left[i] = want[i] - have[i];
	return gpuvirt_mig_plan_busy(t, cur, busy, left, why);
}

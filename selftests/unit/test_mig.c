// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the MIG GI profiles, placement and planner
 * (kernel/core/mig.c), built in userspace.
 *
 * The test keeps its own copy of the profile tables, typed in from the
 * "MIG GPU-instance profiles" section of REFERENCE.md, and its own model of
 * the rules (8 memory slots, 7 compute slices, a GI at start s takes
 * [s, s + slots) and [s, s + g), no sharing, at most 7 GIs and max of each
 * profile). The brute force below works from that copy only: it tries
 * every assignment of legal starts to the GIs of a wanted set, so that the
 * planner's answers are checked against something that shares no code
 * with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kselftest_harness.h"

#include "core/mig.h"

#define NP	GPUVIRT_MIG_PROFILES
#define ANY	GPUVIRT_MIG_START_ANY

/* One profile as REFERENCE.md gives it; starts end with -1. */
struct ref_profile {
	const char *name;
	const char *vgpu;
	unsigned int g, slots, max;
	int starts[8];
};

struct ref_model {
	const char *model;
	unsigned long long gib;
	struct ref_profile p[NP];
};

#define ALL1	{ 0, 1, 2, 3, 4, 5, 6, -1 }
#define EVEN4	{ 0, 2, 4, 6, -1 }
#define EVEN3	{ 0, 2, 4, -1 }
#define HALF	{ 0, 4, -1 }
#define ZERO	{ 0, -1 }

/*
 * | A100-40GB | 1g.5gb    | 1/8 | 1/7 | 7 | {0,1,2,3,4,5,6}:1 |
 * |           | 1g.5gb+me | 1/8 | 1/7 | 1 | {0..6}:1          |
 * |           | 1g.10gb   | 2/8 | 1/7 | 4 | {0,2,4,6}:2       |
 * |           | 2g.10gb   | 2/8 | 2/7 | 3 | {0,2,4}:2         |
 * |           | 3g.20gb   | 4/8 | 3/7 | 2 | {0,4}:4           |
 * |           | 4g.20gb   | 4/8 | 4/7 | 1 | {0}:4             |
 * |           | 7g.40gb   | 8/8 | 7/7 | 1 | {0}:8             |
 * A100-80GB, H100-80GB and H200-141GB: the same shape, with the names of
 * their rows. vGPU types: <GPU>-<g>-<GB>C ("A100-1-5C", "H200-1-18C").
 */
static const struct ref_model refs[] = {
	{ "a100-40gb", 40, {
		{ "1g.5gb", "A100-1-5C", 1, 1, 7, ALL1 },
		{ "1g.5gb+me", "A100-1-5CME", 1, 1, 1, ALL1 },
		{ "1g.10gb", "A100-1-10C", 1, 2, 4, EVEN4 },
		{ "2g.10gb", "A100-2-10C", 2, 2, 3, EVEN3 },
		{ "3g.20gb", "A100-3-20C", 3, 4, 2, HALF },
		{ "4g.20gb", "A100-4-20C", 4, 4, 1, ZERO },
		{ "7g.40gb", "A100-7-40C", 7, 8, 1, ZERO },
	} },
	{ "a100-80gb", 80, {
		{ "1g.10gb", "A100D-1-10C", 1, 1, 7, ALL1 },
		{ "1g.10gb+me", "A100D-1-10CME", 1, 1, 1, ALL1 },
		{ "1g.20gb", "A100D-1-20C", 1, 2, 4, EVEN4 },
		{ "2g.20gb", "A100D-2-20C", 2, 2, 3, EVEN3 },
		{ "3g.40gb", "A100D-3-40C", 3, 4, 2, HALF },
		{ "4g.40gb", "A100D-4-40C", 4, 4, 1, ZERO },
		{ "7g.80gb", "A100D-7-80C", 7, 8, 1, ZERO },
	} },
	{ "h100-80gb", 80, {
		{ "1g.10gb", "H100-1-10C", 1, 1, 7, ALL1 },
		{ "1g.10gb+me", "H100-1-10CME", 1, 1, 1, ALL1 },
		{ "1g.20gb", "H100-1-20C", 1, 2, 4, EVEN4 },
		{ "2g.20gb", "H100-2-20C", 2, 2, 3, EVEN3 },
		{ "3g.40gb", "H100-3-40C", 3, 4, 2, HALF },
		{ "4g.40gb", "H100-4-40C", 4, 4, 1, ZERO },
		{ "7g.80gb", "H100-7-80C", 7, 8, 1, ZERO },
	} },
	{ "h200-141gb", 141, {
		{ "1g.18gb", "H200-1-18C", 1, 1, 7, ALL1 },
		{ "1g.18gb+me", "H200-1-18CME", 1, 1, 1, ALL1 },
		{ "1g.35gb", "H200-1-35C", 1, 2, 4, EVEN4 },
		{ "2g.35gb", "H200-2-35C", 2, 2, 3, EVEN3 },
		{ "3g.71gb", "H200-3-71C", 3, 4, 2, HALF },
		{ "4g.71gb", "H200-4-71C", 4, 4, 1, ZERO },
		{ "7g.141gb", "H200-7-141C", 7, 8, 1, ZERO },
	} },
};

/* H200 profile indexes, in table order. */
enum { P1G, P1GME, P1GW, P2G, P3G, P4G, P7G };

static unsigned int ref_starts(const struct ref_profile *p)
{
	unsigned int m = 0;
	int i;

	for (i = 0; p->starts[i] >= 0; i++)
		m |= 1U << p->starts[i];
	return m;
}

static unsigned int ref_mem(const struct ref_profile *p, int start)
{
	return ((1U << p->slots) - 1) << start;
}

static unsigned int ref_sm(const struct ref_profile *p, int start)
{
	return ((1U << p->g) - 1) << start;
}

static void table(struct __test_metadata *_metadata, const char *model,
		  struct gpuvirt_mig_table *t)
{
	ASSERT_EQ(0, gpuvirt_mig_table_find(model, t)) TH_LOG("%s", model);
	ASSERT_EQ((unsigned int)NP, t->count);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the brute force, from the test's own tables ---------------------- */

/*
 * Does some assignment of legal starts to the GIs @count (per profile) fit
 * around @mem0/@sm0 (taken already)? Every assignment is tried, an
 * odometer over the starts of each GI, until one fits.
 */
static bool brute_fits(const struct ref_model *r, const unsigned int *count,
		       unsigned int mem0, unsigned int sm0)
{
	const struct ref_profile *gi[16];
	int digit[16];
	unsigned int n = 0, i, k;

	for (i = 0; i < NP; i++)
		for (k = 0; k < count[i]; k++) {
			if (n == 16)
				return false;
			gi[n++] = &r->p[i];
		}
	for (i = 0; i < n; i++)
		digit[i] = 0;
	for (;;) {
		unsigned int mem = mem0, sm = sm0;
		bool ok = true;

		for (i = 0; i < n && ok; i++) {
			int s = gi[i]->starts[digit[i]];
			unsigned int m = ref_mem(gi[i], s);
			unsigned int c = ref_sm(gi[i], s);

			if (s + gi[i]->slots > 8 || s + gi[i]->g > 7 ||
			    (mem & m) || (sm & c))
				ok = false;
			mem |= m;
			sm |= c;
		}
		if (ok)
			return true;
		/* next assignment */
		for (i = n; i-- > 0;) {
			if (gi[i]->starts[++digit[i]] >= 0)
				break;
			digit[i] = 0;
		}
		if (i == (unsigned int)-1)
			return false;
	}
}

/* The reason the rules give for refusing @count on an empty GPU, or OK. */
static enum gpuvirt_mig_reason brute_reason(const struct ref_model *r,
					    const unsigned int *count)
{
	unsigned int i, gis = 0, sm = 0, mem = 0;

	for (i = 0; i < NP; i++) {
		if (count[i] > r->p[i].max)
			return GPUVIRT_MIG_ERR_MAX;
		gis += count[i];
		sm += count[i] * r->p[i].g;
		mem += count[i] * r->p[i].slots;
	}
	if (gis > 7)
		return GPUVIRT_MIG_ERR_GIS;
	if (sm > 7)
		return GPUVIRT_MIG_ERR_SLICES;
	if (mem > 8)
		return GPUVIRT_MIG_ERR_SLOTS;
	return brute_fits(r, count, 0, 0) ? GPUVIRT_MIG_OK :
					    GPUVIRT_MIG_ERR_FRAGMENT;
}

/* A layout checked against the rules, from the test's tables only. */
static bool ref_valid(const struct ref_model *r,
		      const struct gpuvirt_mig_layout *l)
{
	unsigned int mem = 0, sm = 0, n = 0, per[NP] = { 0 }, i;

	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct ref_profile *p;
		unsigned int s;

		if (!l->gi[i].used)
			continue;
		if (l->gi[i].profile >= NP)
			return false;
		p = &r->p[l->gi[i].profile];
		s = l->gi[i].start;
		if (s >= 8 || !(ref_starts(p) & (1U << s)) ||
		    (mem & ref_mem(p, s)) || (sm & ref_sm(p, s)) ||
		    ++per[l->gi[i].profile] > p->max)
			return false;
		mem |= ref_mem(p, s);
		sm |= ref_sm(p, s);
		n++;
	}
	return n == l->nr && n <= 7 && !(mem & ~0xffU) && !(sm & ~0x7fU);
}

static void layout_counts(const struct gpuvirt_mig_layout *l,
			  unsigned int *count)
{
	unsigned int i;

	memset(count, 0, NP * sizeof(*count));
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++)
		if (l->gi[i].used)
			count[l->gi[i].profile]++;
}

/* ---- tables ------------------------------------------------------------ */

TEST(tables_match_reference)
{
	struct gpuvirt_mig_table t;
	unsigned int m, i;

	for (m = 0; m < ARRAY_SIZE(refs); m++) {
		const struct ref_model *r = &refs[m];
		unsigned long long slot = (r->gib << 30) / 8;

		table(_metadata, r->model, &t);
		EXPECT_EQ(slot, t.slot_size);
		for (i = 0; i < NP; i++) {
			const struct gpuvirt_mig_profile *p = &t.profile[i];
			const struct ref_profile *w = &r->p[i];

			EXPECT_STREQ(w->name, p->name);
			EXPECT_STREQ(w->vgpu, p->vgpu_name);
			EXPECT_EQ(w->g, p->slices) TH_LOG("%s", w->name);
			EXPECT_EQ(w->slots, p->slots) TH_LOG("%s", w->name);
			EXPECT_EQ(w->max, p->max) TH_LOG("%s", w->name);
			EXPECT_EQ(ref_starts(w), p->starts) TH_LOG("%s", w->name);
			EXPECT_EQ(i == 1, p->media) TH_LOG("%s", w->name);
			EXPECT_EQ(w->slots * slot, p->mem_size);
		}
	}
	/* the A100-40GB memory column: 1/8, 2/8, 4/8, 8/8 of 40 GB */
	table(_metadata, "a100-40gb", &t);
	EXPECT_EQ(5ULL << 30, t.profile[0].mem_size);
	EXPECT_EQ(10ULL << 30, t.profile[2].mem_size);
	EXPECT_EQ(20ULL << 30, t.profile[4].mem_size);
	EXPECT_EQ(40ULL << 30, t.profile[6].mem_size);
	/* H200: 141 GiB / 8 = 18048 MiB a slot */
	table(_metadata, "h200-141gb", &t);
	EXPECT_EQ(18048ULL << 20, t.slot_size);
	EXPECT_EQ(71U, t.profile[4].gb);
}

/* Every legal start keeps the GI inside both axes. */
TEST(legal_starts_stay_inside_the_axes)
{
	unsigned int m, i, s;

	for (m = 0; m < ARRAY_SIZE(refs); m++) {
		for (i = 0; i < NP; i++) {
			const struct ref_profile *p = &refs[m].p[i];

			EXPECT_GE(p->slots, p->g);
			for (s = 0; s < 8; s++) {
				if (!(ref_starts(p) & (1U << s)))
					continue;
				EXPECT_LE(s + p->slots, 8U);
				EXPECT_LE(s + p->g, 7U);
			}
		}
	}
}

/* The custom rule applied to the catalogue sizes gives NVIDIA's names. */
TEST(custom_rule_reproduces_reference_names)
{
	struct gpuvirt_mig_table t;
	unsigned int m, i;

	for (m = 0; m < ARRAY_SIZE(refs); m++) {
		ASSERT_EQ(0, gpuvirt_mig_table_build(NULL, refs[m].gib << 30, 7,
						     &t));
		for (i = 0; i < NP; i++) {
			char vgpu[GPUVIRT_MIG_VGPU_NAME_MAX];
			const char *dash = strchr(refs[m].p[i].vgpu, '-');

			EXPECT_STREQ(refs[m].p[i].name, t.profile[i].name);
			snprintf(vgpu, sizeof(vgpu), "CUSTOM%s", dash);
			EXPECT_STREQ(vgpu, t.profile[i].vgpu_name);
		}
	}
}

TEST(custom_gpus)
{
	static const struct {
		unsigned long long vram;	/* MiB */
		const char *names[NP];
		unsigned long long slot;	/* MiB */
	} cases[] = {
		/* 48 GiB: 6 a slot */
		{ 48 << 10, { "1g.6gb", "1g.6gb+me", "1g.12gb", "2g.12gb",
			      "3g.24gb", "4g.24gb", "7g.48gb" }, 6 << 10 },
		/* 100 GiB: 12.5 -> 13, 25, 50, 100 */
		{ 100 << 10, { "1g.13gb", "1g.13gb+me", "1g.25gb", "2g.25gb",
			       "3g.50gb", "4g.50gb", "7g.100gb" }, 12800 },
		/* 8 GiB, the least: 1 GiB a slot */
		{ 8 << 10, { "1g.1gb", "1g.1gb+me", "1g.2gb", "2g.2gb",
			     "3g.4gb", "4g.4gb", "7g.8gb" }, 1024 },
		/* 12 GiB: 1.5 -> 2, 3, 6, 12 */
		{ 12 << 10, { "1g.2gb", "1g.2gb+me", "1g.3gb", "2g.3gb",
			      "3g.6gb", "4g.6gb", "7g.12gb" }, 1536 },
		/* 1 TiB, the most */
		{ 1 << 20, { "1g.128gb", "1g.128gb+me", "1g.256gb", "2g.256gb",
			     "3g.512gb", "4g.512gb", "7g.1024gb" }, 128 << 10 },
		/* 9000 MiB: 1125 MiB a slot, 1.098 -> 1, 2.197 -> 2 */
		{ 9000, { "1g.1gb", "1g.1gb+me", "1g.2gb", "2g.2gb",
			  "3g.4gb", "4g.4gb", "7g.9gb" }, 1125 },
	};
	struct gpuvirt_mig_table t;
	unsigned int c, i;

	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		ASSERT_EQ(0, gpuvirt_mig_table_build(NULL, cases[c].vram << 20,
						     7, &t));
		EXPECT_EQ(cases[c].slot << 20, t.slot_size);
		for (i = 0; i < NP; i++) {
			EXPECT_STREQ(cases[c].names[i], t.profile[i].name);
			EXPECT_EQ(refs[0].p[i].slots * (cases[c].slot << 20),
				  t.profile[i].mem_size);
			EXPECT_EQ(refs[0].p[i].max, t.profile[i].max);
			EXPECT_EQ(ref_starts(&refs[0].p[i]), t.profile[i].starts);
		}
	}
	ASSERT_EQ(0, gpuvirt_mig_table_build(NULL, 48ULL << 30, 64, &t));
	EXPECT_STREQ("CUSTOM-3-24C", t.profile[4].vgpu_name);
	EXPECT_STREQ("CUSTOM-1-6CME", t.profile[1].vgpu_name);
	/* 1 MiB grain: 8 GiB + 4 MiB gives slots of 1 GiB (+ 0.5 MiB cut) */
	ASSERT_EQ(0, gpuvirt_mig_table_build(NULL, (8ULL << 30) + (4 << 20), 7,
					     &t));
	EXPECT_EQ(1ULL << 30, t.slot_size);

	/* too small, too few engines, too large */
	EXPECT_EQ(-EOPNOTSUPP, gpuvirt_mig_table_build(NULL, (8ULL << 30) - 1,
						       7, &t));
	EXPECT_EQ(0U, t.count);
	EXPECT_EQ(-EOPNOTSUPP, gpuvirt_mig_table_build(NULL, 1ULL << 30, 7, &t));
	EXPECT_EQ(-EOPNOTSUPP, gpuvirt_mig_table_build(NULL, 80ULL << 30, 6,
						       &t));
	EXPECT_EQ(0U, t.count);
	EXPECT_EQ(-EINVAL, gpuvirt_mig_table_build(NULL, (1ULL << 40) + 1, 7,
						   &t));
}

TEST(catalogue_models_and_capability)
{
	struct gpuvirt_model fake = {
		"t4-16gb", "T4", 16ULL << 30, 7, 40, false,
	};
	struct gpuvirt_model other = {
		"l40s-48gb", "L40S", 48ULL << 30, 7, 142, true,
	};
	struct gpuvirt_mig_table t;

	/* a catalogue model's table ignores the size arguments */
	ASSERT_EQ(0, gpuvirt_mig_table_build(gpuvirt_catalogue_find("h200-141gb"),
					     1, 1, &t));
	EXPECT_STREQ("7g.141gb", t.profile[6].name);
	/* not MIG-capable */
	EXPECT_EQ(-EOPNOTSUPP, gpuvirt_mig_table_build(&fake, 0, 0, &t));
	EXPECT_EQ(0U, t.count);
	/* MIG-capable, no table: the custom rule with the model's prefix */
	ASSERT_EQ(0, gpuvirt_mig_table_build(&other, 0, 0, &t));
	EXPECT_STREQ("3g.24gb", t.profile[4].name);
	EXPECT_STREQ("L40S-3-24C", t.profile[4].vgpu_name);
	/* lookup by model name: exact catalogue names only */
	EXPECT_EQ(-ENOENT, gpuvirt_mig_table_find("H200-141GB", &t));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_table_find("custom", &t));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_table_find("", &t));
	EXPECT_EQ(0U, t.count);
}

TEST(lookup_by_name)
{
	struct gpuvirt_mig_table t;
	unsigned int m, i;

	for (m = 0; m < ARRAY_SIZE(refs); m++) {
		table(_metadata, refs[m].model, &t);
		for (i = 0; i < NP; i++) {
			const struct ref_profile *w = &refs[m].p[i];

			EXPECT_EQ((int)i, gpuvirt_mig_profile_find(&t, w->name));
			EXPECT_EQ((int)i, gpuvirt_mig_vgpu_find(&t, w->vgpu));
		}
	}
	table(_metadata, "h200-141gb", &t);
	EXPECT_EQ(-ENOENT, gpuvirt_mig_profile_find(&t, "3g.70gb"));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_profile_find(&t, "3G.71GB"));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_profile_find(&t, "1g.18gb "));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_profile_find(&t, ""));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_vgpu_find(&t, "H200-3-71Q"));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_vgpu_find(&t, "H200-35C"));
	EXPECT_EQ(P1G, gpuvirt_mig_vgpu_find(&t, "H200-1-18C"));
	EXPECT_EQ(P1GME, gpuvirt_mig_vgpu_find(&t, "H200-1-18CME"));
	/* one vGPU type per profile, as many instances as GIs */
	EXPECT_EQ(7U, t.profile[P1G].max);
	EXPECT_EQ(2U, t.profile[P3G].max);
}

/* ---- adding and removing GIs ------------------------------------------ */

static int add(const struct gpuvirt_mig_table *t, struct gpuvirt_mig_layout *l,
	       unsigned int p, int start, struct gpuvirt_mig_why *why)
{
	return gpuvirt_mig_gi_add(t, l, p, start, why);
}

/* @call must fail with @err, for @rsn, naming GI @gi_, saying @text. */
#define EXPECT_REFUSED(err, rsn, gi_, text, call, why) do {		\
	const struct gpuvirt_mig_why *__w = (why);			\
	EXPECT_EQ(err, call);						\
	EXPECT_EQ(rsn, __w->reason);					\
	EXPECT_EQ(gi_, __w->gi);					\
	EXPECT_STREQ(text, __w->msg);					\
} while (0)

TEST(every_profile_at_every_start)
{
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_layout l;
	struct gpuvirt_mig_why why;
	unsigned int m, i, tried = 0, legal = 0;
	int s;

	for (m = 0; m < ARRAY_SIZE(refs); m++) {
		table(_metadata, refs[m].model, &t);
		for (i = 0; i < NP; i++) {
			unsigned int ok = ref_starts(&refs[m].p[i]);

			for (s = 0; s < 12; s++) {
				int ret;

				gpuvirt_mig_layout_init(&l);
				ret = add(&t, &l, i, s, &why);
				tried++;
				if (s < 8 && (ok & (1U << s))) {
					legal++;
					EXPECT_EQ(0, ret)
						TH_LOG("%s@%d: %s", refs[m].p[i].name,
						       s, why.msg);
					EXPECT_EQ(GPUVIRT_MIG_OK, why.reason);
					EXPECT_STREQ("", why.msg);
					EXPECT_EQ(1U, l.nr);
					EXPECT_EQ(s, l.gi[0].start);
					EXPECT_EQ(i, l.gi[0].profile);
					EXPECT_EQ(0, gpuvirt_mig_gi_remove(&l, 0));
					EXPECT_EQ(0U, l.nr);
				} else {
					EXPECT_EQ(-EINVAL, ret)
						TH_LOG("%s@%d", refs[m].p[i].name, s);
					EXPECT_EQ(GPUVIRT_MIG_ERR_START,
						  why.reason);
					EXPECT_EQ((int)i, why.profile);
					EXPECT_EQ(0U, l.nr);
				}
			}
		}
	}
	EXPECT_EQ(4U * 7 * 12, tried);
	/* 7 + 7 + 4 + 3 + 2 + 1 + 1 legal starts per model */
	EXPECT_EQ(4U * 25, legal);

	table(_metadata, "h200-141gb", &t);
	gpuvirt_mig_layout_init(&l);
	EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_START, -1,
		       "3g.71gb cannot start at memory slot 2 (starts 0,4)",
		       add(&t, &l, P3G, 2, &why), &why);
	EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_START, -1,
		       "1g.18gb cannot start at memory slot 7 (starts 0-6)",
		       add(&t, &l, P1G, 7, &why), &why);
	EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_START, -1,
		       "1g.35gb cannot start at memory slot 1 (starts 0,2,4,6)",
		       add(&t, &l, P1GW, 1, &why), &why);
	EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_START, -1,
		       "2g.35gb cannot start at memory slot 6 (starts 0,2,4)",
		       add(&t, &l, P2G, 6, &why), &why);
	EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_START, -1,
		       "7g.141gb cannot start at memory slot 8 (starts 0)",
		       add(&t, &l, P7G, 8, &why), &why);
	EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_PROFILE, -1,
		       "no profile 7 (the GPU has 7)",
		       add(&t, &l, 7, ANY, &why), &why);
	EXPECT_EQ(0U, l.nr);
	/* a NULL why is allowed */
	EXPECT_EQ(-EINVAL, add(&t, &l, P4G, 4, NULL));
}

/* Each profile up to its max count, at the lowest free starts. */
TEST(max_counts)
{
	static const char * const msg[NP] = {
		"at most 7 GIs",
		"at most 1 of 1g.18gb+me",
		"at most 4 of 1g.35gb",
		"at most 3 of 2g.35gb",
		"at most 2 of 3g.71gb",
		"at most 1 of 4g.71gb",
		"at most 1 of 7g.141gb",
	};
	static const int starts[NP][7] = {
		{ 0, 1, 2, 3, 4, 5, 6 }, { 0 }, { 0, 2, 4, 6 }, { 0, 2, 4 },
		{ 0, 4 }, { 0 }, { 0 },
	};
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_layout l;
	struct gpuvirt_mig_why why;
	unsigned int i, k;

	table(_metadata, "h200-141gb", &t);
	for (i = 0; i < NP; i++) {
		gpuvirt_mig_layout_init(&l);
		for (k = 0; k < t.profile[i].max; k++) {
			ASSERT_EQ((int)k, add(&t, &l, i, ANY, &why))
				TH_LOG("%s #%u: %s", t.profile[i].name, k, why.msg);
			EXPECT_EQ(starts[i][k], l.gi[k].start);
		}
		EXPECT_REFUSED(-ENOSPC, i ? GPUVIRT_MIG_ERR_MAX :
			       GPUVIRT_MIG_ERR_GIS, -1, msg[i],
			       add(&t, &l, i, ANY, &why), &why);
		EXPECT_EQ(k, l.nr);
	}
	/* the +me one is the only max that binds before the geometry */
	gpuvirt_mig_layout_init(&l);
	ASSERT_EQ(0, add(&t, &l, P1GME, 3, &why));
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MAX, -1,
		       "at most 1 of 1g.18gb+me",
		       add(&t, &l, P1GME, 5, &why), &why);
	ASSERT_EQ(1, add(&t, &l, P1G, ANY, &why));
	EXPECT_EQ(0, l.gi[1].start);
}

TEST(seven_gis_at_most)
{
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_layout l;
	struct gpuvirt_mig_why why;
	unsigned int i;

	table(_metadata, "a100-40gb", &t);
	gpuvirt_mig_layout_init(&l);
	for (i = 0; i < 6; i++)
		ASSERT_EQ((int)i, add(&t, &l, 0, ANY, &why));
	ASSERT_EQ(6, add(&t, &l, 1, ANY, &why));
	EXPECT_EQ(6, l.gi[6].start);
	EXPECT_EQ(7U, l.nr);
	/* slot 7 is free, but only a wide 1g could use it, and 7 GIs exist */
	for (i = 0; i < NP; i++)
		EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_GIS, -1, "at most 7 GIs",
			       add(&t, &l, i, ANY, &why), &why);
	/* a bad start is refused as such first */
	EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_START, -1,
		       "1g.10gb cannot start at memory slot 7 (starts 0,2,4,6)",
		       add(&t, &l, 2, 7, &why), &why);
	EXPECT_EQ(0, gpuvirt_mig_gi_remove(&l, 3));
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MEMORY, 2,
		       "memory slot 2 is taken by GI 2 (1g.5gb)",
		       add(&t, &l, 2, 2, &why), &why);
	EXPECT_EQ(3, add(&t, &l, 0, ANY, &why));
	EXPECT_EQ(3, l.gi[3].start);
}

TEST(overlap_names_the_gi_in_the_way)
{
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_layout l, before;
	struct gpuvirt_mig_why why;

	table(_metadata, "h200-141gb", &t);
	gpuvirt_mig_layout_init(&l);
	ASSERT_EQ(0, add(&t, &l, P1G, 0, &why));
	ASSERT_EQ(1, add(&t, &l, P1G, 1, &why));
	ASSERT_EQ(2, add(&t, &l, P3G, 4, &why));
	before = l;

	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MEMORY, 2,
		       "memory slots 4-7 are taken by GI 2 (3g.71gb)",
		       add(&t, &l, P3G, 4, &why), &why);
	EXPECT_EQ(P3G, why.profile);
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MEMORY, 2,
		       "memory slot 5 is taken by GI 2 (3g.71gb)",
		       add(&t, &l, P1G, 5, &why), &why);
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MEMORY, 2,
		       "memory slots 4-5 are taken by GI 2 (3g.71gb)",
		       add(&t, &l, P2G, 4, &why), &why);
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MEMORY, 2,
		       "memory slots 6-7 are taken by GI 2 (3g.71gb)",
		       add(&t, &l, P1GW, 6, &why), &why);
	/* two GIs in the way: the one holding the lowest slot is named */
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MEMORY, 0,
		       "memory slot 0 is taken by GI 0 (1g.18gb)",
		       add(&t, &l, P2G, 0, &why), &why);
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MEMORY, 0,
		       "memory slot 0 is taken by GI 0 (1g.18gb)",
		       add(&t, &l, P7G, 0, &why), &why);
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MEMORY, 1,
		       "memory slot 1 is taken by GI 1 (1g.18gb)",
		       add(&t, &l, P1GME, 1, &why), &why);
	/* refusals change nothing */
	EXPECT_EQ(0, memcmp(&before, &l, sizeof(l)));

	/* the free pair, then nothing left for a 1g, a 3g or a 2g */
	EXPECT_EQ(3, add(&t, &l, P2G, ANY, &why));
	EXPECT_EQ(2, l.gi[3].start);
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_NO_START, 0,
		       "no free start for 1g.18gb (0-6): memory slot 0 is taken by GI 0 (1g.18gb)",
		       add(&t, &l, P1G, ANY, &why), &why);
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_NO_START, 0,
		       "no free start for 3g.71gb (0,4): memory slot 0 is taken by GI 0 (1g.18gb)",
		       add(&t, &l, P3G, ANY, &why), &why);
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_NO_START, 0,
		       "no free start for 2g.35gb (0,2,4): memory slot 0 is taken by GI 0 (1g.18gb)",
		       add(&t, &l, P2G, ANY, &why), &why);
	EXPECT_EQ(-ENOSPC, gpuvirt_mig_gi_check(&t, &l, P1G, ANY, NULL));

	/* a hole again: GI 0 goes, and its id and slot are the lowest free */
	EXPECT_EQ(0, gpuvirt_mig_gi_remove(&l, 0));
	EXPECT_EQ(0, gpuvirt_mig_gi_check(&t, &l, P1G, ANY, &why));
	EXPECT_EQ(3U, l.nr);		/* check adds nothing */
	EXPECT_EQ(0, add(&t, &l, P1GME, ANY, &why));
	EXPECT_EQ(0, l.gi[0].start);
	EXPECT_EQ(P1GME, l.gi[0].profile);
}

/* The compute axis has its own check; no NVIDIA shape reaches it alone. */
TEST(compute_overlap_names_the_gi_in_the_way)
{
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_layout l;
	struct gpuvirt_mig_why why;

	table(_metadata, "h200-141gb", &t);
	/* a made-up profile: one memory slot, two compute slices, at 0 */
	t.profile[P1GW].slots = 1;
	t.profile[P1GW].slices = 2;
	t.profile[P1GW].starts = 0x01;
	gpuvirt_mig_layout_init(&l);
	ASSERT_EQ(0, add(&t, &l, P1GW, 0, &why));
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_COMPUTE, 0,
		       "compute slice 1 is taken by GI 0 (1g.35gb)",
		       add(&t, &l, P1G, 1, &why), &why);
	EXPECT_EQ(P1G, why.profile);
	/* at 0 both axes clash: the memory one is named */
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_MEMORY, 0,
		       "memory slot 0 is taken by GI 0 (1g.35gb)",
		       add(&t, &l, P4G, 0, &why), &why);
	EXPECT_EQ(1, add(&t, &l, P1G, ANY, &why));
	EXPECT_EQ(2, l.gi[1].start);
}

TEST(remove_gi)
{
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_layout l;

	table(_metadata, "a100-80gb", &t);
	gpuvirt_mig_layout_init(&l);
	EXPECT_EQ(-ENOENT, gpuvirt_mig_gi_remove(&l, 0));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_gi_remove(&l, 7));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_gi_remove(&l, ~0U));
	ASSERT_EQ(0, add(&t, &l, 6, ANY, NULL));
	EXPECT_EQ(-ENOSPC, add(&t, &l, 0, ANY, NULL));
	EXPECT_EQ(0, gpuvirt_mig_gi_remove(&l, 0));
	EXPECT_EQ(-ENOENT, gpuvirt_mig_gi_remove(&l, 0));
	EXPECT_EQ(0U, l.nr);
	EXPECT_EQ(0, add(&t, &l, 0, ANY, NULL));
}

/* ---- the planner ------------------------------------------------------- */

static int plan(const struct gpuvirt_mig_table *t,
		const struct gpuvirt_mig_layout *cur, unsigned int busy,
		const unsigned int *want, struct gpuvirt_mig_plan *p,
		struct gpuvirt_mig_why *why)
{
	return gpuvirt_mig_plan(t, cur, busy, want, p, why);
}

/*
 * Replay @p on a copy of @cur with the public calls: the destroys (idle
 * GIs only), then the creates in order at their starts, each getting the
 * id the plan says. The result must be @p->layout, hold exactly @want,
 * keep every GI the plan does not destroy, and obey the rules.
 */
static void replay(struct __test_metadata *_metadata,
		   const struct ref_model *r, const struct gpuvirt_mig_table *t,
		   const struct gpuvirt_mig_layout *cur, unsigned int busy,
		   const unsigned int *want, const struct gpuvirt_mig_plan *p)
{
	struct gpuvirt_mig_layout l = *cur;
	struct gpuvirt_mig_why why;
	unsigned int have[NP], i, gone = 0;

	for (i = 0; i < p->nr_destroy; i++) {
		ASSERT_FALSE(busy & (1U << p->destroy[i]));
		if (i)
			ASSERT_LT(p->destroy[i - 1], p->destroy[i]);
		gone |= 1U << p->destroy[i];
		ASSERT_EQ(0, gpuvirt_mig_gi_remove(&l, p->destroy[i]));
	}
	for (i = 0; i < p->nr_create; i++) {
		const struct gpuvirt_mig_create *c = &p->create[i];

		ASSERT_EQ(c->gi, add(t, &l, c->profile, c->start, &why))
			TH_LOG("create %u (%s@%u): %s", i,
			       t->profile[c->profile].name, c->start, why.msg);
	}
	ASSERT_EQ(0, memcmp(&l, &p->layout, sizeof(l)));
	ASSERT_TRUE(ref_valid(r, &l));
	layout_counts(&l, have);
	ASSERT_EQ(0, memcmp(have, want, sizeof(have)));
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		if (!cur->gi[i].used || (gone & (1U << i)))
			continue;
		ASSERT_EQ(0, memcmp(&cur->gi[i], &l.gi[i], sizeof(l.gi[i])));
	}
}

TEST(h200_balanced)
{
	/* mig-parted's "balanced": 2x 1g.18gb + 1x 2g.35gb + 1x 3g.71gb */
	static const unsigned int want[NP] = {
		[P1G] = 2, [P2G] = 1, [P3G] = 1,
	};
	static const struct gpuvirt_mig_create order[] = {
		{ P3G, 4, 0 }, { P2G, 0, 1 }, { P1G, 2, 2 }, { P1G, 3, 3 },
	};
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_plan p, again;
	struct gpuvirt_mig_why why;
	struct gpuvirt_mig_layout l;
	unsigned int i;

	table(_metadata, "h200-141gb", &t);
	ASSERT_EQ(0, plan(&t, NULL, 0, want, &p, &why)) TH_LOG("%s", why.msg);
	EXPECT_EQ(GPUVIRT_MIG_OK, why.reason);
	EXPECT_EQ(0U, p.nr_destroy);
	ASSERT_EQ(ARRAY_SIZE(order), p.nr_create);
	for (i = 0; i < p.nr_create; i++) {
		EXPECT_EQ(order[i].profile, p.create[i].profile);
		EXPECT_EQ(order[i].start, p.create[i].start);
		EXPECT_EQ(order[i].gi, p.create[i].gi);
	}
	gpuvirt_mig_layout_init(&l);
	replay(_metadata, &refs[3], &t, &l, 0, want, &p);
	/* the same answer every time */
	ASSERT_EQ(0, plan(&t, &l, 0, want, &again, &why));
	EXPECT_EQ(0, memcmp(&p, &again, sizeof(p)));

	/* created in the order largest first without starts, it would not fit */
	EXPECT_EQ(0, add(&t, &l, P3G, ANY, &why));
	EXPECT_EQ(1, add(&t, &l, P2G, ANY, &why));
	EXPECT_EQ(2, add(&t, &l, P1G, ANY, &why));
	EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_NO_START, 0,
		       "no free start for 1g.18gb (0-6): memory slot 0 is taken by GI 0 (3g.71gb)",
		       add(&t, &l, P1G, ANY, &why), &why);
}

TEST(impossible_sets_say_why)
{
	static const struct {
		unsigned int want[NP];
		int err;
		enum gpuvirt_mig_reason reason;
		int profile;
		const char *msg;
	} cases[] = {
		{ { [P1GME] = 2 }, -ENOSPC, GPUVIRT_MIG_ERR_MAX, P1GME,
		  "at most 1 of 1g.18gb+me (2 wanted)" },
		{ { [P1G] = 8 }, -ENOSPC, GPUVIRT_MIG_ERR_MAX, P1G,
		  "at most 7 of 1g.18gb (8 wanted)" },
		{ { [P1GW] = 5 }, -ENOSPC, GPUVIRT_MIG_ERR_MAX, P1GW,
		  "at most 4 of 1g.35gb (5 wanted)" },
		{ { [P7G] = 2 }, -ENOSPC, GPUVIRT_MIG_ERR_MAX, P7G,
		  "at most 1 of 7g.141gb (2 wanted)" },
		{ { [P1G] = 7, [P1GME] = 1 }, -ENOSPC, GPUVIRT_MIG_ERR_GIS, -1,
		  "at most 7 GIs (8 wanted)" },
		{ { [P3G] = 2, [P2G] = 1 }, -ENOSPC, GPUVIRT_MIG_ERR_SLICES, -1,
		  "the GIs need 8 compute slices (the GPU has 7)" },
		{ { [P7G] = 1, [P1G] = 1 }, -ENOSPC, GPUVIRT_MIG_ERR_SLICES, -1,
		  "the GIs need 8 compute slices (the GPU has 7)" },
		{ { [P4G] = 1, [P2G] = 2 }, -ENOSPC, GPUVIRT_MIG_ERR_SLICES, -1,
		  "the GIs need 8 compute slices (the GPU has 7)" },
		{ { [P1GW] = 4, [P1G] = 1 }, -ENOSPC, GPUVIRT_MIG_ERR_SLOTS, -1,
		  "the GIs need 9 memory slots (the GPU has 8)" },
		{ { [P4G] = 1, [P1GW] = 3 }, -ENOSPC, GPUVIRT_MIG_ERR_SLOTS, -1,
		  "the GIs need 10 memory slots (the GPU has 8)" },
		{ { [P3G] = 1, [P1GW] = 2, [P1G] = 1 }, -ENOSPC,
		  GPUVIRT_MIG_ERR_SLOTS, -1,
		  "the GIs need 9 memory slots (the GPU has 8)" },
	};
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_plan p;
	struct gpuvirt_mig_why why;
	unsigned int c;

	table(_metadata, "h200-141gb", &t);
	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		EXPECT_EQ(cases[c].err, plan(&t, NULL, 0, cases[c].want, &p,
					     &why)) TH_LOG("case %u", c);
		EXPECT_EQ(cases[c].reason, why.reason) TH_LOG("case %u", c);
		EXPECT_EQ(cases[c].profile, why.profile) TH_LOG("case %u", c);
		EXPECT_STREQ(cases[c].msg, why.msg);
		/* and the brute force agrees on the reason */
		EXPECT_EQ(cases[c].reason, brute_reason(&refs[3], cases[c].want));
	}
}

/*
 * Every wanted set of every model: counts from 0 to max + 1 per profile,
 * at most 8 GIs. Within max and 7 GIs, that is every set the rules could
 * allow; one over, the refusal reasons are checked too.
 */
TEST(exhaustive_planner_vs_brute_force)
{
	long long worst_all = 0, t_all = 0;
	unsigned int m;

	for (m = 0; m < ARRAY_SIZE(refs); m++) {
		const struct ref_model *r = &refs[m];
		unsigned int c[NP] = { 0 }, i, sum;
		unsigned int sets = 0, bounded = 0, yes = 0, by[16] = { 0 };
		unsigned int proved = 0;
		long long worst = 0, total = 0, bf = 0, t0, t1, dt;
		unsigned int worst_set[NP] = { 0 };
		struct gpuvirt_mig_table t;
		struct gpuvirt_mig_layout empty;
		struct gpuvirt_mig_plan p, again;
		struct gpuvirt_mig_why why;

		table(_metadata, r->model, &t);
		gpuvirt_mig_layout_init(&empty);
		for (;;) {
			enum gpuvirt_mig_reason want_reason;
			bool in_bounds = true, bf_yes;
			int ret, rep;

			for (i = 0, sum = 0; i < NP; i++) {
				sum += c[i];
				in_bounds &= c[i] <= r->p[i].max;
			}
			if (sum > 8)
				goto next;
			sets++;
			in_bounds &= sum <= 7;
			bounded += in_bounds;

			/*
			 * The brute force's yes or no: within the counts the
			 * rules set on profiles and GIs, does any assignment
			 * of starts fit? It enumerates them all to say no.
			 */
			t0 = now_ns();
			bf_yes = in_bounds && brute_fits(r, c, 0, 0);
			t1 = now_ns();
			bf += t1 - t0;
			proved += in_bounds && !bf_yes;
			want_reason = brute_reason(r, c);

			/* the fastest of 5 runs, to leave out preemption */
			dt = 0;
			for (rep = 0; rep < 5; rep++) {
				t0 = now_ns();
				ret = plan(&t, &empty, 0, c, &p, &why);
				t1 = now_ns();
				if (!rep || t1 - t0 < dt)
					dt = t1 - t0;
			}
			total += dt;
			if (dt > worst) {
				worst = dt;
				memcpy(worst_set, c, sizeof(c));
			}

			by[why.reason]++;
			ASSERT_EQ(bf_yes, ret == 0)
				TH_LOG("%s: %u %u %u %u %u %u %u: %s", r->model,
				       c[0], c[1], c[2], c[3], c[4], c[5], c[6],
				       why.msg);
			ASSERT_EQ(want_reason, why.reason)
				TH_LOG("%s: %u %u %u %u %u %u %u: %s", r->model,
				       c[0], c[1], c[2], c[3], c[4], c[5], c[6],
				       why.msg);
			if (want_reason != GPUVIRT_MIG_OK) {
				ASSERT_EQ(-ENOSPC, ret);
				ASSERT_NE(0, why.msg[0]);
				goto next;
			}
			ASSERT_EQ(0, ret);
			yes++;
			ASSERT_EQ(0U, p.nr_destroy);
			replay(_metadata, r, &t, &empty, 0, c, &p);
			/* largest first */
			for (i = 1; i < p.nr_create; i++) {
				const struct ref_profile *a =
					&r->p[p.create[i - 1].profile];
				const struct ref_profile *b =
					&r->p[p.create[i].profile];

				ASSERT_TRUE(a->slots > b->slots ||
					    (a->slots == b->slots &&
					     a->g >= b->g));
			}
			/* deterministic */
			ASSERT_EQ(0, plan(&t, NULL, 0, c, &again, NULL));
			ASSERT_EQ(0, memcmp(&p, &again, sizeof(p)));
next:
			for (i = 0; i < NP; i++) {
				if (++c[i] <= r->p[i].max + 1)
					break;
				c[i] = 0;
			}
			if (i == NP)
				break;
		}
		TH_LOG("%s: %u sets, %u within max and 7 GIs: %u planned, %u impossible",
		       r->model, sets, bounded, yes, proved);
		TH_LOG("%s: refused: max %u, GIs %u, slices %u, slots %u, fragmentation %u",
		       r->model, by[GPUVIRT_MIG_ERR_MAX],
		       by[GPUVIRT_MIG_ERR_GIS], by[GPUVIRT_MIG_ERR_SLICES],
		       by[GPUVIRT_MIG_ERR_SLOTS], by[GPUVIRT_MIG_ERR_FRAGMENT]);
		TH_LOG("%s: planner %lld us in all, worst %lld ns (set %u %u %u %u %u %u %u)",
		       r->model, total / 1000, worst, worst_set[0], worst_set[1],
		       worst_set[2], worst_set[3], worst_set[4], worst_set[5],
		       worst_set[6]);
		TH_LOG("%s: brute force %lld ms", r->model, bf / 1000000);
		EXPECT_EQ(bounded, yes + proved);
		EXPECT_EQ(sets, by[GPUVIRT_MIG_OK] + by[GPUVIRT_MIG_ERR_MAX] +
			  by[GPUVIRT_MIG_ERR_GIS] + by[GPUVIRT_MIG_ERR_SLICES] +
			  by[GPUVIRT_MIG_ERR_SLOTS] +
			  by[GPUVIRT_MIG_ERR_FRAGMENT]);
		if (worst > worst_all)
			worst_all = worst;
		t_all += total;
	}
	TH_LOG("all models: planner worst case %lld ns for one set, %lld us in all",
	       worst_all, t_all / 1000);
	/* fast: well under a millisecond for any one set */
	EXPECT_LT(worst_all, 1000000LL);
}

/* ---- re-partitioning around busy GIs ---------------------------------- */

/* Build a layout from (profile, start) pairs; ids in order. */
static void mk(struct __test_metadata *_metadata,
	       const struct gpuvirt_mig_table *t, struct gpuvirt_mig_layout *l,
	       const int (*gis)[2], unsigned int n)
{
	struct gpuvirt_mig_why why;
	unsigned int i;

	gpuvirt_mig_layout_init(l);
	for (i = 0; i < n; i++)
		ASSERT_EQ((int)i, add(t, l, gis[i][0], gis[i][1], &why))
			TH_LOG("%s", why.msg);
}

TEST(repartition)
{
	static const unsigned int balanced[NP] = {
		[P1G] = 2, [P2G] = 1, [P3G] = 1,
	};
	static const int whole[][2] = { { P7G, 0 } };
	static const int bal[][2] = {
		{ P3G, 4 }, { P2G, 0 }, { P1G, 2 }, { P1G, 3 },
	};
	static const int one_at_4[][2] = { { P1G, 4 } };
	static const int ones_1_5[][2] = { { P1G, 1 }, { P1G, 5 } };
	static const int ones_2_6[][2] = { { P1G, 2 }, { P1G, 6 } };
	static const int ones_0_1[][2] = { { P1G, 0 }, { P1G, 1 } };
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_layout l;
	struct gpuvirt_mig_plan p;
	struct gpuvirt_mig_why why;

	table(_metadata, "h200-141gb", &t);

	/* an idle 7g goes, and the balanced set comes */
	mk(_metadata, &t, &l, whole, 1);
	ASSERT_EQ(0, plan(&t, &l, 0, balanced, &p, &why));
	EXPECT_EQ(1U, p.nr_destroy);
	EXPECT_EQ(0, p.destroy[0]);
	EXPECT_EQ(4U, p.nr_create);
	EXPECT_EQ(P3G, p.create[0].profile);
	EXPECT_EQ(4, p.create[0].start);
	EXPECT_EQ(0, p.create[0].gi);
	replay(_metadata, &refs[3], &t, &l, 0, balanced, &p);

	/* a busy 7g cannot go */
	EXPECT_REFUSED(-EBUSY, GPUVIRT_MIG_ERR_BUSY, 0,
		       "GI 0 (7g.141gb) is busy and not wanted",
		       plan(&t, &l, 1, balanced, &p, &why), &why);

	/* the same set again: nothing to do */
	mk(_metadata, &t, &l, bal, 4);
	ASSERT_EQ(0, plan(&t, &l, 0, balanced, &p, &why));
	EXPECT_EQ(0U, p.nr_destroy);
	EXPECT_EQ(0U, p.nr_create);
	EXPECT_EQ(0, memcmp(&l, &p.layout, sizeof(l)));

	/*
	 * From balanced, GI 2 (1g at 2) busy, to 1g + 1g.35gb + 3g: the 3g
	 * stays, the 2g and the other 1g go, the 1g.35gb takes slots 0-1.
	 */
	{
		static const unsigned int want[NP] = {
			[P1G] = 1, [P1GW] = 1, [P3G] = 1,
		};

		ASSERT_EQ(0, plan(&t, &l, 1 << 2, want, &p, &why))
			TH_LOG("%s", why.msg);
		EXPECT_EQ(2U, p.nr_destroy);
		EXPECT_EQ(1, p.destroy[0]);
		EXPECT_EQ(3, p.destroy[1]);
		ASSERT_EQ(1U, p.nr_create);
		EXPECT_EQ(P1GW, p.create[0].profile);
		EXPECT_EQ(0, p.create[0].start);
		EXPECT_EQ(1, p.create[0].gi);
		replay(_metadata, &refs[3], &t, &l, 1 << 2, want, &p);
	}

	/* the counts are checked before the busy GIs */
	{
		static const unsigned int want[NP] = {
			[P1G] = 1, [P4G] = 1, [P3G] = 1,
		};

		EXPECT_REFUSED(-ENOSPC, GPUVIRT_MIG_ERR_SLICES, -1,
			       "the GIs need 8 compute slices (the GPU has 7)",
			       plan(&t, &l, 1 << 0 | 1 << 2, want, &p, &why),
			       &why);
	}

	/* a busy 1g at slot 4: the balanced set fits an empty GPU only */
	mk(_metadata, &t, &l, one_at_4, 1);
	EXPECT_REFUSED(-EBUSY, GPUVIRT_MIG_ERR_BUSY_PLACE, 0,
		       "busy GI 0 (1g.18gb) leaves no room for the wanted GIs together",
		       plan(&t, &l, 1, balanced, &p, &why), &why);
	/* idle, it moves */
	ASSERT_EQ(0, plan(&t, &l, 0, balanced, &p, &why));
	EXPECT_EQ(1U, p.nr_destroy);
	replay(_metadata, &refs[3], &t, &l, 0, balanced, &p);

	/* busy 1g at 1 and 5: no start of a 3g is free */
	{
		static const unsigned int want[NP] = { [P1G] = 2, [P3G] = 1 };

		mk(_metadata, &t, &l, ones_1_5, 2);
		EXPECT_REFUSED(-EBUSY, GPUVIRT_MIG_ERR_BUSY_PLACE, 0,
			       "busy GI 0 (1g.18gb) leaves no room for 3g.71gb",
			       plan(&t, &l, 3, want, &p, &why), &why);
		EXPECT_EQ(P3G, why.profile);
		/* with GI 1 idle, GI 1 moves: the 3g takes 4-7 */
		ASSERT_EQ(0, plan(&t, &l, 1, want, &p, &why));
		EXPECT_EQ(1U, p.nr_destroy);
		EXPECT_EQ(1, p.destroy[0]);
		replay(_metadata, &refs[3], &t, &l, 1, want, &p);
		EXPECT_EQ(4, p.layout.gi[1].start);
		EXPECT_EQ(P3G, p.layout.gi[1].profile);
	}

	/* busy 1g at 2 and 6: room for two 1g.35gb, not three */
	{
		static const unsigned int want[NP] = { [P1G] = 2, [P1GW] = 3 };

		mk(_metadata, &t, &l, ones_2_6, 2);
		EXPECT_REFUSED(-EBUSY, GPUVIRT_MIG_ERR_BUSY_PLACE, 0,
			       "busy GI 0 (1g.18gb) leaves no room for 3 of 1g.35gb",
			       plan(&t, &l, 3, want, &p, &why), &why);
		ASSERT_EQ(0, plan(&t, NULL, 0, want, &p, &why));
	}

	/* two idle 1g, one wanted with a 3g: on the tie the higher id goes */
	{
		static const unsigned int want[NP] = { [P1G] = 1, [P3G] = 1 };

		mk(_metadata, &t, &l, ones_0_1, 2);
		ASSERT_EQ(0, plan(&t, &l, 0, want, &p, &why));
		EXPECT_EQ(1U, p.nr_destroy);
		EXPECT_EQ(1, p.destroy[0]);
		ASSERT_EQ(1U, p.nr_create);
		EXPECT_EQ(P3G, p.create[0].profile);
		EXPECT_EQ(4, p.create[0].start);
		EXPECT_EQ(1, p.create[0].gi);
		replay(_metadata, &refs[3], &t, &l, 0, want, &p);
	}
	/* with a 4g instead, whichever 1g stays blocks it: both go */
	{
		static const unsigned int want[NP] = { [P1G] = 1, [P4G] = 1 };

		ASSERT_EQ(0, plan(&t, &l, 0, want, &p, &why));
		EXPECT_EQ(2U, p.nr_destroy);
		ASSERT_EQ(2U, p.nr_create);
		EXPECT_EQ(P4G, p.create[0].profile);
		EXPECT_EQ(0, p.create[0].start);
		EXPECT_EQ(P1G, p.create[1].profile);
		EXPECT_EQ(4, p.create[1].start);
		replay(_metadata, &refs[3], &t, &l, 0, want, &p);
		/* and a busy one cannot stay */
		EXPECT_REFUSED(-EBUSY, GPUVIRT_MIG_ERR_BUSY_PLACE, 1,
			       "busy GI 1 (1g.18gb) leaves no room for 4g.71gb",
			       plan(&t, &l, 2, want, &p, &why), &why);
	}
	{
		static const unsigned int want[NP] = { [P1G] = 1 };

		EXPECT_REFUSED(-EBUSY, GPUVIRT_MIG_ERR_BUSY, 1,
			       "GI 1 (1g.18gb) is busy and only 1 of 1g.18gb is wanted",
			       plan(&t, &l, 3, want, &p, &why), &why);
		EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_GI, 2,
			       "busy GI 2 does not exist",
			       plan(&t, &l, 4, want, &p, &why), &why);
		EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_GI, 7,
			       "busy GI 7 does not exist",
			       plan(&t, &l, 0x80, want, &p, &why), &why);
		EXPECT_REFUSED(-EINVAL, GPUVIRT_MIG_ERR_GI, 0,
			       "busy GI 0 does not exist",
			       plan(&t, NULL, 1, want, &p, &why), &why);
	}
}

/*
 * Re-partitions of random layouts with random busy GIs to random wanted
 * sets (a fixed seed: the same cases every run), against a brute force
 * that tries every set of idle GIs to keep and every placement of the
 * rest: the planner must succeed exactly when some placement exists, and
 * destroy exactly the fewest GIs that any plan must.
 */
#define RANDOM_CASES	100000U

static unsigned int rnd_state = 12345;

static unsigned int rnd(unsigned int n)
{
	rnd_state = rnd_state * 1103515245U + 12345U;
	return (rnd_state >> 16) % n;
}

/*
 * A random layout (random adds, some removed again), busy GIs, and a
 * wanted set: often the busy GIs' profiles, plus up to 4 more GIs.
 */
static void random_case(const struct gpuvirt_mig_table *t,
			struct gpuvirt_mig_layout *l, unsigned int *busy,
			unsigned int *want)
{
	unsigned int i;

	gpuvirt_mig_layout_init(l);
	for (i = rnd(10); i > 0; i--) {
		unsigned int prof = rnd(NP);
		int start = rnd(3) ? ANY : (int)rnd(8);

		add(t, l, prof, start, NULL);
	}
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++)
		if (l->gi[i].used && !rnd(4))
			gpuvirt_mig_gi_remove(l, i);
	*busy = 0;
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++)
		if (l->gi[i].used && !rnd(3))
			*busy |= 1U << i;
	memset(want, 0, NP * sizeof(*want));
	if (rnd(4))
		for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++)
			if (*busy & (1U << i))
				want[l->gi[i].profile]++;
	for (i = rnd(5); i > 0; i--)
		want[rnd(NP)]++;
}

/*
 * Keep the busy GIs of @l and the idle ones in @keep, and place the rest
 * of @want around them: does some assignment of starts fit?
 */
static bool brute_fits_keeping(const struct ref_model *r,
			       const struct gpuvirt_mig_layout *l,
			       unsigned int keep, const unsigned int *want)
{
	unsigned int left[NP], mem = 0, sm = 0, i;

	memcpy(left, want, sizeof(left));
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct gpuvirt_mig_gi *gi = &l->gi[i];

		if (!(keep & (1U << i)))
			continue;
		if (!left[gi->profile])
			return false;
		left[gi->profile]--;
		mem |= ref_mem(&r->p[gi->profile], gi->start);
		sm |= ref_sm(&r->p[gi->profile], gi->start);
	}
	return brute_fits(r, left, mem, sm);
}

/*
 * What the rules say of a re-partition, in the planner's order: the
 * counts, then a busy GI not wanted, then a placement around the busy GIs
 * (with any idle GIs kept); when there is none, the busy GIs are to blame
 * unless an empty GPU could not hold the set either. *@destroy gets the
 * fewest idle GIs any plan destroys.
 */
static enum gpuvirt_mig_reason brute_repartition(const struct ref_model *r,
						 const struct gpuvirt_mig_layout *l,
						 unsigned int busy,
						 const unsigned int *want,
						 unsigned int *destroy)
{
	enum gpuvirt_mig_reason fresh = brute_reason(r, want);
	unsigned int have[NP] = { 0 }, idle = 0, keep, i;
	int best = -1;

	if (fresh != GPUVIRT_MIG_OK && fresh != GPUVIRT_MIG_ERR_FRAGMENT)
		return fresh;
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		if (!l->gi[i].used)
			continue;
		if (!(busy & (1U << i)))
			idle |= 1U << i;
		else if (++have[l->gi[i].profile] > want[l->gi[i].profile])
			return GPUVIRT_MIG_ERR_BUSY;
	}
	for (keep = 0; keep < 128; keep++) {
		int k = __builtin_popcount(idle) - __builtin_popcount(keep);

		if ((keep & ~idle) || (best >= 0 && k >= best))
			continue;
		if (brute_fits_keeping(r, l, busy | keep, want))
			best = k;
	}
	if (best < 0)
		return fresh == GPUVIRT_MIG_OK ? GPUVIRT_MIG_ERR_BUSY_PLACE :
						 GPUVIRT_MIG_ERR_FRAGMENT;
	*destroy = best;
	return GPUVIRT_MIG_OK;
}

TEST(repartition_random_vs_brute_force)
{
	unsigned int m, n;

	for (m = 0; m < ARRAY_SIZE(refs); m++) {
		const struct ref_model *r = &refs[m];
		struct gpuvirt_mig_table t;
		unsigned int by[16] = { 0 };

		table(_metadata, r->model, &t);
		for (n = 0; n < RANDOM_CASES; n++) {
			unsigned int want[NP], busy, destroy = 0;
			enum gpuvirt_mig_reason expect;
			struct gpuvirt_mig_layout l;
			struct gpuvirt_mig_plan p;
			struct gpuvirt_mig_why why;
			int ret;

			random_case(&t, &l, &busy, want);
			ASSERT_TRUE(ref_valid(r, &l));
			expect = brute_repartition(r, &l, busy, want, &destroy);
			ret = plan(&t, &l, busy, want, &p, &why);
			by[why.reason]++;
			ASSERT_EQ(expect, why.reason)
				TH_LOG("%s case %u: %s", r->model, n, why.msg);
			if (expect != GPUVIRT_MIG_OK) {
				ASSERT_NE(0, ret);
				ASSERT_NE(0, why.msg[0]);
				continue;
			}
			ASSERT_EQ(0, ret);
			ASSERT_EQ(destroy, p.nr_destroy)
				TH_LOG("%s case %u", r->model, n);
			replay(_metadata, r, &t, &l, busy, want, &p);
		}
		TH_LOG("%s: %u re-partitions, %u planned",
		       r->model, RANDOM_CASES, by[GPUVIRT_MIG_OK]);
		TH_LOG("%s: refused: counts %u, busy not wanted %u, busy in the way %u",
		       r->model,
		       by[GPUVIRT_MIG_ERR_MAX] + by[GPUVIRT_MIG_ERR_GIS] +
		       by[GPUVIRT_MIG_ERR_SLICES] + by[GPUVIRT_MIG_ERR_SLOTS],
		       by[GPUVIRT_MIG_ERR_BUSY], by[GPUVIRT_MIG_ERR_BUSY_PLACE]);
		/* every kind of answer was reached */
		EXPECT_GT(by[GPUVIRT_MIG_OK], 10000U);
		EXPECT_GT(by[GPUVIRT_MIG_ERR_BUSY], 1000U);
		EXPECT_GT(by[GPUVIRT_MIG_ERR_BUSY_PLACE], 500U);
	}
}

TEST_HARNESS_MAIN

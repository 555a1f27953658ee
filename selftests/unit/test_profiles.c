// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the vGPU type tables (kernel/core/profiles.c), built in
 * userspace: the C series of every model against REFERENCE.md, the other
 * series, names and descriptions, custom GPUs and lookup.
 */
#include <stdio.h>

#include "kselftest_harness.h"

#include "core/profiles.h"

struct want {
	const char *name;
	unsigned int gb, max, mixed;
};

static const struct want a100_40_c[] = {
	{ "A100-40C", 40, 1, 1 }, { "A100-20C", 20, 2, 2 },
	{ "A100-10C", 10, 4, 4 }, { "A100-8C", 8, 5, 4 },
	{ "A100-5C", 5, 8, 8 }, { "A100-4C", 4, 10, 8 },
};

static const struct want a100_80_c[] = {
	{ "A100D-80C", 80, 1, 1 }, { "A100D-40C", 40, 2, 2 },
	{ "A100D-20C", 20, 4, 4 }, { "A100D-16C", 16, 5, 4 },
	{ "A100D-10C", 10, 8, 8 }, { "A100D-8C", 8, 10, 8 },
	{ "A100D-4C", 4, 20, 16 },
};

static const struct want h100_c[] = {
	{ "H100-80C", 80, 1, 1 }, { "H100-40C", 40, 2, 2 },
	{ "H100-20C", 20, 4, 4 }, { "H100-16C", 16, 5, 4 },
	{ "H100-10C", 10, 8, 8 }, { "H100-8C", 8, 10, 8 },
	{ "H100-4C", 4, 20, 16 },
};

static const struct want h200_c[] = {
	{ "H200-141C", 141, 1, 1 }, { "H200-70C", 70, 2, 2 },
	{ "H200-35C", 35, 4, 4 }, { "H200-28C", 28, 5, 4 },
	{ "H200-17C", 17, 8, 8 }, { "H200-14C", 14, 10, 8 },
	{ "H200-8C", 8, 16, 16 }, { "H200-7C", 7, 20, 16 },
	{ "H200-4C", 4, 32, 32 },
};

static const struct {
	const char *model;
	const struct want *c;
	unsigned int nc;
	unsigned int total;
} models[] = {
	{ "a100-40gb", a100_40_c, ARRAY_SIZE(a100_40_c), 6 + 6 + 3 + 2 },
	{ "a100-80gb", a100_80_c, ARRAY_SIZE(a100_80_c), 7 + 7 + 2 + 2 },
	{ "h100-80gb", h100_c, ARRAY_SIZE(h100_c), 7 + 7 + 2 + 2 },
	{ "h200-141gb", h200_c, ARRAY_SIZE(h200_c), 9 + 9 + 3 + 2 },
};

static int build(const char *model, struct gpuvirt_profile *t)
{
	const struct gpuvirt_model *m = gpuvirt_catalogue_find(model);

	if (!m)
		return -1;
	return gpuvirt_profiles_build(m, 0, t, GPUVIRT_PROFILES_MAX);
}

static unsigned int count_series(const struct gpuvirt_profile *t, int n,
				 enum gpuvirt_series s)
{
	unsigned int c = 0;
	int i;

	for (i = 0; i < n; i++)
		c += t[i].series == s;
	return c;
}

TEST(c_series_matches_reference)
{
	struct gpuvirt_profile t[GPUVIRT_PROFILES_MAX];
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(models); i++) {
		int n = build(models[i].model, t);

		ASSERT_EQ((int)models[i].total, n) TH_LOG("%s", models[i].model);
		EXPECT_EQ(models[i].nc, count_series(t, n, GPUVIRT_SERIES_C));
		/* C series first, largest first, exactly the reference rows */
		for (j = 0; j < models[i].nc; j++) {
			const struct want *w = &models[i].c[j];

			EXPECT_STREQ(w->name, t[j].name);
			EXPECT_EQ(GPUVIRT_SERIES_C, t[j].series);
			EXPECT_EQ((u64)w->gb << 30, t[j].fb_size);
			EXPECT_EQ(w->max, t[j].max_instances) TH_LOG("%s", w->name);
			EXPECT_EQ(w->mixed, t[j].mixed_max_instances)
				TH_LOG("%s", w->name);
		}
	}
}

TEST(a100_40_mixed_size_reference)
{
	struct gpuvirt_profile t[GPUVIRT_PROFILES_MAX];
	int n = build("a100-40gb", t);
	const struct gpuvirt_profile *p;

	p = gpuvirt_profile_find(t, n, "A100-8C");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(5U, p->max_instances);
	EXPECT_EQ(4U, p->mixed_max_instances);
	p = gpuvirt_profile_find(t, n, "A100-4C");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(10U, p->max_instances);
	EXPECT_EQ(8U, p->mixed_max_instances);
}

/* Q mirrors C, A is C up to 8 GB, B is 2B and 1B capped at 32. */
TEST(other_series)
{
	struct gpuvirt_profile t[GPUVIRT_PROFILES_MAX];
	unsigned int i, j;
	char name[GPUVIRT_PROFILE_NAME_MAX];

	for (i = 0; i < ARRAY_SIZE(models); i++) {
		const struct gpuvirt_model *m =
			gpuvirt_catalogue_find(models[i].model);
		int n = build(models[i].model, t);
		unsigned int na = 0;

		ASSERT_GT(n, 0);
		EXPECT_EQ(models[i].nc, count_series(t, n, GPUVIRT_SERIES_Q));
		for (j = 0; j < models[i].nc; j++) {
			const struct want *w = &models[i].c[j];
			const struct gpuvirt_profile *q, *a;

			snprintf(name, sizeof(name), "%s-%uQ",
				 m->profile_prefix, w->gb);
			q = gpuvirt_profile_find(t, n, name);
			ASSERT_NE(NULL, q) TH_LOG("%s", name);
			EXPECT_EQ(GPUVIRT_SERIES_Q, q->series);
			EXPECT_EQ((u64)w->gb << 30, q->fb_size);
			EXPECT_EQ(w->max, q->max_instances);
			EXPECT_EQ(w->mixed, q->mixed_max_instances);

			snprintf(name, sizeof(name), "%s-%uA",
				 m->profile_prefix, w->gb);
			a = gpuvirt_profile_find(t, n, name);
			if (w->gb > 8) {
				EXPECT_EQ(NULL, a) TH_LOG("%s", name);
				continue;
			}
			na++;
			ASSERT_NE(NULL, a) TH_LOG("%s", name);
			EXPECT_EQ(GPUVIRT_SERIES_A, a->series);
			EXPECT_EQ(w->max, a->max_instances);
		}
		EXPECT_EQ(na, count_series(t, n, GPUVIRT_SERIES_A));
		EXPECT_EQ(2U, count_series(t, n, GPUVIRT_SERIES_B));
		for (j = 1; j <= 2; j++) {
			const struct gpuvirt_profile *b;
			u64 fit = m->vram_size / ((u64)j << 30);

			snprintf(name, sizeof(name), "%s-%uB",
				 m->profile_prefix, j);
			b = gpuvirt_profile_find(t, n, name);
			ASSERT_NE(NULL, b) TH_LOG("%s", name);
			EXPECT_EQ(GPUVIRT_SERIES_B, b->series);
			EXPECT_EQ(fit < 32 ? fit : 32, (u64)b->max_instances);
		}
	}
	/* spot checks */
	build("a100-40gb", t);
	EXPECT_EQ(20U, gpuvirt_profile_find(t, 17, "A100-2B")->max_instances);
	EXPECT_EQ(16U,
		  gpuvirt_profile_find(t, 17, "A100-2B")->mixed_max_instances);
	EXPECT_EQ(32U, gpuvirt_profile_find(t, 17, "A100-1B")->max_instances);
	build("h200-141gb", t);
	EXPECT_EQ(32U, gpuvirt_profile_find(t, 23, "H200-2B")->max_instances);
	EXPECT_EQ(20U, gpuvirt_profile_find(t, 23, "H200-7A")->max_instances);
	EXPECT_EQ(NULL, gpuvirt_profile_find(t, 23, "H200-14A"));
}

static const char *letters = "QBAC";

static void expect_description(struct __test_metadata *_metadata,
			       const struct gpuvirt_profile *p)
{
	char want[GPUVIRT_PROFILE_DESC_MAX];
	static const struct {
		unsigned int heads, frl, w, h;
	} d[] = {
		[GPUVIRT_SERIES_Q] = { 4, 60, 7680, 4320 },
		[GPUVIRT_SERIES_B] = { 4, 45, 5120, 2880 },
		[GPUVIRT_SERIES_A] = { 1, 60, 1280, 1024 },
		[GPUVIRT_SERIES_C] = { 1, 60, 4096, 2160 },
	};

	snprintf(want, sizeof(want),
		 "num_heads=%u, frl_config=%u, framebuffer=%lluM, max_resolution=%ux%u, max_instance=%u, series=%c",
		 d[p->series].heads, d[p->series].frl,
		 (unsigned long long)(p->fb_size >> 20), d[p->series].w,
		 d[p->series].h, p->max_instances, letters[p->series]);
	EXPECT_STREQ(want, p->description);
	/* the fields the vGPU's display enforces say the same */
	EXPECT_EQ(d[p->series].heads, p->heads) TH_LOG("%s", p->name);
	EXPECT_EQ(d[p->series].frl, p->frl) TH_LOG("%s", p->name);
	EXPECT_EQ(d[p->series].w, p->max_width) TH_LOG("%s", p->name);
	EXPECT_EQ(d[p->series].h, p->max_height) TH_LOG("%s", p->name);
}

/* A few descriptions written out in full. */
static const struct {
	const char *name, *desc;
} literal[] = {
	{ "H200-35C",
	  "num_heads=1, frl_config=60, framebuffer=35840M, max_resolution=4096x2160, max_instance=4, series=C",
	},
	{ "H200-2B",
	  "num_heads=4, frl_config=45, framebuffer=2048M, max_resolution=5120x2880, max_instance=32, series=B",
	},
	{ "H200-141Q",
	  "num_heads=4, frl_config=60, framebuffer=144384M, max_resolution=7680x4320, max_instance=1, series=Q",
	},
	{ "H200-8A",
	  "num_heads=1, frl_config=60, framebuffer=8192M, max_resolution=1280x1024, max_instance=16, series=A",
	},
};

TEST(names_and_descriptions)
{
	struct gpuvirt_profile t[GPUVIRT_PROFILES_MAX];
	unsigned int i;
	int j, k, n;

	for (i = 0; i < ARRAY_SIZE(models); i++) {
		const struct gpuvirt_model *m =
			gpuvirt_catalogue_find(models[i].model);
		char want[GPUVIRT_PROFILE_NAME_MAX];

		n = build(models[i].model, t);
		ASSERT_GT(n, 0);
		for (j = 0; j < n; j++) {
			snprintf(want, sizeof(want), "%s-%llu%c",
				 m->profile_prefix,
				 (unsigned long long)(t[j].fb_size >> 30),
				 letters[t[j].series]);
			EXPECT_STREQ(want, t[j].name);
			EXPECT_EQ(letters[t[j].series],
				  gpuvirt_profile_series_letter(t[j].series));
			EXPECT_EQ(0ULL, t[j].fb_size % (1ULL << 30));
			expect_description(_metadata, &t[j]);
			/* every instance fits in homogeneous mode */
			EXPECT_LE(t[j].fb_size * t[j].max_instances,
				  m->vram_size) TH_LOG("%s", t[j].name);
			/* mixed max: the max rounded down to a power of two */
			EXPECT_LE(t[j].mixed_max_instances, t[j].max_instances);
			EXPECT_GT(2 * t[j].mixed_max_instances,
				  t[j].max_instances);
			EXPECT_EQ(0U, t[j].mixed_max_instances &
				  (t[j].mixed_max_instances - 1));
			for (k = 0; k < j; k++)
				EXPECT_STRNE(t[k].name, t[j].name);
		}
	}
	build("h200-141gb", t);
	for (i = 0; i < ARRAY_SIZE(literal); i++)
		EXPECT_STREQ(literal[i].desc,
			     gpuvirt_profile_find(t, 23, literal[i].name)->description);
	EXPECT_EQ('?', gpuvirt_profile_series_letter(7));
}

struct custom_case {
	unsigned long long vram;
	unsigned int count;		/* per series */
	unsigned int gb[6];		/* C sizes, largest first */
};

static const struct custom_case custom_cases[] = {
	{ 512ULL << 20, 0, { 0 } },
	{ 1023ULL << 20, 0, { 0 } },
	{ 1ULL << 30, 1, { 1 } },
	{ 1536ULL << 20, 1, { 1 } },
	{ 12ULL << 30, 4, { 12, 6, 3, 1 } },
	{ (24ULL << 30) + (700ULL << 20), 5, { 24, 12, 6, 3, 1 } },
	{ 100ULL << 30, 6, { 100, 50, 25, 12, 6, 3 } },
	{ 1ULL << 40, 6, { 1024, 512, 256, 128, 64, 32 } },
};

TEST(custom_generation)
{
	struct gpuvirt_profile t[GPUVIRT_PROFILES_MAX];
	char want[GPUVIRT_PROFILE_NAME_MAX];
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(custom_cases); i++) {
		const struct custom_case *c = &custom_cases[i];
		int n = gpuvirt_profiles_build(NULL, c->vram, t,
					       GPUVIRT_PROFILES_MAX);

		ASSERT_EQ((int)(2 * c->count), n) TH_LOG("vram %llu", c->vram);
		for (j = 0; j < c->count; j++) {
			const struct gpuvirt_profile *cp = &t[j];
			const struct gpuvirt_profile *qp = &t[c->count + j];

			snprintf(want, sizeof(want), "CUSTOM-%uC", c->gb[j]);
			EXPECT_STREQ(want, cp->name);
			EXPECT_EQ(GPUVIRT_SERIES_C, cp->series);
			snprintf(want, sizeof(want), "CUSTOM-%uQ", c->gb[j]);
			EXPECT_STREQ(want, qp->name);
			EXPECT_EQ(GPUVIRT_SERIES_Q, qp->series);
			EXPECT_EQ((u64)c->gb[j] << 30, cp->fb_size);
			EXPECT_EQ(1U << j, cp->max_instances);
			EXPECT_EQ(1U << j, cp->mixed_max_instances);
			EXPECT_EQ(1U << j, qp->max_instances);
			EXPECT_LE(cp->fb_size * cp->max_instances, c->vram);
			expect_description(_metadata, cp);
			expect_description(_metadata, qp);
		}
	}
	EXPECT_STREQ("CUSTOM-1024C", t[0].name);
}

/* A catalogue model with no table of its own gets generated profiles. */
TEST(unknown_model_falls_back)
{
	static const struct gpuvirt_model m = {
		.name = "l40s-48gb", .profile_prefix = "L40S",
		.vram_size = 48ULL << 30, .engines = 1,
	};
	struct gpuvirt_profile t[GPUVIRT_PROFILES_MAX];
	int n = gpuvirt_profiles_build(&m, 0, t, GPUVIRT_PROFILES_MAX);

	ASSERT_EQ(12, n);
	EXPECT_STREQ("L40S-48C", t[0].name);
	EXPECT_STREQ("L40S-1C", t[5].name);
	EXPECT_EQ(32U, t[5].max_instances);
	EXPECT_STREQ("L40S-48Q", t[6].name);
}

TEST(output_too_small)
{
	struct gpuvirt_profile t[GPUVIRT_PROFILES_MAX];
	const struct gpuvirt_model *m = gpuvirt_catalogue_find("h200-141gb");

	EXPECT_EQ(-ENOSPC, gpuvirt_profiles_build(m, 0, t, 22));
	EXPECT_EQ(23, gpuvirt_profiles_build(m, 0, t, 23));
	EXPECT_EQ(-ENOSPC, gpuvirt_profiles_build(NULL, 12ULL << 30, t, 7));
	EXPECT_EQ(8, gpuvirt_profiles_build(NULL, 12ULL << 30, t, 8));
	EXPECT_EQ(0, gpuvirt_profiles_build(NULL, 512ULL << 20, t, 0));
}

TEST(find_by_name)
{
	struct gpuvirt_profile t[GPUVIRT_PROFILES_MAX];
	int n = build("h200-141gb", t), i;

	for (i = 0; i < n; i++)
		EXPECT_EQ(&t[i], gpuvirt_profile_find(t, n, t[i].name));
	EXPECT_EQ(NULL, gpuvirt_profile_find(t, n, "h200-35c"));
	EXPECT_EQ(NULL, gpuvirt_profile_find(t, n, "H200-35"));
	EXPECT_EQ(NULL, gpuvirt_profile_find(t, n, "H200-35C "));
	EXPECT_EQ(NULL, gpuvirt_profile_find(t, n, "A100-40C"));
	EXPECT_EQ(NULL, gpuvirt_profile_find(t, n, ""));
	/* only the first count entries are searched */
	EXPECT_EQ(NULL, gpuvirt_profile_find(t, 1, "H200-70C"));
	EXPECT_EQ(&t[1], gpuvirt_profile_find(t, 2, "H200-70C"));
}

TEST_HARNESS_MAIN

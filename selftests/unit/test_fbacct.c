// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the framebuffer accounting (kernel/core/fbacct.c), built in
 * userspace: scripted place/release sequences with the expected
 * available_instances after each step, the homogeneous rule, mixed-size
 * numbers, and randomised sequences that check that no two vGPUs overlap
 * and that available_instances is exact.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kselftest_harness.h"

#include "core/fbacct.h"

#define GB(x)	((u64)(x) << 30)
#define MB(x)	((u64)(x) << 20)

struct gpu {
	struct gpuvirt_profile t[GPUVIRT_PROFILES_MAX];
	int n;
	u64 vram;
	const char *prefix;
};

static void gpu_model(struct gpu *g, const char *model)
{
	const struct gpuvirt_model *m = gpuvirt_catalogue_find(model);

	g->n = gpuvirt_profiles_build(m, 0, g->t, GPUVIRT_PROFILES_MAX);
	g->vram = m->vram_size;
	g->prefix = m->profile_prefix;
}

static void gpu_custom(struct gpu *g, u64 vram)
{
	g->n = gpuvirt_profiles_build(NULL, vram, g->t, GPUVIRT_PROFILES_MAX);
	g->vram = vram;
	g->prefix = GPUVIRT_PROFILE_CUSTOM_PREFIX;
}

/* Profile by its name without the prefix, e.g. "8C". */
static const struct gpuvirt_profile *prof(const struct gpu *g, const char *s)
{
	char name[GPUVIRT_PROFILE_NAME_MAX];

	snprintf(name, sizeof(name), "%s-%s", g->prefix, s);
	return gpuvirt_profile_find(g->t, g->n, name);
}

/*
 * One step of a script. Ops: 'P' place @p (expect @ret and, on success, the
 * offset @mb in MiB), 'R' release the vGPU at @mb MiB (expect @ret), 'M'
 * and 'H' switch to mixed-size or homogeneous mode (expect @ret). Then
 * every "TYPE=N" in @avail must hold.
 */
struct step {
	char op;
	const char *p;
	int ret;
	u64 mb;
	const char *avail;
};

struct script {
	const char *model;
	const struct step *steps;
	unsigned int n;
};

static const struct step a100_homogeneous[] = {
	{ 'P', "10C", 0, 0, "10C=3 20C=0 40C=0 4C=0 10Q=0 1B=0" },
	{ 'P', "10C", 0, 10240, "10C=2" },
	/* homogeneous rule: another type while a vGPU exists */
	{ 'P', "20C", -EBUSY, 0, "20C=0 10C=2" },
	{ 'P', "10Q", -EBUSY, 0, "10Q=0" },
	{ 'P', "10C", 0, 20480, "10C=1" },
	{ 'P', "10C", 0, 30720, "10C=0" },
	{ 'P', "10C", -ENOSPC, 0, "10C=0" },
	{ 'R', NULL, 0, 10240, "10C=1 20C=0" },
	/* the lowest free slot is reused */
	{ 'P', "10C", 0, 10240, "10C=0" },
	{ 'M', NULL, -EBUSY, 0, "10C=0" },
	{ 'R', NULL, 0, 0, "10C=1" },
	{ 'R', NULL, 0, 10240, "10C=2" },
	{ 'R', NULL, 0, 20480, "10C=3" },
	{ 'R', NULL, -ENOENT, 20480, "10C=3" },
	{ 'R', NULL, 0, 30720, "10C=4 20C=2 40C=1 8C=5 5C=8 4C=10 2B=20 1B=32" },
	{ 'P', "8C", 0, 0, "8C=4 4C=0" },
	{ 'P', "8C", 0, 8192, "8C=3" },
	{ 'P', "8C", 0, 16384, "8C=2" },
	{ 'P', "8C", 0, 24576, "8C=1" },
	{ 'P', "8C", 0, 32768, "8C=0 4C=0" },
	{ 'P', "8C", -ENOSPC, 0, "8C=0" },
};

static const struct step a100_mixed[] = {
	{ 'M', NULL, 0, 0,
	  "40C=1 20C=2 10C=4 8C=4 5C=8 4C=8 2B=16 1B=32 8A=4 4Q=8" },
	/* 8C at [0, 8): 4C starts 0 and 5 are taken, 5C 0 and 5 */
	{ 'P', "8C", 0, 0, "8C=3 4C=6 5C=6 10C=3 20C=1 40C=0" },
	/* different types coexist */
	{ 'P', "4C", 0, 10240, "4C=5 8C=2 10C=2 20C=1" },
	{ 'H', NULL, -EBUSY, 0, "4C=5" },
	/* free now: [8, 10) and [14, 20) GB */
	{ 'P', "20C", 0, 20480, "20C=0 8C=0 10C=0 4C=1 5C=1 2B=2 1B=5" },
	{ 'P', "4C", 0, 15360, "4C=0 5C=0 2B=0 1B=1" },
	{ 'P', "4C", -ENOSPC, 0, "4C=0" },
	{ 'P', "1B", 0, 8960, "1B=0 2B=0" },
	{ 'R', NULL, 0, 0, "8C=1 4C=1 5C=1 10C=0 1B=7" },
	{ 'R', NULL, 0, 8960, "8C=1 4C=2 5C=2 10C=1" },
	{ 'R', NULL, 0, 20480, "20C=1 10C=3 8C=3" },
	{ 'R', NULL, 0, 10240, "" },
	{ 'R', NULL, 0, 15360, "40C=1 8C=4 4C=8" },
	{ 'H', NULL, 0, 0, "8C=5 4C=10" },
};

/* Only the full 8C grid: 4 instances, then 4C still finds no room. */
static const struct step a100_mixed_8c[] = {
	{ 'M', NULL, 0, 0, "8C=4 4C=8" },
	{ 'P', "8C", 0, 0, "8C=3" },
	{ 'P', "8C", 0, 10240, "8C=2" },
	{ 'P', "8C", 0, 20480, "8C=1" },
	{ 'P', "8C", 0, 30720, "8C=0 4C=0 1B=4" },
	{ 'P', "8C", -ENOSPC, 0, "8C=0" },
	{ 'P', "4C", -ENOSPC, 0, "4C=0" },
};

static const struct step a100_mixed_4c[] = {
	{ 'M', NULL, 0, 0, "4C=8" },
	{ 'P', "4C", 0, 0, "4C=7 40C=0" },
	{ 'P', "4C", 0, 5120, "4C=6" },
	{ 'P', "4C", 0, 10240, "4C=5" },
	{ 'P', "4C", 0, 15360, "4C=4" },
	{ 'P', "4C", 0, 20480, "4C=3" },
	{ 'P', "4C", 0, 25600, "4C=2" },
	{ 'P', "4C", 0, 30720, "4C=1" },
	{ 'P', "4C", 0, 35840, "4C=0 8C=0 5C=0 1B=0" },
	{ 'P', "4C", -ENOSPC, 0, "4C=0" },
};

/* H200's grid is not whole GB: 141 GB / 4 = 35.25 GB = 36096 MiB. */
static const struct step h200_mixed[] = {
	{ 'M', NULL, 0, 0, "141C=1 70C=2 35C=4 28C=4 4C=32" },
	{ 'P', "70C", 0, 0, "70C=1 35C=2 141C=0" },
	{ 'P', "35C", 0, 72192, "35C=1 70C=0 28C=1" },
	{ 'P', "28C", 0, 108288, "28C=0 35C=0 7C=0 4C=1" },
	{ 'P', "4C", 0, 139872, "4C=0 1B=0 2B=0" },
	{ 'R', NULL, 0, 0, "70C=1 35C=2 141C=0 4C=16" },
};

static const struct script scripts[] = {
	{ "a100-40gb", a100_homogeneous, ARRAY_SIZE(a100_homogeneous) },
	{ "a100-40gb", a100_mixed, ARRAY_SIZE(a100_mixed) },
	{ "a100-40gb", a100_mixed_8c, ARRAY_SIZE(a100_mixed_8c) },
	{ "a100-40gb", a100_mixed_4c, ARRAY_SIZE(a100_mixed_4c) },
	{ "h200-141gb", h200_mixed, ARRAY_SIZE(h200_mixed) },
};

static void check_overlap(struct __test_metadata *_metadata,
			  const struct gpuvirt_fb *fb)
{
	unsigned int i, j;

	ASSERT_LE(fb->count, (unsigned int)GPUVIRT_FB_MAX_VGPUS);
	for (i = 0; i < fb->count; i++) {
		const struct gpuvirt_fb_vgpu *a = &fb->vgpus[i];

		ASSERT_EQ(a->profile->fb_size, a->size);
		ASSERT_LE(a->offset + a->size, fb->vram_size);
		for (j = 0; j < i; j++) {
			const struct gpuvirt_fb_vgpu *b = &fb->vgpus[j];

			ASSERT_TRUE(a->offset + a->size <= b->offset ||
				    b->offset + b->size <= a->offset)
				TH_LOG("%s@%llu overlaps %s@%llu",
				       a->profile->name,
				       (unsigned long long)a->offset,
				       b->profile->name,
				       (unsigned long long)b->offset);
		}
	}
}

TEST(scripted_sequences)
{
	static struct gpu g;
	struct gpuvirt_fb fb;
	unsigned int s, i;

	for (s = 0; s < ARRAY_SIZE(scripts); s++) {
		gpu_model(&g, scripts[s].model);
		ASSERT_GT(g.n, 0);
		gpuvirt_fb_init(&fb, g.vram);
		for (i = 0; i < scripts[s].n; i++) {
			const struct step *st = &scripts[s].steps[i];
			char buf[256], *tok, *save;
			u64 off = ~0ULL;
			int ret;

			switch (st->op) {
			case 'P':
				ASSERT_NE(NULL, prof(&g, st->p)) TH_LOG("%s", st->p);
				ret = gpuvirt_fb_place(&fb, prof(&g, st->p), &off);
				if (!ret)
					EXPECT_EQ(MB(st->mb), off)
						TH_LOG("script %u step %u", s, i);
				break;
			case 'R':
				ret = gpuvirt_fb_release(&fb, MB(st->mb));
				break;
			default:
				ret = gpuvirt_fb_set_mixed(&fb, st->op == 'M');
				break;
			}
			ASSERT_EQ(st->ret, ret) TH_LOG("script %u step %u", s, i);
			check_overlap(_metadata, &fb);

			snprintf(buf, sizeof(buf), "%s", st->avail);
			for (tok = strtok_r(buf, " ", &save); tok;
			     tok = strtok_r(NULL, " ", &save)) {
				char *eq = strchr(tok, '=');
				const struct gpuvirt_profile *p;

				ASSERT_NE(NULL, eq);
				*eq = '\0';
				p = prof(&g, tok);
				ASSERT_NE(NULL, p) TH_LOG("%s", tok);
				EXPECT_EQ(strtoul(eq + 1, NULL, 10),
					  gpuvirt_fb_available(&fb, p))
					TH_LOG("script %u step %u: %s", s, i, tok);
			}
		}
	}
}

/* Every type of every model, alone on an empty GPU, in both modes. */
TEST(empty_gpu_available_is_max)
{
	static const char * const names[] = {
		"a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb",
	};
	static struct gpu g;
	struct gpuvirt_fb fb;
	unsigned int i;
	int j;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		gpu_model(&g, names[i]);
		for (j = 0; j < g.n; j++) {
			const struct gpuvirt_profile *p = &g.t[j];

			gpuvirt_fb_init(&fb, g.vram);
			EXPECT_EQ(p->max_instances, gpuvirt_fb_available(&fb, p))
				TH_LOG("%s", p->name);
			ASSERT_EQ(0, gpuvirt_fb_set_mixed(&fb, true));
			EXPECT_EQ(p->mixed_max_instances,
				  gpuvirt_fb_available(&fb, p))
				TH_LOG("%s", p->name);
		}
	}
}

TEST(homogeneous_offsets_are_slots)
{
	static struct gpu g;
	struct gpuvirt_fb fb;
	const struct gpuvirt_profile *p;
	unsigned int k;
	u64 off;

	gpu_model(&g, "h200-141gb");
	p = prof(&g, "4C");
	gpuvirt_fb_init(&fb, g.vram);
	for (k = 0; k < 32; k++) {
		ASSERT_EQ(0, gpuvirt_fb_place(&fb, p, &off));
		EXPECT_EQ(k * GB(4), off);
	}
	EXPECT_EQ(-ENOSPC, gpuvirt_fb_place(&fb, p, &off));
	EXPECT_EQ(0U, gpuvirt_fb_available(&fb, prof(&g, "7C")));
	EXPECT_EQ(-EBUSY, gpuvirt_fb_place(&fb, prof(&g, "7C"), &off));
}

TEST(mode_switch_needs_empty_gpu)
{
	static struct gpu g;
	struct gpuvirt_fb fb;
	u64 off;

	gpu_model(&g, "a100-40gb");
	gpuvirt_fb_init(&fb, g.vram);
	EXPECT_FALSE(fb.mixed);
	EXPECT_EQ(0, gpuvirt_fb_set_mixed(&fb, false));
	ASSERT_EQ(0, gpuvirt_fb_place(&fb, prof(&g, "5C"), &off));
	EXPECT_EQ(-EBUSY, gpuvirt_fb_set_mixed(&fb, true));
	EXPECT_FALSE(fb.mixed);
	/* not a switch: allowed */
	EXPECT_EQ(0, gpuvirt_fb_set_mixed(&fb, false));
	ASSERT_EQ(0, gpuvirt_fb_release(&fb, off));
	EXPECT_EQ(0, gpuvirt_fb_set_mixed(&fb, true));
	EXPECT_TRUE(fb.mixed);
	ASSERT_EQ(0, gpuvirt_fb_place(&fb, prof(&g, "5C"), &off));
	EXPECT_EQ(-EBUSY, gpuvirt_fb_set_mixed(&fb, false));
	EXPECT_TRUE(fb.mixed);
	EXPECT_EQ(0, gpuvirt_fb_set_mixed(&fb, true));
	ASSERT_EQ(0, gpuvirt_fb_release(&fb, off));
	EXPECT_EQ(0, gpuvirt_fb_set_mixed(&fb, false));
}

/* The per-GPU vGPU cap and types without framebuffer. */
TEST(limits)
{
	struct gpuvirt_profile p = {
		.name = "X-1C", .series = GPUVIRT_SERIES_C,
		.fb_size = GB(1), .max_instances = 100,
		.mixed_max_instances = 64,
	};
	struct gpuvirt_profile none = p;
	struct gpuvirt_fb fb;
	unsigned int k;
	u64 off;

	gpuvirt_fb_init(&fb, GB(128));
	EXPECT_EQ((unsigned int)GPUVIRT_FB_MAX_VGPUS,
		  gpuvirt_fb_available(&fb, &p));
	for (k = 0; k < GPUVIRT_FB_MAX_VGPUS; k++) {
		ASSERT_EQ(0, gpuvirt_fb_place(&fb, &p, &off));
		EXPECT_EQ(GPUVIRT_FB_MAX_VGPUS - k - 1,
			  gpuvirt_fb_available(&fb, &p));
	}
	EXPECT_EQ(-ENOSPC, gpuvirt_fb_place(&fb, &p, &off));

	/* slots past the end of the VRAM do not count */
	gpuvirt_fb_init(&fb, GB(10));
	EXPECT_EQ(10U, gpuvirt_fb_available(&fb, &p));
	/*
	 * A foreign type whose mixed-size starts (every 160 MiB) are closer
	 * than its framebuffer: available still counts what place() does,
	 * starts 0, 1120, 2240, ... 8960 MiB.
	 */
	ASSERT_EQ(0, gpuvirt_fb_set_mixed(&fb, true));
	EXPECT_EQ(9U, gpuvirt_fb_available(&fb, &p));
	for (k = 0; k < 9; k++) {
		ASSERT_EQ(0, gpuvirt_fb_place(&fb, &p, &off));
		EXPECT_EQ(MB(1120) * k, off);
	}
	EXPECT_EQ(-ENOSPC, gpuvirt_fb_place(&fb, &p, &off));

	none.fb_size = 0;
	gpuvirt_fb_init(&fb, GB(10));
	EXPECT_EQ(0U, gpuvirt_fb_available(&fb, &none));
	EXPECT_EQ(-EINVAL, gpuvirt_fb_place(&fb, &none, &off));
	EXPECT_EQ(-ENOENT, gpuvirt_fb_release(&fb, 0));
}

static u32 rng_state;

static u32 rng(void)
{
	/* xorshift32 */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Place @p until it fails; returns the number of successes. */
static unsigned int place_until_full(const struct gpuvirt_fb *fb,
				     const struct gpuvirt_profile *p,
				     int *last)
{
	static struct gpuvirt_fb copy;
	unsigned int n = 0;
	u64 off;

	copy = *fb;
	while ((*last = gpuvirt_fb_place(&copy, p, &off)) == 0)
		n++;
	return n;
}

static void check_state(struct __test_metadata *_metadata,
			const struct gpu *g, const struct gpuvirt_fb *fb)
{
	unsigned int i, per[GPUVIRT_PROFILES_MAX] = { 0 };
	int j, last;

	check_overlap(_metadata, fb);
	for (i = 0; i < fb->count; i++) {
		const struct gpuvirt_fb_vgpu *v = &fb->vgpus[i];

		per[v->profile - g->t]++;
		if (fb->mixed)
			continue;
		/* homogeneous: one type, at slot multiples */
		ASSERT_EQ(fb->vgpus[0].profile, v->profile);
		ASSERT_EQ(0ULL, v->offset % v->size);
		ASSERT_LT(v->offset / v->size, (u64)v->profile->max_instances);
	}
	for (j = 0; j < g->n; j++) {
		const struct gpuvirt_profile *p = &g->t[j];
		unsigned int avail = gpuvirt_fb_available(fb, p);

		ASSERT_LE(per[j], fb->mixed ? p->mixed_max_instances :
			  p->max_instances);
		/* available is exact */
		ASSERT_EQ(avail, place_until_full(fb, p, &last))
			TH_LOG("%s", p->name);
		if (!fb->mixed && fb->count && per[j] != fb->count) {
			ASSERT_EQ(0U, avail);
			ASSERT_EQ(-EBUSY, last);
		} else {
			ASSERT_EQ(-ENOSPC, last);
		}
		if (!fb->mixed)
			ASSERT_EQ(fb->count ? (per[j] == fb->count ?
				  p->max_instances - per[j] : 0) :
				  p->max_instances, avail);
	}
}

TEST(randomised_sequences)
{
	static struct gpu g;
	struct gpuvirt_fb fb;
	unsigned int gi, step, places = 0, fails = 0, mixed_types = 0;

	rng_state = 0x2545f491;
	for (gi = 0; gi < 7; gi++) {
		static const char * const names[] = {
			"a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb",
		};
		int mode;

		if (gi < 4)
			gpu_model(&g, names[gi]);
		else if (gi == 4)
			gpu_custom(&g, GB(24) + MB(700));
		else if (gi == 5)
			gpu_custom(&g, GB(1000));
		else
			gpu_custom(&g, MB(1536));
		ASSERT_GT(g.n, 0);
		for (mode = 0; mode < 2; mode++) {
			gpuvirt_fb_init(&fb, g.vram);
			ASSERT_EQ(0, gpuvirt_fb_set_mixed(&fb, mode));
			for (step = 0; step < 400; step++) {
				u32 r = rng();
				u64 off;

				if (fb.count && r % 100 < 35) {
					off = fb.vgpus[rng() % fb.count].offset;
					ASSERT_EQ(0, gpuvirt_fb_release(&fb, off));
				} else if (r % 100 < 38) {
					ASSERT_EQ(fb.count ? -EBUSY : 0,
						  gpuvirt_fb_set_mixed(&fb, !fb.mixed));
				} else {
					/* favour small types to fill the GPU */
					int j = rng() % g.n;
					const struct gpuvirt_profile *p = &g.t[j];
					unsigned int avail =
						gpuvirt_fb_available(&fb, p);
					int ret = gpuvirt_fb_place(&fb, p, &off);

					ASSERT_EQ(!avail, !!ret);
					places += !ret;
					fails += !!ret;
				}
				check_state(_metadata, &g, &fb);
				if (fb.mixed && fb.count > 1 &&
				    fb.vgpus[0].profile != fb.vgpus[1].profile)
					mixed_types++;
			}
		}
	}
	/* the sequences did exercise both outcomes and mixed types */
	EXPECT_GT(places, 500U);
	EXPECT_GT(fails, 100U);
	EXPECT_GT(mixed_types, 100U);
}

TEST_HARNESS_MAIN

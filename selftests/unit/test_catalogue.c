// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the GPU model catalogue (kernel/core/catalogue.c), built
 * in userspace.
 */
#include "kselftest_harness.h"

#include "core/catalogue.h"

TEST(models_match_reference)
{
	static const struct {
		const char *name, *prefix;
		unsigned long long gib;
	} want[] = {
		{ "a100-40gb", "A100", 40 },
		{ "a100-80gb", "A100D", 80 },
		{ "h100-80gb", "H100", 80 },
		{ "h200-141gb", "H200", 141 },
	};
	unsigned int i;

	ASSERT_EQ(ARRAY_SIZE(want), gpuvirt_catalogue_count());
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		const struct gpuvirt_model *m = gpuvirt_catalogue_find(want[i].name);

		ASSERT_NE(NULL, m) TH_LOG("model %s missing", want[i].name);
		EXPECT_STREQ(want[i].name, m->name);
		EXPECT_STREQ(want[i].prefix, m->profile_prefix);
		EXPECT_EQ(want[i].gib << 30, m->vram_size);
		/* MIG slices the compute axis in 7. */
		EXPECT_EQ(7U, m->engines);
		EXPECT_TRUE(m->mig_capable);
	}
}

TEST(lookup_is_exact)
{
	EXPECT_EQ(NULL, gpuvirt_catalogue_find("H200-141GB"));
	EXPECT_EQ(NULL, gpuvirt_catalogue_find("h200"));
	EXPECT_EQ(NULL, gpuvirt_catalogue_find("h200-141gb "));
	EXPECT_EQ(NULL, gpuvirt_catalogue_find(""));
	/* custom is not a table entry: its sizes come from the backend */
	EXPECT_EQ(NULL, gpuvirt_catalogue_find(GPUVIRT_MODEL_CUSTOM));
}

TEST(index_walk_covers_table)
{
	unsigned int i, n = gpuvirt_catalogue_count();

	for (i = 0; i < n; i++) {
		const struct gpuvirt_model *m = gpuvirt_catalogue_get(i);

		ASSERT_NE(NULL, m);
		EXPECT_EQ(m, gpuvirt_catalogue_find(m->name));
		EXPECT_GT((size_t)GPUVIRT_MODEL_NAME_MAX, strlen(m->name));
	}
	EXPECT_EQ(NULL, gpuvirt_catalogue_get(n));
}

TEST_HARNESS_MAIN

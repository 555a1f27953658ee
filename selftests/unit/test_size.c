// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the size parser (kernel/sim/size.c) that the sim's
 * new_device file and gpuvirtctl share: a table of inputs with the
 * expected outcome, and the bounds of both functions.
 */
#include "kselftest_harness.h"

#include "sim/size.h"

static const struct {
	const char *in;
	int err;
	u64 val;
} size_cases[] = {
	{ "0", 0, 0 },
	{ "1", 0, 1 },
	{ "4096", 0, 4096 },
	{ "1K", 0, 1ULL << 10 },
	{ "1k", 0, 1ULL << 10 },
	{ "512M", 0, 512ULL << 20 },
	{ "512m", 0, 512ULL << 20 },
	{ "24G", 0, 24ULL << 30 },
	{ "24g", 0, 24ULL << 30 },
	{ "1T", 0, 1ULL << 40 },
	{ "1t", 0, 1ULL << 40 },
	{ "0G", 0, 0 },
	{ "007M", 0, 7ULL << 20 },
	{ "1048576K", 0, 1ULL << 30 },
	/* the largest of each unit, and one more */
	{ "18446744073709551615", 0, U64_MAX },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "16777215T", 0, 16777215ULL << 40 },
	{ "16777216T", -ERANGE, 0 },
	{ "17179869183G", 0, 17179869183ULL << 30 },
	{ "17179869184G", -ERANGE, 0 },
	{ "99999999999999999999999T", -ERANGE, 0 },
	/* not a size */
	{ "", -EINVAL, 0 },
	{ "G", -EINVAL, 0 },
	{ "4GB", -EINVAL, 0 },
	{ "4GG", -EINVAL, 0 },
	{ "4X", -EINVAL, 0 },
	{ "4P", -EINVAL, 0 },
	{ "4 G", -EINVAL, 0 },
	{ " 4G", -EINVAL, 0 },
	{ "4G ", -EINVAL, 0 },
	{ "4G\n", -EINVAL, 0 },
	{ "-4G", -EINVAL, 0 },
	{ "+4G", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "G4", -EINVAL, 0 },
};

TEST(size_table)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(size_cases); i++) {
		const char *in = size_cases[i].in;
		u64 v = 12345;
		int err;

		err = gpuvirt_parse_size(in, strlen(in), &v);
		EXPECT_EQ(size_cases[i].err, err) TH_LOG("input \"%s\"", in);
		/* A refused size leaves the output alone. */
		EXPECT_EQ(err ? 12345 : size_cases[i].val, v)
			TH_LOG("input \"%s\"", in);
	}
}

/* The text is not NUL-terminated at the length: nothing past it counts. */
TEST(size_honours_length)
{
	static const char buf[] = "24GXX";
	u64 v = 0;

	ASSERT_EQ(0, gpuvirt_parse_size(buf, 3, &v));
	EXPECT_EQ(24ULL << 30, v);
	ASSERT_EQ(0, gpuvirt_parse_size(buf, 2, &v));
	EXPECT_EQ(24, v);
	EXPECT_EQ(-EINVAL, gpuvirt_parse_size(buf, 0, &v));
	EXPECT_EQ(-EINVAL, gpuvirt_parse_size(buf, 4, &v));
}

TEST(dec_bounds)
{
	u64 v = 0;

	ASSERT_EQ(0, gpuvirt_parse_dec("4294967295", 10, U32_MAX, &v));
	EXPECT_EQ(U32_MAX, v);
	EXPECT_EQ(-ERANGE, gpuvirt_parse_dec("4294967296", 10, U32_MAX, &v));
	ASSERT_EQ(0, gpuvirt_parse_dec("64", 2, 64, &v));
	EXPECT_EQ(64, v);
	EXPECT_EQ(-ERANGE, gpuvirt_parse_dec("65", 2, 64, &v));
	ASSERT_EQ(0, gpuvirt_parse_dec("0", 1, 0, &v));
	EXPECT_EQ(0, v);
	/* a bound below a single digit (the check must not wrap) */
	EXPECT_EQ(-ERANGE, gpuvirt_parse_dec("1", 1, 0, &v));
	EXPECT_EQ(-ERANGE, gpuvirt_parse_dec("9", 1, 5, &v));
	ASSERT_EQ(0, gpuvirt_parse_dec("5", 1, 5, &v));
	EXPECT_EQ(5, v);
	EXPECT_EQ(-EINVAL, gpuvirt_parse_dec("", 0, U64_MAX, &v));
	EXPECT_EQ(-EINVAL, gpuvirt_parse_dec("1K", 2, U64_MAX, &v));
	EXPECT_EQ(-EINVAL, gpuvirt_parse_dec("-1", 2, U64_MAX, &v));
}

TEST_HARNESS_MAIN

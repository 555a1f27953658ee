// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the gpuvirt_sim control-file parser (kernel/sim/spec.c),
 * built in userspace: a table of inputs with the expected outcome.
 */
#include "kselftest_harness.h"

#include "sim/spec.h"

struct new_case {
	const char *in;
	int err;
	unsigned int id;
	const char *model;
	unsigned long long vram;
	unsigned int engines;
	const char *why;	/* substring of the error message */
};

static const struct new_case new_cases[] = {
	{ "0 h200-141gb\n", 0, 0, "h200-141gb", 0, 0, NULL },
	{ "7 a100-40gb", 0, 7, "a100-40gb", 0, 0, NULL },
	{ "  12\t h100-80gb  \n", 0, 12, "h100-80gb", 0, 0, NULL },
	{ "4294967295 a100-80gb", 0, 4294967295u, "a100-80gb", 0, 0, NULL },
	/* the model name is checked against the catalogue by the driver */
	{ "3 nosuchgpu", 0, 3, "nosuchgpu", 0, 0, NULL },
	{ "1 custom 24G 4", 0, 1, "custom", 24ULL << 30, 4, NULL },
	{ "1 custom 1024M 1\n", 0, 1, "custom", 1ULL << 30, 1, NULL },
	{ "1 custom 512M 1", -EINVAL, 0, NULL, 0, 0, "custom VRAM" },
	{ "1 custom 1T 64", 0, 1, "custom", 1ULL << 40, 64, NULL },
	{ "1 custom 1048576k 2", 0, 1, "custom", 1ULL << 30, 2, NULL },
	{ "", -EINVAL, 0, NULL, 0, 0, "ID must be" },
	{ "\n", -EINVAL, 0, NULL, 0, 0, "ID must be" },
	{ "x h200-141gb", -EINVAL, 0, NULL, 0, 0, "ID must be" },
	{ "-1 h200-141gb", -EINVAL, 0, NULL, 0, 0, "ID must be" },
	{ "4294967296 h200-141gb", -EINVAL, 0, NULL, 0, 0, "ID must be" },
	{ "99999999999999999999999 h200-141gb", -EINVAL, 0, NULL, 0, 0, "ID must be" },
	{ "0", -EINVAL, 0, NULL, 0, 0, "expected \"ID MODEL\"" },
	{ "0 h200-141gb extra", -EINVAL, 0, NULL, 0, 0, "unexpected text" },
	{ "0 h200-141gb\n\n", -EINVAL, 0, NULL, 0, 0, "MODEL may only" },
	{ "0 H200-141GB", -EINVAL, 0, NULL, 0, 0, "MODEL may only" },
	{ "0 h200/141gb", -EINVAL, 0, NULL, 0, 0, "MODEL may only" },
	{ "0 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", -EINVAL, 0, NULL, 0, 0, "too long" },
	{ "1 custom", -EINVAL, 0, NULL, 0, 0, "custom VRAM" },
	{ "1 custom 256M 1", -EINVAL, 0, NULL, 0, 0, "custom VRAM" },
	{ "1 custom 2T 1", -EINVAL, 0, NULL, 0, 0, "custom VRAM" },
	{ "1 custom 24X 1", -EINVAL, 0, NULL, 0, 0, "custom VRAM" },
	{ "1 custom G 1", -EINVAL, 0, NULL, 0, 0, "custom VRAM" },
	{ "1 custom 99999999999999999999T 1", -EINVAL, 0, NULL, 0, 0, "custom VRAM" },
	{ "1 custom 24G", -EINVAL, 0, NULL, 0, 0, "custom ENGINES" },
	{ "1 custom 24G 0", -EINVAL, 0, NULL, 0, 0, "custom ENGINES" },
	{ "1 custom 24G 65", -EINVAL, 0, NULL, 0, 0, "custom ENGINES" },
	{ "1 custom 24G 4 5", -EINVAL, 0, NULL, 0, 0, "unexpected text" },
};

TEST(new_device_table)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(new_cases); i++) {
		const struct new_case *c = &new_cases[i];
		struct gpuvirt_sim_spec spec;
		const char *why = NULL;
		int err;

		err = gpuvirt_sim_parse_new(c->in, strlen(c->in), &spec, &why);
		EXPECT_EQ(c->err, err) TH_LOG("input \"%s\"", c->in);
		if (c->err) {
			ASSERT_NE(NULL, why);
			EXPECT_NE(NULL, strstr(why, c->why))
				TH_LOG("input \"%s\": message \"%s\"", c->in, why);
			continue;
		}
		EXPECT_EQ(NULL, why);
		EXPECT_EQ(c->id, spec.id) TH_LOG("input \"%s\"", c->in);
		EXPECT_STREQ(c->model, spec.model);
		EXPECT_EQ(c->vram, spec.vram_size) TH_LOG("input \"%s\"", c->in);
		EXPECT_EQ(c->engines, spec.engines);
	}
}

/* sysfs buffers are not NUL-terminated at len; the parser must not overrun. */
TEST(new_device_honours_length)
{
	static const char buf[] = "5 h100-80gbXXXX";
	struct gpuvirt_sim_spec spec;
	const char *why;

	ASSERT_EQ(0, gpuvirt_sim_parse_new(buf, 11, &spec, &why));
	EXPECT_EQ(5, spec.id);
	EXPECT_STREQ("h100-80gb", spec.model);
}

TEST(del_device_table)
{
	static const struct {
		const char *in;
		int err;
		unsigned int id;
	} cases[] = {
		{ "0\n", 0, 0 },
		{ " 42 ", 0, 42 },
		{ "4294967295", 0, 4294967295u },
		{ "", -EINVAL, 0 },
		{ "abc", -EINVAL, 0 },
		{ "4294967296", -EINVAL, 0 },
		{ "1 2", -EINVAL, 0 },
		{ "1 h200-141gb", -EINVAL, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *why = NULL;
		u32 id = 12345;
		int err;

		err = gpuvirt_sim_parse_del(cases[i].in, strlen(cases[i].in),
					    &id, &why);
		EXPECT_EQ(cases[i].err, err) TH_LOG("input \"%s\"", cases[i].in);
		if (err) {
			EXPECT_NE(NULL, why);
		} else {
			EXPECT_EQ(cases[i].id, id);
		}
	}
}

TEST_HARNESS_MAIN

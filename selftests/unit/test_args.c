// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of gpuvirtctl's table-driven argument parser (user/args.c).
 *
 * Every variant of the "cmdline" fixture is one command line with its expected
 * outcome: the parsed values and the mask of given arguments, or the exact
 * error message.
 */
#include <string.h>

#include "kselftest_harness.h"

#include "args.h"
#include "units.h"

/* The option structure and tables under test. */
struct topts {
	uint32_t id;
	uint64_t count;
	uint64_t fb;
	const char *name;
	uint32_t mode;
	bool force;
	char uuid[UNITS_UUID_LEN];
	uint32_t slice;
	uint32_t weight;
};

enum { T_ID, T_COUNT, T_FB, T_NAME, T_MODE, T_FORCE };

static const struct arg_enum t_modes[] = {
	{ "timesliced", 0 },
	{ "mig", 1 },
	{ .name = NULL }
};

/* Table 0: optional arguments of every type. */
static const struct arg_spec t_all[] = {
	[T_ID] = { .keyword = "id", .type = ARG_U32, .meta = "ID",
		   .offset = offsetof(struct topts, id) },
	[T_COUNT] = { .keyword = "count", .type = ARG_U64, .meta = "N",
		      .offset = offsetof(struct topts, count) },
	[T_FB] = { .keyword = "fb", .type = ARG_SIZE, .meta = "SIZE",
		   .offset = offsetof(struct topts, fb),
		   .min = 512ULL << 20, .max = 1ULL << 40 },
	[T_NAME] = { .keyword = "name", .type = ARG_STRING, .meta = "NAME",
		     .offset = offsetof(struct topts, name), .max_len = 8 },
	[T_MODE] = { .keyword = "mode", .type = ARG_ENUM, .enums = t_modes,
		     .offset = offsetof(struct topts, mode) },
	[T_FORCE] = { .keyword = "force", .type = ARG_FLAG,
		      .offset = offsetof(struct topts, force) },
	{ .keyword = NULL }
};

enum { R_GPU, R_ID };

/* Table 1: a required argument and a bounded one. */
static const struct arg_spec t_req[] = {
	[R_GPU] = { .keyword = "gpu", .type = ARG_U32, .meta = "GPU",
		    .offset = offsetof(struct topts, id),
		    .flags = ARG_REQUIRED },
	[R_ID] = { .keyword = "id", .type = ARG_U64, .meta = "ID",
		   .offset = offsetof(struct topts, count),
		   .min = 1, .max = 16 },
	{ .keyword = NULL }
};

/* Table 2: a command without arguments. */
static const struct arg_spec t_none[] = {
	{ .keyword = NULL }
};

enum { C_UUID, C_GPU, C_NAME, C_SLICE, C_WEIGHT };

/*
 * Table 3: how arguments go together, as "vgpu show", "type show" and
 * "sched set" use it: uuid excludes gpu, name needs gpu, at least one of
 * slice and weight, and slice takes 0 besides its range.
 */
static const struct arg_spec t_combo[] = {
	[C_UUID] = { .keyword = "uuid", .type = ARG_UUID, .meta = "UUID",
		     .offset = offsetof(struct topts, uuid),
		     .excludes = ARG_BIT(C_GPU) },
	[C_GPU] = { .keyword = "gpu", .type = ARG_U32, .meta = "ID",
		    .offset = offsetof(struct topts, id) },
	[C_NAME] = { .keyword = "name", .type = ARG_STRING, .meta = "NAME",
		     .offset = offsetof(struct topts, name),
		     .needs = ARG_BIT(C_GPU) },
	[C_SLICE] = { .keyword = "slice", .type = ARG_U32, .meta = "US",
		      .offset = offsetof(struct topts, slice),
		      .flags = ARG_ONE_OF | ARG_ZERO,
		      .min = 100, .max = 100000 },
	[C_WEIGHT] = { .keyword = "weight", .type = ARG_U32, .meta = "W",
		       .offset = offsetof(struct topts, weight),
		       .flags = ARG_ONE_OF, .min = 1, .max = 10000 },
	{ .keyword = NULL }
};

enum { P_DEV, P_FORCE };

/* Table 4: a required value that may come without its keyword ("pt"). */
static const struct arg_spec t_pos[] = {
	[P_DEV] = { .keyword = "dev", .type = ARG_STRING, .meta = "BDF",
		    .offset = offsetof(struct topts, name),
		    .flags = ARG_REQUIRED | ARG_POSITIONAL },
	[P_FORCE] = { .keyword = "force", .type = ARG_FLAG,
		      .offset = offsetof(struct topts, force) },
	{ .keyword = NULL }
};

static const struct arg_spec *const tables[] = {
	t_all, t_req, t_none, t_combo, t_pos
};

#define B(i)	ARG_BIT(i)

FIXTURE(cmdline) {
	int argc;
	char *argv[32];
	char buf[256];
};

FIXTURE_VARIANT(cmdline) {
	int table;
	const char *cmdline;	/* words separated by single spaces */
	const char *err;	/* expected error, NULL for success */
	uint64_t given;
	struct topts want;
};

#define OK(vname, tbl, line, mask, ...)				\
	FIXTURE_VARIANT_ADD(cmdline, vname) {			\
		.table = tbl, .cmdline = line, .given = mask,	\
		.want = { __VA_ARGS__ },			\
	}

#define BAD(vname, tbl, line, msg)				\
	FIXTURE_VARIANT_ADD(cmdline, vname) {			\
		.table = tbl, .cmdline = line, .err = msg,	\
	}

/* Success. */
OK(empty, 0, "", 0);
OK(pos_bare, 4, "0000:01:00.0", B(P_DEV), .name = "0000:01:00.0");
OK(pos_flag_after, 4, "01:00.0 force", B(P_DEV) | B(P_FORCE),
   .name = "01:00.0", .force = true);
OK(pos_flag_before, 4, "force 01:00.0", B(P_DEV) | B(P_FORCE),
   .name = "01:00.0", .force = true);
OK(pos_keyword, 4, "dev 01:00.0", B(P_DEV), .name = "01:00.0");
OK(pos_keyword_word, 4, "dev force", B(P_DEV), .name = "force");
BAD(pos_missing, 4, "force", "missing argument BDF");
BAD(pos_twice, 4, "a b", "unknown argument \"b\" (expected dev, force)");
BAD(pos_and_keyword, 4, "a dev b", "\"dev\" given more than once");
OK(id, 0, "id 7", B(T_ID), .id = 7);
OK(id_zero, 0, "id 0", B(T_ID), .id = 0);
OK(id_hex, 0, "id 0x1f", B(T_ID), .id = 31);
OK(id_max, 0, "id 4294967295", B(T_ID), .id = UINT32_MAX);
OK(u64_max, 0, "count 18446744073709551615", B(T_COUNT), .count = UINT64_MAX);
OK(size_g, 0, "fb 4G", B(T_FB), .fb = 4ULL << 30);
OK(size_lower, 0, "fb 4g", B(T_FB), .fb = 4ULL << 30);
OK(size_min, 0, "fb 512M", B(T_FB), .fb = 512ULL << 20);
OK(size_max, 0, "fb 1T", B(T_FB), .fb = 1ULL << 40);
OK(size_bytes, 0, "fb 1073741824", B(T_FB), .fb = 1ULL << 30);
OK(size_k, 0, "fb 1048576K", B(T_FB), .fb = 1ULL << 30);
OK(string, 0, "name sim0", B(T_NAME), .name = "sim0");
OK(string_max, 0, "name abcdefgh", B(T_NAME), .name = "abcdefgh");
OK(string_keyword, 0, "name id", B(T_NAME), .name = "id");
OK(enum_first, 0, "mode timesliced", B(T_MODE), .mode = 0);
OK(enum_second, 0, "mode mig", B(T_MODE), .mode = 1);
OK(flag, 0, "force", B(T_FORCE), .force = true);
OK(flag_then_value, 0, "force id 3", B(T_FORCE) | B(T_ID), .force = true, .id = 3);
OK(all, 0, "id 3 name sim0 mode mig force fb 1G count 9",
   B(T_ID) | B(T_NAME) | B(T_MODE) | B(T_FORCE) | B(T_FB) | B(T_COUNT),
   .id = 3, .name = "sim0", .mode = 1, .force = true, .fb = 1ULL << 30,
   .count = 9);
OK(required, 1, "gpu 2", B(R_GPU), .id = 2);
OK(required_last, 1, "id 16 gpu 0", B(R_GPU) | B(R_ID), .id = 0, .count = 16);
OK(none, 2, "", 0);

/* Numbers. */
BAD(id_word, 0, "id abc",
    "\"id\" expects a number from 0 to 4294967295, got \"abc\"");
BAD(id_overflow, 0, "id 4294967296",
    "\"id\" expects a number from 0 to 4294967295, got \"4294967296\"");
BAD(id_negative, 0, "id -1",
    "\"id\" expects a number from 0 to 4294967295, got \"-1\"");
BAD(id_plus, 0, "id +1",
    "\"id\" expects a number from 0 to 4294967295, got \"+1\"");
BAD(id_trailing, 0, "id 1x",
    "\"id\" expects a number from 0 to 4294967295, got \"1x\"");
BAD(id_bare_hex, 0, "id 0x",
    "\"id\" expects a number from 0 to 4294967295, got \"0x\"");
BAD(u64_overflow, 0, "count 18446744073709551616",
    "\"count\" expects a number from 0 to 18446744073709551615, got \"18446744073709551616\"");
BAD(below_min, 1, "gpu 0 id 0",
    "\"id\" expects a number from 1 to 16, got \"0\"");
BAD(above_max, 1, "gpu 0 id 17",
    "\"id\" expects a number from 1 to 16, got \"17\"");

/* Sizes. */
BAD(size_small, 0, "fb 511M",
    "\"fb\" expects a size from 512M to 1T (suffixes K, M, G, T), got \"511M\"");
BAD(size_large, 0, "fb 1025G",
    "\"fb\" expects a size from 512M to 1T (suffixes K, M, G, T), got \"1025G\"");
BAD(size_unit, 0, "fb 4GB",
    "\"fb\" expects a size from 512M to 1T (suffixes K, M, G, T), got \"4GB\"");
BAD(size_suffix_only, 0, "fb G",
    "\"fb\" expects a size from 512M to 1T (suffixes K, M, G, T), got \"G\"");
BAD(size_overflow, 0, "fb 99999999999999T",
    "\"fb\" expects a size from 512M to 1T (suffixes K, M, G, T), got \"99999999999999T\"");

/* Strings and enums. */
BAD(string_long, 0, "name abcdefghi",
    "\"name\" expects at most 8 characters, got \"abcdefghi\"");
BAD(enum_bad, 0, "mode spatial",
    "\"mode\" expects one of timesliced, mig, got \"spatial\"");
BAD(enum_case, 0, "mode MIG",
    "\"mode\" expects one of timesliced, mig, got \"MIG\"");

/* Structure. */
BAD(no_value, 0, "id", "\"id\" needs a value");
BAD(no_value_last, 0, "force name", "\"name\" needs a value");
BAD(twice, 0, "id 1 id 2", "\"id\" given more than once");
BAD(flag_twice, 0, "force force", "\"force\" given more than once");
BAD(unknown, 0, "bogus 1",
    "unknown argument \"bogus\" (expected id, count, fb, name, mode, force)");
BAD(value_as_keyword, 0, "id 1 2",
    "unknown argument \"2\" (expected id, count, fb, name, mode, force)");
BAD(prefix, 0, "i 1",
    "unknown argument \"i\" (expected id, count, fb, name, mode, force)");
BAD(missing_required, 1, "", "missing argument \"gpu\"");
BAD(missing_required_other, 1, "id 3", "missing argument \"gpu\"");
BAD(unexpected, 2, "x", "unexpected argument \"x\"");

/* UUIDs: either case in, canonical lower case out. */
#define UUID_L	"0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
#define UUID_U	"0F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9"
#define UUID_ERR(got) \
	"\"uuid\" expects a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), got \"" got "\""

OK(uuid, 3, "uuid " UUID_L " weight 1", B(C_UUID) | B(C_WEIGHT),
   .uuid = UUID_L, .weight = 1);
OK(uuid_upper, 3, "uuid " UUID_U " slice 0", B(C_UUID) | B(C_SLICE),
   .uuid = UUID_L, .slice = 0);
OK(uuid_mixed, 3, "weight 2 uuid 0f1E2d3C-4b5a-4978-8695-A4b3c2d1e0F9",
   B(C_UUID) | B(C_WEIGHT), .uuid = UUID_L, .weight = 2);
BAD(uuid_short, 3, "uuid 0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f weight 1",
    UUID_ERR("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f"));
BAD(uuid_long, 3, "uuid " UUID_L "0 weight 1", UUID_ERR(UUID_L "0"));
BAD(uuid_no_dashes, 3, "uuid 0f1e2d3c04b5a04978086950a4b3c2d1e0f9 weight 1",
    UUID_ERR("0f1e2d3c04b5a04978086950a4b3c2d1e0f9"));
BAD(uuid_dash_moved, 3, "uuid 0f1e2d3-c4b5a-4978-8695-a4b3c2d1e0f9 weight 1",
    UUID_ERR("0f1e2d3-c4b5a-4978-8695-a4b3c2d1e0f9"));
BAD(uuid_not_hex, 3, "uuid 0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0fg weight 1",
    UUID_ERR("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0fg"));
BAD(uuid_empty_word, 3, "uuid weight 1", UUID_ERR("weight"));

/* 0 besides the range. */
OK(zero, 3, "slice 0", B(C_SLICE), .slice = 0);
OK(zero_range_min, 3, "slice 100", B(C_SLICE), .slice = 100);
OK(zero_range_max, 3, "slice 100000", B(C_SLICE), .slice = 100000);
BAD(zero_gap, 3, "slice 99",
    "\"slice\" expects 0 or a number from 100 to 100000, got \"99\"");
BAD(zero_above, 3, "slice 100001",
    "\"slice\" expects 0 or a number from 100 to 100000, got \"100001\"");
BAD(zero_only_flagged, 3, "weight 0",
    "\"weight\" expects a number from 1 to 10000, got \"0\"");

/* At least one of, needs, excludes. */
OK(one_of_both, 3, "slice 200 weight 3", B(C_SLICE) | B(C_WEIGHT),
   .slice = 200, .weight = 3);
BAD(one_of_none, 3, "",
    "missing argument: give at least one of \"slice\", \"weight\"");
BAD(one_of_others, 3, "gpu 1",
    "missing argument: give at least one of \"slice\", \"weight\"");
OK(needs_met, 3, "name H200-35C gpu 1 weight 1",
   B(C_NAME) | B(C_GPU) | B(C_WEIGHT), .name = "H200-35C", .id = 1,
   .weight = 1);
BAD(needs_unmet, 3, "name H200-35C weight 1", "\"name\" needs \"gpu\"");
BAD(excludes, 3, "uuid " UUID_L " gpu 1 weight 1",
    "\"uuid\" and \"gpu\" cannot be given together");
BAD(excludes_reversed, 3, "gpu 1 weight 1 uuid " UUID_L,
    "\"uuid\" and \"gpu\" cannot be given together");

FIXTURE_SETUP(cmdline)
{
	char *p;

	self->argc = 0;
	snprintf(self->buf, sizeof(self->buf), "%s", variant->cmdline);
	for (p = strtok(self->buf, " "); p; p = strtok(NULL, " "))
		self->argv[self->argc++] = p;
}

FIXTURE_TEARDOWN(cmdline)
{
}

static void expect_str(struct __test_metadata *_metadata, const char *want,
		       const char *seen)
{
	if (!want || !seen) {
		EXPECT_EQ(want, seen);
	} else {
		EXPECT_STREQ(want, seen);
	}
}

TEST_F(cmdline, parse)
{
	struct topts got;
	uint64_t given = ~0ULL;
	char err[256];
	int ret;

	memset(&got, 0, sizeof(got));
	ret = args_parse(tables[variant->table], self->argc, self->argv, &got,
			 &given, err, sizeof(err));
	if (variant->err) {
		ASSERT_EQ(-1, ret);
		EXPECT_STREQ(variant->err, err);
		return;
	}
	ASSERT_EQ(0, ret) TH_LOG("unexpected error: %s", err);
	EXPECT_STREQ("", err);
	EXPECT_EQ(variant->given, given);
	EXPECT_EQ(variant->want.id, got.id);
	EXPECT_EQ(variant->want.count, got.count);
	EXPECT_EQ(variant->want.fb, got.fb);
	EXPECT_EQ(variant->want.mode, got.mode);
	EXPECT_EQ(variant->want.force, got.force);
	expect_str(_metadata, variant->want.name, got.name);
	EXPECT_STREQ(variant->want.uuid, got.uuid);
	EXPECT_EQ(variant->want.slice, got.slice);
	EXPECT_EQ(variant->want.weight, got.weight);
}

/* A short buffer truncates the message but stays terminated. */
TEST(err_truncated)
{
	char *argv[] = { "id", "abc" };
	char err[11];
	uint64_t given;
	struct topts got;

	memset(err, 'x', sizeof(err));
	ASSERT_EQ(-1, args_parse(t_all, 2, argv, &got, &given, err, sizeof(err)));
	EXPECT_STREQ("\"id\" expec", err);
}

TEST(usage_line)
{
	char buf[256];
	size_t n;

	n = args_usage(t_all, buf, sizeof(buf));
	EXPECT_STREQ("[ id ID ] [ count N ] [ fb SIZE ] [ name NAME ] "
		     "[ mode { timesliced | mig } ] [ force ]", buf);
	EXPECT_EQ(strlen(buf), n);

	args_usage(t_req, buf, sizeof(buf));
	EXPECT_STREQ("gpu GPU [ id ID ]", buf);

	args_usage(t_none, buf, sizeof(buf));
	EXPECT_STREQ("", buf);

	/* A positional argument shows as its placeholder alone. */
	args_usage(t_pos, buf, sizeof(buf));
	EXPECT_STREQ("BDF [ force ]", buf);

	/* Arguments that exclude each other share a bracket. */
	args_usage(t_combo, buf, sizeof(buf));
	EXPECT_STREQ("[ uuid UUID | gpu ID ] [ name NAME ] [ slice US ] "
		     "[ weight W ]", buf);

	/* Truncation reports the length it wanted. */
	EXPECT_EQ(strlen("gpu GPU [ id ID ]"), args_usage(t_req, buf, 4));
	EXPECT_STREQ("gpu", buf);
}

/* ARG_REPEAT: every bare word one more value, as "mig plan" takes them. */
struct ropts {
	uint32_t gpu;
	struct arg_list want;
	bool dry;
};

static const struct arg_spec t_rep[] = {
	{ .keyword = "gpu", .type = ARG_U32, .meta = "ID",
	  .offset = offsetof(struct ropts, gpu), .flags = ARG_REQUIRED },
	{ .keyword = "profile", .type = ARG_STRING, .meta = "PROFILE...",
	  .offset = offsetof(struct ropts, want), .max_len = 10,
	  .flags = ARG_REQUIRED | ARG_POSITIONAL | ARG_REPEAT },
	{ .keyword = "dry-run", .type = ARG_FLAG,
	  .offset = offsetof(struct ropts, dry) },
	{ .keyword = NULL }
};

TEST(repeat)
{
	char *ok[] = { "gpu", "0", "3g.71gb", "dry-run", "1g.18gbx2",
		       "profile", "2g.35gb" };
	char *none[] = { "gpu", "0" };
	char *many[ARG_LIST_MAX + 1];
	char *too_long[] = { "gpu", "0", "1g.18gb+mex" };
	struct ropts got;
	uint64_t given;
	char err[128];
	unsigned int i;

	memset(&got, 0, sizeof(got));
	ASSERT_EQ(0, args_parse(t_rep, 7, ok, &got, &given, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(3U, got.want.n);
	EXPECT_STREQ("3g.71gb", got.want.val[0]);
	EXPECT_STREQ("1g.18gbx2", got.want.val[1]);
	EXPECT_STREQ("2g.35gb", got.want.val[2]);
	EXPECT_EQ(0U, got.gpu);
	EXPECT_TRUE(got.dry);

	memset(&got, 0, sizeof(got));
	ASSERT_EQ(-1, args_parse(t_rep, 2, none, &got, &given, err, sizeof(err)));
	EXPECT_STREQ("missing argument PROFILE...", err);

	memset(&got, 0, sizeof(got));
	ASSERT_EQ(-1, args_parse(t_rep, 3, too_long, &got, &given, err,
				 sizeof(err)));
	EXPECT_STREQ("\"profile\" expects at most 10 characters, got \"1g.18gb+mex\"",
		     err);

	for (i = 0; i <= ARG_LIST_MAX; i++)
		many[i] = "1g.18gb";
	memset(&got, 0, sizeof(got));
	ASSERT_EQ(-1, args_parse(t_rep, ARG_LIST_MAX + 1, many, &got, &given,
				 err, sizeof(err)));
	EXPECT_STREQ("\"PROFILE...\" takes at most 16 values", err);

	args_usage(t_rep, err, sizeof(err));
	EXPECT_STREQ("gpu ID PROFILE... [ dry-run ]", err);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of gpuvirtctl's printer (user/print.c) and the formatting of
 * sizes, durations and UUIDs (user/units.c): JSON string escaping, and the
 * text, JSON and pretty JSON forms of the same sequence of print calls.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "print.h"
#include "units.h"

/* Output captured in memory. */
struct capture {
	FILE *f;
	char *buf;
	size_t len;
};

static void cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
}

/* Close the stream; c->buf then holds the output, to free(). */
static void cap_close(struct capture *c)
{
	fclose(c->f);
	c->f = NULL;
}

/* JSON escaping, one variant per input. -------------------------------- */

FIXTURE(escape) {
	struct capture cap;
};

FIXTURE_VARIANT(escape) {
	const char *in;
	const char *out;
};

#define ESC(vname, i, o) \
	FIXTURE_VARIANT_ADD(escape, vname) { .in = i, .out = o }

ESC(empty, "", "\"\"");
ESC(plain, "sim0", "\"sim0\"");
ESC(quote, "a\"b", "\"a\\\"b\"");
ESC(backslash, "a\\b", "\"a\\\\b\"");
ESC(slash, "a/b", "\"a/b\"");
ESC(named_controls, "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
ESC(other_controls, "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
ESC(utf8, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
ESC(invalid_byte, "a\xff" "b", "\"a\\ufffdb\"");
ESC(lone_continuation, "\x80", "\"\\ufffd\"");
ESC(truncated_seq, "\xe2\x82", "\"\\ufffd\\ufffd\"");
ESC(truncated_at_end, "x\xf0\x9f", "\"x\\ufffd\\ufffd\"");
ESC(overlong, "\xc0\xaf", "\"\\ufffd\\ufffd\"");
ESC(surrogate, "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
ESC(above_max, "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");

FIXTURE_SETUP(escape)
{
	cap_open(&self->cap);
	ASSERT_NE(NULL, self->cap.f);
}

FIXTURE_TEARDOWN(escape)
{
	if (self->cap.f)
		cap_close(&self->cap);
	free(self->cap.buf);
}

TEST_F(escape, json)
{
	pr_json_escape(self->cap.f, variant->in);
	cap_close(&self->cap);
	EXPECT_STREQ(variant->out, self->cap.buf);
}

/* The same calls in each form. ------------------------------------------- */

struct gpu {
	unsigned int id;
	const char *name;
	const char *model;
	uint64_t vram;
	unsigned int engines;
	const char *mode;
	const char *backend;
};

static const struct gpu gpus[] = {
	{ 0, "sim0", "h200-141gb", 141ULL << 30, 7, "timesliced", "gpuvirt_sim" },
	{ 1, "0000:3b:00.0", "custom", 1536ULL << 20, 2, "mig", "gpuvirt_sim" },
};

/* The member calls gpu.c makes for one GPU. */
static void print_gpu(const struct gpu *g)
{
	pr_uint("id", "gpu", g->id);
	pr_string("name", NULL, g->name);
	pr_string("model", NULL, g->model);
	pr_size("vram", NULL, g->vram);
	pr_uint("engines", NULL, g->engines);
	pr_string("mode", NULL, g->mode);
	pr_string("backend", NULL, g->backend);
}

/* What "gpu show" does with @n GPUs. */
static char *show(bool json, bool pretty, size_t n)
{
	struct capture c;
	size_t i;

	cap_open(&c);
	pr_init(c.f, json, pretty);
	pr_open_object(NULL);
	pr_open_array("gpu");
	for (i = 0; i < n; i++) {
		pr_open_object(NULL);
		print_gpu(&gpus[i]);
		pr_close_object();
		pr_eol();
	}
	pr_close_array();
	pr_close_object();
	pr_flush();
	cap_close(&c);
	return c.buf;
}

/* What "monitor" does for one event. */
static char *event(bool json, bool pretty)
{
	struct capture c;

	cap_open(&c);
	pr_init(c.f, json, pretty);
	pr_open_object(NULL);
	if (pr_is_json())
		pr_string("event", NULL, "add");
	else
		pr_text("[gpu add]");
	pr_open_object("gpu");
	print_gpu(&gpus[0]);
	pr_close_object();
	pr_close_object();
	pr_eol();
	pr_flush();
	cap_close(&c);
	return c.buf;
}

#define GPU0_TEXT "gpu 0 name sim0 model h200-141gb vram 141G engines 7 " \
		  "mode timesliced backend gpuvirt_sim"
#define GPU1_TEXT "gpu 1 name 0000:3b:00.0 model custom vram 1536M " \
		  "engines 2 mode mig backend gpuvirt_sim"
#define GPU0_JSON "{\"id\":0,\"name\":\"sim0\",\"model\":\"h200-141gb\"," \
		  "\"vram\":151397597184,\"engines\":7," \
		  "\"mode\":\"timesliced\",\"backend\":\"gpuvirt_sim\"}"
#define GPU1_JSON "{\"id\":1,\"name\":\"0000:3b:00.0\",\"model\":\"custom\"," \
		  "\"vram\":1610612736,\"engines\":2,\"mode\":\"mig\"," \
		  "\"backend\":\"gpuvirt_sim\"}"

TEST(show_text)
{
	char *out = show(false, false, 2);

	EXPECT_STREQ(GPU0_TEXT "\n" GPU1_TEXT "\n", out);
	free(out);
}

TEST(show_text_pretty_ignored)
{
	char *out = show(false, true, 1);

	EXPECT_STREQ(GPU0_TEXT "\n", out);
	free(out);
}

TEST(show_json)
{
	char *out = show(true, false, 2);

	EXPECT_STREQ("{\"gpu\":[" GPU0_JSON "," GPU1_JSON "]}\n", out);
	free(out);
}

TEST(show_json_pretty)
{
	char *out = show(true, true, 1);

	EXPECT_STREQ("{\n"
		     "    \"gpu\": [\n"
		     "        {\n"
		     "            \"id\": 0,\n"
		     "            \"name\": \"sim0\",\n"
		     "            \"model\": \"h200-141gb\",\n"
		     "            \"vram\": 151397597184,\n"
		     "            \"engines\": 7,\n"
		     "            \"mode\": \"timesliced\",\n"
		     "            \"backend\": \"gpuvirt_sim\"\n"
		     "        }\n"
		     "    ]\n"
		     "}\n", out);
	free(out);
}

TEST(show_empty)
{
	char *out;

	out = show(false, false, 0);
	EXPECT_STREQ("", out);
	free(out);

	out = show(true, false, 0);
	EXPECT_STREQ("{\"gpu\":[]}\n", out);
	free(out);

	out = show(true, true, 0);
	EXPECT_STREQ("{\n    \"gpu\": []\n}\n", out);
	free(out);
}

TEST(event_text)
{
	char *out = event(false, false);

	EXPECT_STREQ("[gpu add] " GPU0_TEXT "\n", out);
	free(out);
}

TEST(event_json)
{
	char *out = event(true, false);

	EXPECT_STREQ("{\"event\":\"add\",\"gpu\":" GPU0_JSON "}\n", out);
	free(out);
}

/* Strings that would break a text line or a JSON document. */
TEST(hostile_strings)
{
	struct capture c;

	cap_open(&c);
	pr_init(c.f, false, false);
	pr_string("name", NULL, "a\nb\tc");
	pr_string("model", NULL, "");
	pr_eol();
	cap_close(&c);
	EXPECT_STREQ("name a\\x0ab\\x09c model \"\"\n", c.buf);
	free(c.buf);

	cap_open(&c);
	pr_init(c.f, true, false);
	pr_open_object(NULL);
	pr_string("na\"me", NULL, "a\nb\"\\");
	pr_close_object();
	cap_close(&c);
	EXPECT_STREQ("{\"na\\\"me\":\"a\\nb\\\"\\\\\"}\n", c.buf);
	free(c.buf);
}

/* Text labels: NULL is the key, "" the value alone. */
TEST(labels)
{
	struct capture c;

	cap_open(&c);
	pr_init(c.f, false, false);
	pr_uint("id", "gpu", 3);
	pr_uint("count", NULL, 4);
	pr_string("tag", "", "bare");
	pr_eol();
	pr_eol();	/* nothing on the line: no empty line */
	pr_uint("id", NULL, 5);
	pr_eol();
	cap_close(&c);
	EXPECT_STREQ("gpu 3 count 4 bare\nid 5\n", c.buf);
	free(c.buf);
}

/* Nested containers, arrays of scalars, empty objects. */
TEST(json_nesting)
{
	struct capture c;

	cap_open(&c);
	pr_init(c.f, true, false);
	pr_open_object(NULL);
	pr_open_array("ids");
	pr_uint(NULL, NULL, 1);
	pr_uint(NULL, NULL, 2);
	pr_close_array();
	pr_open_object("empty");
	pr_close_object();
	pr_open_array("objs");
	pr_open_object(NULL);
	pr_uint("a", NULL, 1);
	pr_close_object();
	pr_open_object(NULL);
	pr_close_object();
	pr_close_array();
	pr_close_object();
	cap_close(&c);
	EXPECT_STREQ("{\"ids\":[1,2],\"empty\":{},\"objs\":[{\"a\":1},{}]}\n",
		     c.buf);
	free(c.buf);
}

/* Sizes, one expectation per line of the table. */
TEST(format_size)
{
	static const struct {
		uint64_t bytes;
		const char *text;
	} cases[] = {
		{ 0, "0" },
		{ 1, "1" },
		{ 1023, "1023" },
		{ 1024, "1K" },
		{ 1536, "1536" },
		{ 3072, "3K" },
		{ 512ULL << 20, "512M" },
		{ (3ULL << 20) + 1024, "3073K" },
		{ 141ULL << 30, "141G" },
		{ 1ULL << 40, "1T" },
		{ 1ULL << 50, "1P" },
		{ 1ULL << 60, "1E" },
		{ 15ULL << 60, "15E" },
		{ UINT64_MAX, "18446744073709551615" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		units_format_size(buf, sizeof(buf), cases[i].bytes);
		EXPECT_STREQ(cases[i].text, buf);
	}
	/* Truncated, still terminated, and the full length reported. */
	EXPECT_EQ(4U, units_format_size(buf, 3, 141ULL << 30));
	EXPECT_STREQ("14", buf);
}

/* Durations, one expectation per line of the table. */
TEST(format_time)
{
	static const struct {
		uint64_t ns;
		const char *text;
	} cases[] = {
		{ 0, "0" },
		{ 1, "1ns" },
		{ 999, "999ns" },
		{ 1000, "1us" },
		{ 1049, "1us" },		/* rounds down */
		{ 1050, "1.1us" },		/* half rounds up */
		{ 1500, "1.5us" },
		{ 250000, "250us" },
		{ 999949, "999.9us" },
		{ 999950, "1ms" },		/* not 1000us */
		{ 2000000, "2ms" },
		{ 12345678, "12.3ms" },
		{ 1000000000, "1s" },
		{ 1500000000, "1.5s" },
		{ 3600000000000ULL, "3600s" },
		{ UINT64_MAX - 1, "18446744073.7s" },
		{ UINT64_MAX, "inf" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		units_format_time(buf, sizeof(buf), cases[i].ns);
		EXPECT_STREQ(cases[i].text, buf) TH_LOG("%llu ns",
			(unsigned long long)cases[i].ns);
	}
	EXPECT_EQ(6U, units_format_time(buf, 3, 12345678));
	EXPECT_STREQ("12", buf);
}

/* Random bytes become a version 4, RFC 4122 variant UUID. */
TEST(format_uuid4)
{
	static const uint8_t zeros[16], ones[16] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	static const uint8_t seq[16] = {
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
	};
	char out[UNITS_UUID_LEN], back[UNITS_UUID_LEN];

	units_format_uuid4(zeros, out);
	EXPECT_STREQ("00000000-0000-4000-8000-000000000000", out);
	units_format_uuid4(ones, out);
	EXPECT_STREQ("ffffffff-ffff-4fff-bfff-ffffffffffff", out);
	units_format_uuid4(seq, out);
	EXPECT_STREQ("00112233-4455-4677-8899-aabbccddeeff", out);
	/* What it makes, the parser takes back unchanged. */
	ASSERT_EQ(0, units_parse_uuid(out, back));
	EXPECT_STREQ(out, back);
}

/* What vgpu.c prints for one vGPU: stats nest in JSON, flatten in text. */
static char *vgpu(bool json, uint64_t wait_max_ns)
{
	struct capture c;

	cap_open(&c);
	pr_init(c.f, json, false);
	pr_open_object(NULL);
	pr_string("uuid", "vgpu", "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9");
	pr_uint("gpu", NULL, 0);
	pr_string("type", NULL, "H200-35C");
	pr_uint("weight", NULL, 200);
	pr_uint("min", NULL, 10);
	pr_uint("max", NULL, 50);
	pr_size("vram-offset", NULL, 35ULL << 30);
	pr_size("vram", NULL, 35ULL << 30);
	pr_bool("open", NULL, false);
	pr_uint("ctx", NULL, 1);
	pr_open_object("stats");
	pr_time("run", NULL, 1500000000);
	pr_uint("slices", NULL, 750);
	pr_uint("preemptions", NULL, 3);
	pr_time("work", NULL, 1480000000);
	pr_uint("packets", NULL, 42);
	pr_time("wait-max", NULL, wait_max_ns);
	pr_close_object();
	pr_close_object();
	pr_eol();
	pr_flush();
	cap_close(&c);
	return c.buf;
}

TEST(vgpu_text)
{
	char *out = vgpu(false, 64000);

	EXPECT_STREQ("vgpu 0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9 gpu 0 "
		     "type H200-35C weight 200 min 10 max 50 vram-offset 35G "
		     "vram 35G open false ctx 1 run 1.5s slices 750 "
		     "preemptions 3 work 1.5s packets 42 wait-max 64us\n", out);
	free(out);

	out = vgpu(false, UINT64_MAX);
	EXPECT_NE(NULL, strstr(out, " wait-max inf\n"));
	free(out);
}

TEST(vgpu_json)
{
	char *out = vgpu(true, 64000);

	EXPECT_STREQ("{\"uuid\":\"0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9\","
		     "\"gpu\":0,\"type\":\"H200-35C\",\"weight\":200,"
		     "\"min\":10,\"max\":50,\"vram-offset\":37580963840,"
		     "\"vram\":37580963840,\"open\":false,\"ctx\":1,"
		     "\"stats\":{\"run\":1500000000,\"slices\":750,"
		     "\"preemptions\":3,\"work\":1480000000,\"packets\":42,"
		     "\"wait-max\":64000}}\n", out);
	free(out);
}

/* Booleans print the same word in both forms. */
TEST(booleans)
{
	struct capture c;

	cap_open(&c);
	pr_init(c.f, false, false);
	pr_bool("open", NULL, true);
	pr_bool("busy", "", false);
	pr_eol();
	cap_close(&c);
	EXPECT_STREQ("open true false\n", c.buf);
	free(c.buf);

	cap_open(&c);
	pr_init(c.f, true, false);
	pr_open_object(NULL);
	pr_bool("open", NULL, true);
	pr_bool("busy", "", false);
	pr_close_object();
	cap_close(&c);
	EXPECT_STREQ("{\"open\":true,\"busy\":false}\n", c.buf);
	free(c.buf);
}

TEST_HARNESS_MAIN

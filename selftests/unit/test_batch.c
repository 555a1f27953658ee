// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of "gpuvirtctl -batch" (user/batch.c): how a line is split
 * into words, and how a file of commands is run: the line each command is
 * known by, stopping at the first failure, -force, and the exit status.
 */
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"

#include "batch.h"

/* Splitting one line ------------------------------------------------------- */

FIXTURE(split) {
	char line[256];
	char *argv[16];
};

FIXTURE_VARIANT(split) {
	const char *line;
	/* the words joined by '|', or NULL when the line is an error */
	const char *words;
	const char *err;
};

#define WORDS(vname, l, w)					\
	FIXTURE_VARIANT_ADD(split, vname) { .line = l, .words = w }
#define ERR(vname, l, e)					\
	FIXTURE_VARIANT_ADD(split, vname) { .line = l, .err = e }

WORDS(empty, "", "");
WORDS(blanks, " \t  \t", "");
WORDS(comment_line, "# vgpu del uuid x", "");
WORDS(comment_indented, "   # a comment", "");
WORDS(plain, "vgpu add gpu 0 type sim-1g", "vgpu|add|gpu|0|type|sim-1g");
WORDS(many_blanks, "  gpu\t\tshow   id  3  ", "gpu|show|id|3");
WORDS(trailing_comment, "gpu show # all of them", "gpu|show");
WORDS(hash_inside_word, "gpu a#b", "gpu|a#b");
WORDS(hash_word_ends, "gpu a #b c", "gpu|a");
WORDS(double_quotes, "type show name \"a b\"", "type|show|name|a b");
WORDS(single_quotes, "x 'a \"b\" c'", "x|a \"b\" c");
WORDS(quote_joins_word, "x ab'c d'ef", "x|abc def");
WORDS(quoted_hash, "x '#not a comment'", "x|#not a comment");
WORDS(empty_double, "x \"\" y", "x||y");
WORDS(empty_single, "x '' y", "x||y");
WORDS(escape_blank, "x a\\ b", "x|a b");
WORDS(escape_hash, "x \\#y", "x|#y");
WORDS(escape_in_double, "x \"a\\\"b\\\\\"", "x|a\"b\\");
WORDS(no_escape_in_single, "x 'a\\b'", "x|a\\b");
WORDS(carriage_return, "gpu show\r", "gpu|show");
ERR(open_double, "x \"abc", "unterminated \" quote");
ERR(open_single, "x 'abc", "unterminated ' quote");
ERR(lone_backslash, "x \\", "backslash at the end of the input");
ERR(too_many, "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",
    "too many words on the line");

FIXTURE_SETUP(split)
{
}

FIXTURE_TEARDOWN(split)
{
}

TEST_F(split, line)
{
	const char *err = NULL;
	char joined[256] = "";
	int argc, i;

	snprintf(self->line, sizeof(self->line), "%s", variant->line);
	argc = batch_split(self->line, self->argv, 16, &err);
	if (variant->err) {
		ASSERT_EQ(-1, argc);
		ASSERT_NE(NULL, err);
		ASSERT_STREQ(variant->err, err);
		return;
	}
	ASSERT_LE(0, argc);
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(joined, "|");
		strcat(joined, self->argv[i]);
	}
	ASSERT_STREQ(variant->words, joined);
}

TEST(continues)
{
	EXPECT_FALSE(batch_line_continues(""));
	EXPECT_FALSE(batch_line_continues("gpu show"));
	EXPECT_TRUE(batch_line_continues("gpu \\"));
	EXPECT_FALSE(batch_line_continues("gpu \\\\"));
	EXPECT_TRUE(batch_line_continues("gpu \\\\\\"));
}

/* Running a file ------------------------------------------------------------- */

/* What the hooks saw: one "LINE:word|word...=status" or "LINE!msg" each. */
struct record {
	char log[1024];
	/* commands whose first word is "fail1"/"fail2" return 1/2 */
};

static int rec_run(void *arg, const char *file, unsigned int line, int argc,
		   char **argv)
{
	struct record *r = arg;
	size_t n = strlen(r->log);
	int i, status = 0;

	if (!strcmp(argv[0], "fail1"))
		status = 1;
	else if (!strcmp(argv[0], "fail2"))
		status = 2;
	n += snprintf(r->log + n, sizeof(r->log) - n, "%s:%u:", file, line);
	for (i = 0; i < argc; i++)
		n += snprintf(r->log + n, sizeof(r->log) - n, "%s%s",
			      i ? "|" : "", argv[i]);
	snprintf(r->log + n, sizeof(r->log) - n, "=%d ", status);
	return status;
}

static void rec_error(void *arg, const char *file, unsigned int line,
		      const char *msg)
{
	struct record *r = arg;
	size_t n = strlen(r->log);

	snprintf(r->log + n, sizeof(r->log) - n, "%s:%u!%s ", file, line, msg);
}

static const struct batch_ops rec_ops = { .run = rec_run, .error = rec_error };

FIXTURE(file) {
	struct record rec;
};

FIXTURE_VARIANT(file) {
	const char *text;
	bool force;
	const char *log;	/* expected record, each entry ending in ' ' */
	int status;
	unsigned int failed;
};

FIXTURE_SETUP(file)
{
	memset(&self->rec, 0, sizeof(self->rec));
}

FIXTURE_TEARDOWN(file)
{
}

FIXTURE_VARIANT_ADD(file, empty) {
	.text = "", .log = "", .status = 0, .failed = 0,
};

FIXTURE_VARIANT_ADD(file, only_comments) {
	.text = "# one\n\n   \n\t# two\n", .log = "",
};

FIXTURE_VARIANT_ADD(file, all_pass) {
	.text = "a 1\n\n# c\nb 2\nc\n",
	.log = "f:1:a|1=0 f:4:b|2=0 f:5:c=0 ",
};

FIXTURE_VARIANT_ADD(file, no_final_newline) {
	.text = "a\nb", .log = "f:1:a=0 f:2:b=0 ",
};

FIXTURE_VARIANT_ADD(file, crlf) {
	.text = "a x\r\nb\r\n", .log = "f:1:a|x=0 f:2:b=0 ",
};

/* a joined command is known by its first line, and counting goes on */
FIXTURE_VARIANT_ADD(file, continuation) {
	.text = "a 1 \\\n  2 \\\n3\nb\n",
	.log = "f:1:a|1|2|3=0 f:4:b=0 ",
};

FIXTURE_VARIANT_ADD(file, continuation_at_eof) {
	.text = "a \\", .log = "f:1:a=0 ",
};

FIXTURE_VARIANT_ADD(file, stop_at_first_failure) {
	.text = "a\n\nfail1 x\nb\n",
	.log = "f:1:a=0 f:3:fail1|x=1 ", .status = 1, .failed = 1,
};

FIXTURE_VARIANT_ADD(file, force_goes_on) {
	.text = "fail1\nfail2\nfail1\nb\n", .force = true,
	.log = "f:1:fail1=1 f:2:fail2=2 f:3:fail1=1 f:4:b=0 ",
	.status = 2, .failed = 3,
};

FIXTURE_VARIANT_ADD(file, syntax_stops) {
	.text = "a\nb 'open\nc\n",
	.log = "f:1:a=0 f:2!unterminated ' quote ",
	.status = BATCH_EXIT_SYNTAX, .failed = 1,
};

FIXTURE_VARIANT_ADD(file, syntax_forced) {
	.text = "a \\\n'open\nc\n", .force = true,
	.log = "f:1!unterminated ' quote f:3:c=0 ",
	.status = BATCH_EXIT_SYNTAX, .failed = 1,
};

TEST_F(file, run)
{
	unsigned int failed = 99;
	FILE *in;
	int ret;

	/* a real file: fmemopen() cannot hold an empty one */
	in = tmpfile();
	ASSERT_NE(NULL, in);
	ASSERT_EQ(strlen(variant->text),
		  fwrite(variant->text, 1, strlen(variant->text), in));
	rewind(in);
	ret = batch_run(in, "f", variant->force, &rec_ops, &self->rec,
			&failed);
	fclose(in);
	EXPECT_EQ(variant->status, ret);
	EXPECT_EQ(variant->failed, failed);
	EXPECT_STREQ(variant->log, self->rec.log);
}

TEST_HARNESS_MAIN

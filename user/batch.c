// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpuvirtctl -batch: reading a file of commands, one a line (batch.h says
 * how a line is split). gpuvirtctl.c runs each command with the socket and
 * options of the one process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

int batch_split(char *line, char **argv, int max, const char **err)
{
	char *in = line, *out = line;
	int argc = 0;

	for (;;) {
		while (is_blank(*in))
			in++;
		if (!*in || *in == '#')
			return argc;
		if (argc == max) {
			*err = "too many words on the line";
			return -1;
		}
		argv[argc++] = out;
		/* One word: copy it down over its quotes and backslashes. */
		while (*in && !is_blank(*in)) {
			char q = *in;

			if (q == '\\') {
				if (!in[1]) {
					*err = "backslash at the end of the input";
					return -1;
				}
				*out++ = in[1];
				in += 2;
				continue;
			}
			if (q != '\'' && q != '"') {
				*out++ = *in++;
				continue;
			}
			in++;
			while (*in && *in != q) {
				if (q == '"' && *in == '\\' && in[1])
					in++;
				*out++ = *in++;
			}
			if (!*in) {
				*err = q == '"' ? "unterminated \" quote" :
						  "unterminated ' quote";
				return -1;
			}
			in++;
		}
		/*
		 * The word ends at a blank or at the end; @out never passes
		 * @in, so ending it here overwrites at most the blank.
		 */
		if (*in)
			in++;
		*out++ = '\0';
	}
}

bool batch_line_continues(const char *line)
{
	size_t n = strlen(line), k = 0;

	while (k < n && line[n - 1 - k] == '\\')
		k++;
	return k % 2 == 1;
}

/* Drop the newline (and a DOS carriage return) ending @buf of @len bytes. */
static size_t chomp(char *buf, size_t len)
{
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (len && buf[len - 1] == '\r')
		buf[--len] = '\0';
	return len;
}

/*
 * Read the next command into *@cmd (joined lines, without the joining
 * backslashes), setting *@first to its first line. Returns 1, 0 at the end
 * of @in, or a negative errno.
 */
static int read_command(FILE *in, char **cmd, size_t *cmd_cap,
			unsigned int *lineno, unsigned int *first)
{
	char *buf = NULL;
	size_t cap = 0, len = 0;
	bool more = true;

	*first = *lineno + 1;
	while (more) {
		ssize_t n = getline(&buf, &cap, in);

		if (n < 0) {
			int err = ferror(in) ? -errno : 0;

			free(buf);
			if (err)
				return err;
			/* A last line ending in a backslash stands alone. */
			return len ? 1 : 0;
		}
		++*lineno;
		n = (ssize_t)chomp(buf, (size_t)n);
		more = batch_line_continues(buf);
		if (more)
			buf[--n] = '\0';
		if (len + (size_t)n + 1 > *cmd_cap) {
			char *p = realloc(*cmd, len + (size_t)n + 1);

			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			*cmd = p;
			*cmd_cap = len + (size_t)n + 1;
		}
		memcpy(*cmd + len, buf, (size_t)n + 1);
		len += (size_t)n;
	}
	free(buf);
	return 1;
}

int batch_run(FILE *in, const char *file, bool force,
	      const struct batch_ops *ops, void *arg, unsigned int *failed)
{
	unsigned int lineno = 0, first, nfailed = 0;
	char *cmd = NULL, **argv = NULL;
	size_t cmd_cap = 0, argv_cap = 0;
	int worst = 0;

	for (;;) {
		const char *err = NULL;
		size_t need;
		int argc, status, ret;

		ret = read_command(in, &cmd, &cmd_cap, &lineno, &first);
		if (ret == 0)
			break;
		if (ret < 0) {
			ops->error(arg, file, lineno + 1, strerror(-ret));
			nfailed++;
			worst = 1;
			break;
		}
		/* A line of n bytes holds at most n / 2 + 1 words. */
		need = strlen(cmd) / 2 + 1;
		if (need > argv_cap) {
			char **p = realloc(argv, need * sizeof(*argv));

			if (!p) {
				ops->error(arg, file, first, strerror(ENOMEM));
				nfailed++;
				worst = 1;
				break;
			}
			argv = p;
			argv_cap = need;
		}
		argc = batch_split(cmd, argv, (int)argv_cap, &err);
		if (argc == 0)
			continue;
		if (argc < 0) {
			ops->error(arg, file, first, err);
			status = BATCH_EXIT_SYNTAX;
		} else {
			status = ops->run(arg, file, first, argc, argv);
		}
		if (!status)
			continue;
		nfailed++;
		if (status > worst)
			worst = status;
		if (!force)
			break;
	}
	free(argv);
	free(cmd);
	if (failed)
		*failed = nfailed;
	return worst;
}

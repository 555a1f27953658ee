/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * "gpuvirtctl -batch FILE": many commands in one process.
 *
 * A batch file holds one command a line, written as on the command line
 * after the global options ("vgpu add gpu 0 type sim-1g"). The reader splits
 * each line into words the way a shell would for the simple cases, and as
 * "ip -batch" does:
 *
 *  - blanks (spaces, tabs) separate words; blank lines are skipped;
 *  - a word starting with '#' outside quotes starts a comment, to the end of
 *    the line ("a#b" is one word);
 *  - '...' quotes everything up to the next '; "..." too, except that a
 *    backslash inside it escapes the next character;
 *  - outside quotes a backslash escapes the next character, and a backslash
 *    at the very end of a line joins the next line to it;
 *  - "" or '' is an empty word.
 *
 * A command is known by the number of the line it starts on (the first line
 * is 1). This module does no printing of its own besides what its callers'
 * hooks do, and no netlink: it is tested on its own (test_batch.c).
 */
#ifndef GPUVIRTCTL_BATCH_H
#define GPUVIRTCTL_BATCH_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Split @line (NUL-terminated, no newline) in place into words. @argv gets
 * up to @max pointers into @line. Returns the number of words, or -1 with
 * *@err pointing to a static message ("unterminated ' quote"). A backslash
 * ending the line is an error here: batch_run() joins lines before this.
 */
int batch_split(char *line, char **argv, int max, const char **err);

/* Does the raw line @line (no newline) end in a backslash that joins lines? */
bool batch_line_continues(const char *line);

struct batch_ops {
	/*
	 * Run one command; returns an exit status (0 is success). @file and
	 * @line name where it was, for error messages.
	 */
	int (*run)(void *arg, const char *file, unsigned int line, int argc,
		   char **argv);
	/* Report an error of the file itself (a bad quote, a read error). */
	void (*error)(void *arg, const char *file, unsigned int line,
		      const char *msg);
};

/* Exit status batch_run() gives for an error of the file itself. */
#define BATCH_EXIT_SYNTAX	2

/*
 * Read commands from @in (named @file in messages) and run each with
 * @ops->run. Without @force, stop at the first command that fails (or a
 * line that cannot be split) and return its exit status. With @force, run
 * every command and return the highest exit status of those that failed, or
 * 0. A read error always stops, with status 1. @failed, if not NULL, counts
 * the commands that failed.
 */
int batch_run(FILE *in, const char *file, bool force,
	      const struct batch_ops *ops, void *arg, unsigned int *failed);

#endif /* GPUVIRTCTL_BATCH_H */

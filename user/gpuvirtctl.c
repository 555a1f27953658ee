// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpuvirtctl: the userspace helper of gpuvirt.
 *
 *	gpuvirtctl [ OPTIONS ] OBJECT { COMMAND | help }
 *	gpuvirtctl [ OPTIONS ] { apply | assert } -f FILE ...
 *	gpuvirtctl [ OPTIONS ] -batch FILE [ -force ]
 *
 * This file parses the global options and dispatches to an object's command
 * through the tables the objects export (gpu.c, type.c, vgpu.c, sched.c,
 * monitor.c) or to one of the commands on a configuration file (apply.c),
 * and holds what their commands share: error reporting, the netlink socket
 * and the printing of "show" replies.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/gpuvirt.h>

#include "batch.h"
#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"

static const struct object *const objects[] = {
	&gpu_object,
	&type_object,
	&vgpu_object,
	&sched_object,
	&monitor_object,
	&stats_object,
	&pt_object,
	&mig_object,
};

#define N_OBJECTS	(sizeof(objects) / sizeof(objects[0]))

/* Commands on a configuration file: dispatched as objects, listed apart. */
static const struct object *const file_cmds[] = {
	&apply_object,
	&assert_object,
};

#define N_FILE_CMDS	(sizeof(file_cmds) / sizeof(file_cmds[0]))

/* Errors ------------------------------------------------------------------ */

static char err_context[64];
/* In a batch: "FILE:LINE", where the command being run is. */
static char err_where[256];

void err_set_context(const char *obj, const char *cmd)
{
	if (!obj)
		err_context[0] = '\0';
	else if (!cmd || !strcmp(obj, cmd))
		snprintf(err_context, sizeof(err_context), "%s", obj);
	else
		snprintf(err_context, sizeof(err_context), "%s %s", obj, cmd);
}

void err_print(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("gpuvirtctl: ", stderr);
	if (err_where[0])
		fprintf(stderr, "%s: ", err_where);
	if (err_context[0])
		fprintf(stderr, "%s: ", err_context);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Netlink, opened by the commands that need it ------------------------------ */

static int ctx_nl_open(struct ctx *ctx, bool quiet)
{
	static struct nl nl;
	int ret;

	if (ctx->nl)
		return EXIT_OK;
	ret = nl_open(&nl, GPUVIRT_FAMILY_NAME);
	if (ret == -ENOENT) {
		if (!quiet)
			fprintf(stderr, "gpuvirtctl: the %s netlink family is not available; is the gpuvirt module loaded?\n",
				GPUVIRT_FAMILY_NAME);
		nl_close(&nl);
		return quiet ? -ENOENT : EXIT_RUNTIME;
	}
	if (ret) {
		nl_perror(&nl, NULL);
		nl_close(&nl);
		return EXIT_RUNTIME;
	}
	ctx->nl = &nl;
	return EXIT_OK;
}

int ctx_nl(struct ctx *ctx)
{
	return ctx_nl_open(ctx, false);
}

int ctx_nl_try(struct ctx *ctx)
{
	return ctx_nl_open(ctx, true);
}

/* Show replies ------------------------------------------------------------ */

struct show_state {
	const char *key;
	int (*print)(const struct nlmsghdr *nlh);
	bool opened;
};

static void show_open(struct show_state *st)
{
	if (st->opened)
		return;
	st->opened = true;
	pr_open_object(NULL);
	pr_open_array(st->key);
}

static int show_cb(const struct nlmsghdr *nlh, void *data)
{
	struct show_state *st = data;
	int ret;

	show_open(st);
	pr_open_object(NULL);
	ret = st->print(nlh);
	pr_close_object();
	pr_eol();
	return ret;
}

int show_exchange_more(struct ctx *ctx, const char *key,
		       int (*print)(const struct nlmsghdr *nlh),
		       const struct nl_attr_names *names,
		       void (*more)(void *arg), void *arg)
{
	struct show_state st = { .key = key, .print = print };
	int ret;

	ret = nl_exchange(ctx->nl, show_cb, &st);
	/* Without a kernel error, @print has reported the problem. */
	if (ret && ctx->nl->error.err)
		nl_perror(ctx->nl, names);
	if (!ret || st.opened) {
		show_open(&st);
		if (!ret && more)
			more(arg);
		pr_close_array();
		pr_close_object();
	}
	return ret ? EXIT_RUNTIME : EXIT_OK;
}

int show_exchange(struct ctx *ctx, const char *key,
		  int (*print)(const struct nlmsghdr *nlh),
		  const struct nl_attr_names *names)
{
	return show_exchange_more(ctx, key, print, names, NULL, NULL);
}

void show_list(const char *key, void (*more)(void *arg), void *arg)
{
	pr_open_object(NULL);
	pr_open_array(key);
	more(arg);
	pr_close_array();
	pr_close_object();
}

void pr_enum(const char *key, const char *label, const struct arg_enum *names,
	     uint32_t val)
{
	const struct arg_enum *e;

	for (e = names; e->name; e++) {
		if (e->value == val) {
			pr_string(key, label, e->name);
			return;
		}
	}
	pr_uint(key, label, val);	/* from a newer kernel */
}

/* Usage ------------------------------------------------------------------- */

static void usage_cmd(FILE *out, const char *prefix, const char *obj,
		      const struct cmd *cmd)
{
	char args[512];

	args_usage(cmd->args, args, sizeof(args));
	fprintf(out, "%sgpuvirtctl %s", prefix, obj);
	if (strcmp(obj, cmd->name))
		fprintf(out, " %s", cmd->name);
	fprintf(out, "%s%s\n", args[0] ? " " : "", args);
}

void usage_object(FILE *out, const struct object *obj)
{
	const struct cmd *c;

	if (obj->bare) {
		usage_cmd(out, "Usage: ", obj->name, obj->bare);
		return;
	}
	for (c = obj->cmds; c->name; c++)
		usage_cmd(out, c == obj->cmds ? "Usage: " : "       ",
			  obj->name, c);
	fprintf(out, "       gpuvirtctl %s help\n", obj->name);
}

static void usage(FILE *out)
{
	size_t i;

	fputs("Usage: gpuvirtctl [ OPTIONS ] OBJECT { COMMAND | help }\n", out);
	for (i = 0; i < N_FILE_CMDS; i++)
		usage_cmd(out, "       ", file_cmds[i]->name, file_cmds[i]->bare);
	fputs("       gpuvirtctl [ OPTIONS ] -batch FILE [ -force ]\n"
	      "       gpuvirtctl help\n"
	      "where  OBJECT := {", out);
	for (i = 0; i < N_OBJECTS; i++)
		fprintf(out, " %s%s", objects[i]->name,
			i + 1 < N_OBJECTS ? " |" : " }\n");
	fputs("       OPTIONS := { -j | --json  -p | --pretty  -V | --version  -h | --help\n"
	      "                    --sysfs-root DIR }\n"
	      "-batch FILE runs the commands of FILE (\"-\" for stdin), one a line.\n"
	      "Run \"gpuvirtctl OBJECT help\" for the commands of an object.\n",
	      out);
}

/* Dispatch ---------------------------------------------------------------- */

static int run_cmd(struct ctx *ctx, const struct object *obj,
		   const struct cmd *cmd, int argc, char **argv)
{
	char err[256];
	uint64_t given;
	void *opts;
	int ret;

	err_set_context(obj->name, cmd->name);
	if (argc > 0 && !strcmp(argv[0], "help")) {
		usage_object(stdout, obj);
		return EXIT_OK;
	}

	opts = calloc(1, cmd->opts_size ? cmd->opts_size : 1);
	if (!opts) {
		err_print("%s", strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	if (args_parse(cmd->args, argc, argv, opts, &given, err,
		       sizeof(err))) {
		err_print("%s", err);
		fprintf(stderr, "Try \"gpuvirtctl %s help\".\n", obj->name);
		free(opts);
		return EXIT_USAGE;
	}
	ret = cmd->run(ctx, opts, given);
	free(opts);
	return ret;
}

static int run_object(struct ctx *ctx, const struct object *obj, int argc,
		      char **argv)
{
	const struct cmd *c;

	if (obj->bare)
		return run_cmd(ctx, obj, obj->bare, argc, argv);

	/* The object alone runs its first command, as "gpu" does "gpu show". */
	if (argc == 0)
		return run_cmd(ctx, obj, obj->cmds, 0, argv);
	if (!strcmp(argv[0], "help")) {
		usage_object(stdout, obj);
		return EXIT_OK;
	}
	for (c = obj->cmds; c->name; c++)
		if (!strcmp(c->name, argv[0]))
			return run_cmd(ctx, obj, c, argc - 1, argv + 1);

	err_set_context(obj->name, NULL);
	err_print("unknown command \"%s\"", argv[0]);
	fprintf(stderr, "Try \"gpuvirtctl %s help\".\n", obj->name);
	return EXIT_USAGE;
}

/*
 * Run one command line, "OBJECT COMMAND ARGS...", after the options;
 * returns its exit status. Its output is one document, flushed.
 */
static int run_words(struct ctx *ctx, int argc, char **argv)
{
	int ret = EXIT_USAGE;
	size_t i;

	err_set_context(NULL, NULL);
	if (!strcmp(argv[0], "help")) {
		usage(stdout);
		return EXIT_OK;
	}

	pr_init(stdout, ctx->json, ctx->pretty);
	for (i = 0; i < N_OBJECTS + N_FILE_CMDS; i++) {
		const struct object *obj = i < N_OBJECTS ? objects[i] :
					   file_cmds[i - N_OBJECTS];

		if (strcmp(obj->name, argv[0]))
			continue;
		ret = run_object(ctx, obj, argc - 1, argv + 1);
		if (pr_flush() && ret == EXIT_OK) {
			err_print("cannot write the output: %s",
				  strerror(errno));
			ret = EXIT_RUNTIME;
		}
		return ret;
	}

	err_print("unknown object \"%s\"", argv[0]);
	fputs("Try \"gpuvirtctl help\".\n", stderr);
	return ret;
}

/* Batch ------------------------------------------------------------------- */

static int batch_cmd(void *arg, const char *file, unsigned int line,
		     int argc, char **argv)
{
	int ret;

	snprintf(err_where, sizeof(err_where), "%s:%u", file, line);
	ret = run_words(arg, argc, argv);
	err_where[0] = '\0';
	return ret;
}

static void batch_error(void *arg, const char *file, unsigned int line,
			const char *msg)
{
	(void)arg;
	snprintf(err_where, sizeof(err_where), "%s:%u", file, line);
	err_set_context(NULL, NULL);
	err_print("%s", msg);
	err_where[0] = '\0';
}

static const struct batch_ops batch_ops = {
	.run = batch_cmd,
	.error = batch_error,
};

static int run_batch(struct ctx *ctx, const char *path, bool force)
{
	bool is_stdin = !strcmp(path, "-");
	unsigned int failed = 0;
	FILE *in;
	int ret;

	in = is_stdin ? stdin : fopen(path, "re");
	if (!in) {
		err_print("cannot open the batch file \"%s\": %s", path,
			  strerror(errno));
		return EXIT_RUNTIME;
	}
	ret = batch_run(in, is_stdin ? "stdin" : path, force, &batch_ops, ctx,
			&failed);
	if (!is_stdin)
		fclose(in);
	err_set_context(NULL, NULL);
	if (force && failed)
		err_print("%u command%s of %s failed", failed,
			  failed == 1 ? "" : "s", is_stdin ? "stdin" : path);
	return ret;
}

static const struct option long_options[] = {
	{ "json",	no_argument,	NULL, 'j' },
	{ "pretty",	no_argument,	NULL, 'p' },
	{ "version",	no_argument,	NULL, 'V' },
	{ "help",	no_argument,	NULL, 'h' },
	{ "sysfs-root",	required_argument, NULL, 'R' },
	{ "batch",	required_argument, NULL, 'b' },
	{ "force",	no_argument,	NULL, 'F' },
	{ NULL,		0,		NULL, 0 }
};

/*
 * "-batch" and "-force" are spelt with one dash, as in ip(8): before
 * getopt sees them (it would read "-batch" as -b "atch"), they become their
 * long forms. Only the options before the object are looked at.
 */
static void long_single_dash(int argc, char **argv)
{
	static char batch[] = "--batch", force[] = "--force";
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--"))
			return;
		if (!strcmp(argv[i], "-batch"))
			argv[i] = batch;
		else if (!strcmp(argv[i], "-force"))
			argv[i] = force;
		/* the directory after --sysfs-root is not an option */
		if (!strcmp(argv[i], "--sysfs-root") || !strcmp(argv[i], "-R") ||
		    !strcmp(argv[i], "-b") || !strcmp(argv[i], "--batch"))
			i++;
	}
}

int main(int argc, char **argv)
{
	struct ctx ctx = { .json = false };
	const char *bad, *batch = NULL;
	bool force = false;
	int opt, ret;

	opterr = 0;
	long_single_dash(argc, argv);
	/* "+": options only before the object, as in ip and devlink. */
	while ((opt = getopt_long(argc, argv, "+jpVhR:b:", long_options,
				  NULL)) != -1) {
		switch (opt) {
		case 'j':
			ctx.json = true;
			break;
		case 'p':
			ctx.pretty = true;
			break;
		case 'V':
			printf("gpuvirtctl %s (netlink family %s version %d)\n",
			       GPUVIRTCTL_VERSION, GPUVIRT_FAMILY_NAME,
			       GPUVIRT_FAMILY_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'R':
			ctx.sysfs_root = optarg;
			break;
		case 'b':
			batch = optarg;
			break;
		case 'F':
			force = true;
			break;
		default:
			bad = argv[optind - 1];
			if (optopt == 'R')
				err_print("option \"--sysfs-root\" needs a directory");
			else if (optopt == 'b')
				err_print("option \"-batch\" needs a file (\"-\" for stdin)");
			else if (!optopt)
				err_print("unknown option \"%s\"", bad);
			else if (!strncmp(bad, "--", 2) && strchr(bad, '='))
				err_print("option \"%s\" takes no value", bad);
			else
				err_print("unknown option \"-%c\"", optopt);
			fputs("Try \"gpuvirtctl help\".\n", stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;

	if (batch) {
		if (argc > 0) {
			err_print("\"-batch\" takes its commands from the file, not \"%s\"",
				  argv[0]);
			return EXIT_USAGE;
		}
		ret = run_batch(&ctx, batch, force);
	} else if (force) {
		err_print("\"-force\" goes with \"-batch\"");
		return EXIT_USAGE;
	} else if (argc == 0) {
		usage(stderr);
		return EXIT_USAGE;
	} else {
		ret = run_words(&ctx, argc, argv);
	}
	if (ctx.nl)
		nl_close(ctx.nl);
	return ret;
}

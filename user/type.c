// SPDX-License-Identifier: GPL-2.0-only
/*
 * The type object: the vGPU types (profiles) a GPU offers.
 *
 *	gpuvirtctl type show [ gpu ID | dev NAME ] [ name NAME ] [ stack STACK ]
 *
 * gpuvirt's types come over netlink; the other stacks' types (stacks.c)
 * follow, matched by name as stk_match_type() does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"
#include "stacks_cmd.h"

/* The command-line keywords, for the kernel's error messages. */
static const char *const type_keywords[GPUVIRT_A_TYPE_MAX + 1] = {
	[GPUVIRT_A_TYPE_GPU_ID]			= "gpu",
};

static const struct nl_attr_names type_names = TYPE_ATTR_NAMES(type_keywords);

/*
 * The members of one type. The description, key=value pairs with blanks,
 * comes last so that the text line stays easy to split.
 */
static int type_print(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[GPUVIRT_A_TYPE_MAX + 1];

	if (nl_parse(nlh, type_policy, GPUVIRT_A_TYPE_MAX, tb)) {
		err_print("malformed type message from the kernel");
		return -EINVAL;
	}

	if (tb[GPUVIRT_A_TYPE_GPU_ID])
		pr_uint("gpu", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_TYPE_GPU_ID]));
	if (tb[GPUVIRT_A_TYPE_NAME])
		pr_string("name", "type",
			  mnl_attr_get_str(tb[GPUVIRT_A_TYPE_NAME]));
	if (tb[GPUVIRT_A_TYPE_SERIES])
		pr_string("series", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_TYPE_SERIES]));
	if (tb[GPUVIRT_A_TYPE_FB_SIZE])
		pr_size("fb", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_TYPE_FB_SIZE]));
	if (tb[GPUVIRT_A_TYPE_MAX_INSTANCES])
		pr_uint("max-instances", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_TYPE_MAX_INSTANCES]));
	if (tb[GPUVIRT_A_TYPE_AVAILABLE_INSTANCES])
		pr_uint("available-instances", "available",
			mnl_attr_get_u32(tb[GPUVIRT_A_TYPE_AVAILABLE_INSTANCES]));
	if (tb[GPUVIRT_A_TYPE_DESCRIPTION])
		pr_string("description", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_TYPE_DESCRIPTION]));
	return 0;
}

/* type show --------------------------------------------------------------- */

enum { TYPE_SHOW_GPU, TYPE_SHOW_NAME, TYPE_SHOW_DEV, TYPE_SHOW_STACK };

struct type_show_opts {
	uint32_t gpu;
	const char *name;
	const char *dev;
	uint32_t stack;
};

static const struct arg_spec type_show_args[] = {
	[TYPE_SHOW_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct type_show_opts, gpu),
		.excludes = ARG_BIT(TYPE_SHOW_DEV),
	},
	[TYPE_SHOW_NAME] = {
		.keyword = "name", .type = ARG_STRING, .meta = "NAME",
		.offset = offsetof(struct type_show_opts, name),
		.max_len = 95,
	},
	[TYPE_SHOW_DEV] = {
		.keyword = "dev", .type = ARG_STRING, .meta = "NAME",
		.offset = offsetof(struct type_show_opts, dev),
		.max_len = 63,
	},
	[TYPE_SHOW_STACK] = {
		.keyword = "stack", .type = ARG_ENUM, .meta = "STACK",
		.offset = offsetof(struct type_show_opts, stack),
		.enums = stk_kind_enums,
	},
	{ .keyword = NULL }
};

static int type_print_stack(const struct nlmsghdr *nlh)
{
	if (pr_is_json())
		pr_string("stack", NULL, "gpuvirt");
	return type_print(nlh);
}

/* Our types over netlink, then @sh's entries if @more. */
static int type_show_ours(struct ctx *ctx, const struct type_show_opts *opts,
			  uint64_t given, struct stk_show *sh, bool more)
{
	struct nlmsghdr *nlh;
	int ret;

	ret = ctx_nl(ctx);
	if (ret) {
		if (more && stk_count(sh, STK_TYPES)) {
			show_list("type", stk_show_types, sh);
			ret = EXIT_OK;
		}
		return ret;
	}
	/* One type by GPU and name; else the types of one GPU or of all. */
	if (given & ARG_BIT(TYPE_SHOW_NAME)) {
		if (strlen(opts->name) > 23) {
			err_print("\"name\" of a gpuvirt type is at most 23 characters");
			return EXIT_USAGE;
		}
		nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_TYPE_GET, 0);
		mnl_attr_put_strz(nlh, GPUVIRT_A_TYPE_NAME, opts->name);
	} else {
		nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_TYPE_GET, NLM_F_DUMP);
	}
	if (given & ARG_BIT(TYPE_SHOW_GPU))
		mnl_attr_put_u32(nlh, GPUVIRT_A_TYPE_GPU_ID, opts->gpu);
	return show_exchange_more(ctx, "type", type_print_stack, &type_names,
				  more ? stk_show_types : NULL, sh);
}

static int type_show(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct type_show_opts *opts = o;
	bool stack = given & ARG_BIT(TYPE_SHOW_STACK);
	bool by_dev = given & ARG_BIT(TYPE_SHOW_DEV);
	bool ours = !by_dev && !ctx->sysfs_root &&
		    (!stack || opts->stack == STK_GPUVIRT);
	bool others = !(given & ARG_BIT(TYPE_SHOW_GPU)) &&
		      (!stack || opts->stack != STK_GPUVIRT);
	struct stk_host h = { .n_devs = 0 };
	struct stk_show sh = { .h = &h, .kind = stack ? (int)opts->stack : -1 };
	struct stk_dev *d;
	char err[2048];
	int ret, idx;

	if ((given & ARG_BIT(TYPE_SHOW_NAME)) &&
	    !(given & (ARG_BIT(TYPE_SHOW_GPU) | ARG_BIT(TYPE_SHOW_DEV)))) {
		err_print("\"name\" needs \"gpu\" (or \"dev\" on another stack)");
		fprintf(stderr, "Try \"gpuvirtctl type help\".\n");
		return EXIT_USAGE;
	}
	if (!others)
		return type_show_ours(ctx, opts, given, &sh, false);

	ret = stk_load(ctx, &h);
	if (ret)
		return ret;
	if (by_dev) {
		ret = stk_dev_arg(&h, opts->dev, &d);
		if (ret)
			goto out;
		sh.dev = d;
		if (given & ARG_BIT(TYPE_SHOW_NAME)) {
			idx = stk_match_type(d, opts->name, err, sizeof(err));
			if (idx < 0) {
				err_print("%s", err);
				ret = EXIT_RUNTIME;
				goto out;
			}
			sh.type = &d->types[idx];
		}
	}
	if (ours) {
		ret = type_show_ours(ctx, opts, given, &sh, true);
	} else {
		show_list("type", stk_show_types, &sh);
		ret = EXIT_OK;
	}
out:
	stk_free(&h);
	return ret;
}

static const struct cmd type_cmds[] = {
	{ "show", type_show_args, sizeof(struct type_show_opts), type_show },
	{ .name = NULL }
};

const struct object type_object = {
	.name = "type",
	.cmds = type_cmds,
};

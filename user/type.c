// SPDX-License-Identifier: GPL-2.0-only
/*
 * The type object: the vGPU types (profiles) a GPU offers.
 *
 *	gpuvirtctl type show [ gpu ID ] [ name NAME ]
 */
#include <errno.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"

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

enum { TYPE_SHOW_GPU, TYPE_SHOW_NAME };

struct type_show_opts {
	uint32_t gpu;
	const char *name;
};

static const struct arg_spec type_show_args[] = {
	[TYPE_SHOW_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct type_show_opts, gpu),
	},
	[TYPE_SHOW_NAME] = {
		.keyword = "name", .type = ARG_STRING, .meta = "NAME",
		.offset = offsetof(struct type_show_opts, name),
		.max_len = 23, .needs = ARG_BIT(TYPE_SHOW_GPU),
	},
	{ .keyword = NULL }
};

static int type_show(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct type_show_opts *opts = o;
	struct nlmsghdr *nlh;
	int ret;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;

	/* One type by GPU and name; else the types of one GPU or of all. */
	if (given & ARG_BIT(TYPE_SHOW_NAME)) {
		nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_TYPE_GET, 0);
		mnl_attr_put_strz(nlh, GPUVIRT_A_TYPE_NAME, opts->name);
	} else {
		nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_TYPE_GET, NLM_F_DUMP);
	}
	if (given & ARG_BIT(TYPE_SHOW_GPU))
		mnl_attr_put_u32(nlh, GPUVIRT_A_TYPE_GPU_ID, opts->gpu);
	return show_exchange(ctx, "type", type_print, &type_names);
}

static const struct cmd type_cmds[] = {
	{ "show", type_show_args, sizeof(struct type_show_opts), type_show },
	{ .name = NULL }
};

const struct object type_object = {
	.name = "type",
	.cmds = type_cmds,
};

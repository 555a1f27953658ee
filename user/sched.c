// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sched object: the time-slice scheduler of each GPU.
 *
 *	gpuvirtctl sched show [ gpu ID ]
 *	gpuvirtctl sched set gpu ID [ policy POLICY ] [ timeslice US ]
 */
#include <errno.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"

/* The command-line keywords, for the kernel's error messages. */
static const char *const sched_keywords[GPUVIRT_A_SCHED_MAX + 1] = {
	[GPUVIRT_A_SCHED_GPU_ID]		= "gpu",
	[GPUVIRT_A_SCHED_TIMESLICE_US]		= "timeslice",
};

static const struct nl_attr_names sched_names =
	SCHED_ATTR_NAMES(sched_keywords);

#define NS_PER_US	1000ULL

/* The members of one scheduler; times are printed in nanoseconds. */
int sched_print(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[GPUVIRT_A_SCHED_MAX + 1];
	const struct nlattr *a;

	if (nl_parse(nlh, sched_policy, GPUVIRT_A_SCHED_MAX, tb)) {
		err_print("malformed scheduler message from the kernel");
		return -EINVAL;
	}

	if (tb[GPUVIRT_A_SCHED_GPU_ID])
		pr_uint("gpu", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_SCHED_GPU_ID]));
	if (tb[GPUVIRT_A_SCHED_POLICY])
		pr_enum("policy", NULL, sched_policy_names,
			mnl_attr_get_u32(tb[GPUVIRT_A_SCHED_POLICY]));
	a = tb[GPUVIRT_A_SCHED_TIMESLICE_US];
	if (a)
		pr_time("timeslice", NULL, mnl_attr_get_u32(a) * NS_PER_US);
	a = tb[GPUVIRT_A_SCHED_TIMESLICE_EFFECTIVE_US];
	if (a)
		pr_time("timeslice-effective", "effective",
			mnl_attr_get_u32(a) * NS_PER_US);
	if (tb[GPUVIRT_A_SCHED_VGPUS])
		pr_uint("vgpus", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_SCHED_VGPUS]));
	if (tb[GPUVIRT_A_SCHED_BUSY_NS])
		pr_time("busy", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_SCHED_BUSY_NS]));
	if (tb[GPUVIRT_A_SCHED_IDLE_NS])
		pr_time("idle", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_SCHED_IDLE_NS]));
	if (tb[GPUVIRT_A_SCHED_SWITCH_NS])
		pr_time("switch", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_SCHED_SWITCH_NS]));
	if (tb[GPUVIRT_A_SCHED_SWITCHES])
		pr_uint("switches", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_SCHED_SWITCHES]));
	if (tb[GPUVIRT_A_SCHED_LAG_NS])
		pr_time("lag", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_SCHED_LAG_NS]));
	return 0;
}

/* sched show -------------------------------------------------------------- */

enum { SCHED_SHOW_GPU };

struct sched_show_opts {
	uint32_t gpu;
};

static const struct arg_spec sched_show_args[] = {
	[SCHED_SHOW_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct sched_show_opts, gpu),
	},
	{ .keyword = NULL }
};

static int sched_show(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct sched_show_opts *opts = o;
	int ret;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;

	if (given & ARG_BIT(SCHED_SHOW_GPU)) {
		struct nlmsghdr *nlh = nl_msg_start(ctx->nl,
						    GPUVIRT_CMD_SCHED_GET, 0);

		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_GPU_ID, opts->gpu);
	} else {
		nl_msg_start(ctx->nl, GPUVIRT_CMD_SCHED_GET, NLM_F_DUMP);
	}
	return show_exchange(ctx, "sched", sched_print, &sched_names);
}

/* sched set --------------------------------------------------------------- */

enum { SCHED_SET_GPU, SCHED_SET_POLICY, SCHED_SET_TIMESLICE };

struct sched_set_opts {
	uint32_t gpu;
	uint32_t policy;
	uint32_t timeslice;
};

static const struct arg_spec sched_set_args[] = {
	[SCHED_SET_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct sched_set_opts, gpu),
		.flags = ARG_REQUIRED,
	},
	[SCHED_SET_POLICY] = {
		.keyword = "policy", .type = ARG_ENUM,
		.enums = sched_policy_names,
		.offset = offsetof(struct sched_set_opts, policy),
		.flags = ARG_ONE_OF,
	},
	/* 0 is the default for the vGPU count; the spec's range otherwise. */
	[SCHED_SET_TIMESLICE] = {
		.keyword = "timeslice", .type = ARG_U32, .meta = "US",
		.offset = offsetof(struct sched_set_opts, timeslice),
		.flags = ARG_ONE_OF | ARG_ZERO, .min = 100, .max = 100000,
	},
	{ .keyword = NULL }
};

static int sched_set(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct sched_set_opts *opts = o;
	struct nlmsghdr *nlh;
	int ret;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_SCHED_SET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_GPU_ID, opts->gpu);
	if (given & ARG_BIT(SCHED_SET_POLICY))
		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_POLICY, opts->policy);
	if (given & ARG_BIT(SCHED_SET_TIMESLICE))
		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_TIMESLICE_US,
				 opts->timeslice);
	if (nl_exchange(ctx->nl, NULL, NULL)) {
		nl_perror(ctx->nl, &sched_names);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static const struct cmd sched_cmds[] = {
	{ "show", sched_show_args, sizeof(struct sched_show_opts), sched_show },
	{ "set", sched_set_args, sizeof(struct sched_set_opts), sched_set },
	{ .name = NULL }
};

const struct object sched_object = {
	.name = "sched",
	.cmds = sched_cmds,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gpu object: GPUs registered by a backend.
 *
 *	gpuvirtctl gpu show [ id ID | dev NAME ] [ stack STACK ]
 *
 * Besides gpuvirt's GPUs (netlink), "show" lists the vGPU-capable devices
 * of the host's other stacks (stacks.c), each with its "stack". With
 * --sysfs-root only those are read, from that tree.
 */
#include <errno.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"
#include "stacks_cmd.h"

static const struct nl_attr_names gpu_names = GPU_ATTR_NAMES(NULL);

/* The members of one GPU; the caller opens and closes the object. */
int gpu_print(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[GPUVIRT_A_GPU_MAX + 1];

	if (nl_parse(nlh, gpu_policy, GPUVIRT_A_GPU_MAX, tb)) {
		err_print("malformed GPU message from the kernel");
		return -EINVAL;
	}

	if (tb[GPUVIRT_A_GPU_ID])
		pr_uint("id", "gpu", mnl_attr_get_u32(tb[GPUVIRT_A_GPU_ID]));
	if (tb[GPUVIRT_A_GPU_NAME])
		pr_string("name", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_GPU_NAME]));
	if (tb[GPUVIRT_A_GPU_DEV_NAME])
		pr_string("dev", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_GPU_DEV_NAME]));
	if (tb[GPUVIRT_A_GPU_MODEL])
		pr_string("model", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_GPU_MODEL]));
	if (tb[GPUVIRT_A_GPU_VRAM_SIZE])
		pr_size("vram", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_GPU_VRAM_SIZE]));
	if (tb[GPUVIRT_A_GPU_ENGINES])
		pr_uint("engines", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_GPU_ENGINES]));
	if (tb[GPUVIRT_A_GPU_MODE])
		pr_enum("mode", NULL, gpu_mode_names,
			mnl_attr_get_u32(tb[GPUVIRT_A_GPU_MODE]));
	if (tb[GPUVIRT_A_GPU_VGPU_MODE])
		pr_enum("vgpu-mode", NULL, vgpu_mode_names,
			mnl_attr_get_u32(tb[GPUVIRT_A_GPU_VGPU_MODE]));
	if (tb[GPUVIRT_A_GPU_BACKEND])
		pr_string("backend", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_GPU_BACKEND]));
	if (tb[GPUVIRT_A_GPU_VGPU_MODEL])
		pr_string("vgpu-model", NULL,
			  mnl_attr_get_u32(tb[GPUVIRT_A_GPU_VGPU_MODEL]) ==
			  GPUVIRT_VGPU_MODEL_SRIOV ? "sriov" : "mdev");
	if (tb[GPUVIRT_A_GPU_MAX_VFS])
		pr_uint("max-vfs", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_GPU_MAX_VFS]));
	if (tb[GPUVIRT_A_GPU_NUM_VFS])
		pr_uint("vfs", NULL, mnl_attr_get_u32(tb[GPUVIRT_A_GPU_NUM_VFS]));
	return 0;
}

/* The mdev parent of a GPU or a GI, for sysfs paths ---------------------------------- */

struct name_state {
	char *buf;
	size_t len;
	int gi;
	int sriov;
};

static int gpu_name_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_GPU_MAX + 1];
	struct name_state *st = data;
	const struct nlattr *dev;

	if (nl_parse(nlh, gpu_policy, GPUVIRT_A_GPU_MAX, tb) ||
	    !tb[GPUVIRT_A_GPU_NAME]) {
		err_print("malformed GPU message from the kernel");
		return -EINVAL;
	}
	st->sriov = tb[GPUVIRT_A_GPU_VGPU_MODEL] &&
		    mnl_attr_get_u32(tb[GPUVIRT_A_GPU_VGPU_MODEL]) ==
		    GPUVIRT_VGPU_MODEL_SRIOV;
	if (!st->buf)
		return 0;
	/* a GI's device is named after the GPU (kernel/core/gi.c) */
	if (st->gi >= 0) {
		snprintf(st->buf, st->len, "%s-gi%d",
			 mnl_attr_get_str(tb[GPUVIRT_A_GPU_NAME]), st->gi);
		return 0;
	}
	/* the GPU's device; a module older than dev-name used the GPU's name */
	dev = tb[GPUVIRT_A_GPU_DEV_NAME] ? tb[GPUVIRT_A_GPU_DEV_NAME] :
					   tb[GPUVIRT_A_GPU_NAME];
	snprintf(st->buf, st->len, "%s", mnl_attr_get_str(dev));
	return 0;
}

static int gpu_get(struct ctx *ctx, uint32_t id, struct name_state *st)
{
	struct nlmsghdr *nlh;
	int ret;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_GPU_GET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, id);
	if (nl_exchange(ctx->nl, gpu_name_cb, st)) {
		if (ctx->nl->error.err)
			nl_perror(ctx->nl, &gpu_names);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int gpu_sriov(struct ctx *ctx, uint32_t id)
{
	struct name_state st = { .gi = -1 };

	return gpu_get(ctx, id, &st) ? -1 : st.sriov;
}

int gpu_mdev_parent(struct ctx *ctx, uint32_t id, int gi, char *buf,
		    size_t len)
{
	struct name_state st = { .buf = buf, .len = len, .gi = gi };

	return gpu_get(ctx, id, &st);
}

/* gpu show ---------------------------------------------------------------- */

enum { GPU_SHOW_ID, GPU_SHOW_DEV, GPU_SHOW_STACK };

struct gpu_show_opts {
	uint32_t id;
	const char *dev;
	uint32_t stack;
};

static const struct arg_spec gpu_show_args[] = {
	[GPU_SHOW_ID] = {
		.keyword = "id", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct gpu_show_opts, id),
		.excludes = ARG_BIT(GPU_SHOW_DEV),
	},
	[GPU_SHOW_DEV] = {
		.keyword = "dev", .type = ARG_STRING, .meta = "NAME",
		.offset = offsetof(struct gpu_show_opts, dev),
		.max_len = 63,
	},
	[GPU_SHOW_STACK] = {
		.keyword = "stack", .type = ARG_ENUM, .meta = "STACK",
		.offset = offsetof(struct gpu_show_opts, stack),
		.enums = stk_kind_enums,
	},
	{ .keyword = NULL }
};

/* One of our GPUs, with its stack in JSON (the text line stays as it was). */
static int gpu_print_stack(const struct nlmsghdr *nlh)
{
	if (pr_is_json())
		pr_string("stack", NULL, "gpuvirt");
	return gpu_print(nlh);
}

static int gpu_show(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct gpu_show_opts *opts = o;
	bool stack = given & ARG_BIT(GPU_SHOW_STACK);
	bool ours = !(given & ARG_BIT(GPU_SHOW_DEV)) && !ctx->sysfs_root &&
		    (!stack || opts->stack == STK_GPUVIRT);
	bool others = !(given & ARG_BIT(GPU_SHOW_ID)) &&
		      (!stack || opts->stack != STK_GPUVIRT);
	struct stk_host h = { .n_devs = 0 };
	struct stk_show sh = { .h = &h, .kind = stack ? (int)opts->stack : -1 };
	struct stk_dev *d;
	int ret;

	if (others) {
		ret = stk_load(ctx, &h);
		if (ret)
			return ret;
		if (given & ARG_BIT(GPU_SHOW_DEV)) {
			ret = stk_dev_arg(&h, opts->dev, &d);
			if (ret)
				goto out;
			sh.dev = d;
		}
	}
	if (!ours) {
		show_list("gpu", stk_show_devs, &sh);
		ret = EXIT_OK;
		goto out;
	}

	ret = ctx_nl(ctx);
	if (ret) {
		/* no gpuvirt here: the other stacks are still worth a list */
		if (others && stk_count(&sh, STK_DEVS)) {
			show_list("gpu", stk_show_devs, &sh);
			ret = EXIT_OK;
		}
		goto out;
	}
	if (given & ARG_BIT(GPU_SHOW_ID)) {
		struct nlmsghdr *nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_GPU_GET, 0);

		mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, opts->id);
	} else {
		nl_msg_start(ctx->nl, GPUVIRT_CMD_GPU_GET, NLM_F_DUMP);
	}
	ret = show_exchange_more(ctx, "gpu", gpu_print_stack, &gpu_names,
				 others ? stk_show_devs : NULL, &sh);
out:
	stk_free(&h);
	return ret;
}

static const struct cmd gpu_cmds[] = {
	{ "show", gpu_show_args, sizeof(struct gpu_show_opts), gpu_show },
	{ .name = NULL }
};

const struct object gpu_object = {
	.name = "gpu",
	.cmds = gpu_cmds,
};

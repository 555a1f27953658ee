// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gpu object: GPUs registered by a backend.
 *
 *	gpuvirtctl gpu show [ id ID | dev NAME ] [ stack STACK ]
 *	gpuvirtctl gpu set id ID [ vgpu-model { mdev | sriov } ] [ vfs N ]
 *
 * Besides gpuvirt's GPUs (netlink), "show" lists the vGPU-capable devices
 * of the host's other stacks (stacks.c), each with its "stack". With
 * --sysfs-root only those are read, from that tree.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"
#include "stacks_cmd.h"
#include "sysfs.h"

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

/* gpu set ----------------------------------------------------------------- */

static const char *const gpu_set_keywords[GPUVIRT_A_GPU_MAX + 1] = {
	[GPUVIRT_A_GPU_VGPU_MODEL]	= "vgpu-model",
};

static const struct nl_attr_names gpu_set_names =
	GPU_ATTR_NAMES(gpu_set_keywords);

int gpu_model_set(struct ctx *ctx, uint32_t id, uint32_t model)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_GPU_SET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, id);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_VGPU_MODEL, model);
	if (nl_exchange(ctx->nl, NULL, NULL)) {
		nl_perror(ctx->nl, &gpu_set_names);
		return -1;
	}
	return 0;
}

/* Why the PCI core refused @n VFs to GPU @id through sriov_numvfs. */
static void vfs_refusal(uint32_t id, const char *path, uint32_t n, int err)
{
	const char *why;

	switch (err) {
	case -EPERM:
		why = "the GPU has the mdev vGPU model (gpuvirtctl gpu set id ID vgpu-model sriov)";
		break;
	case -EBUSY:
		why = "a VF has a vGPU; clear its type first (gpuvirtctl vgpu del vf BDF)";
		break;
	case -ERANGE:
	case -EINVAL:
		why = "more VFs than the GPU has (see its max-vfs)";
		break;
	default:
		why = strerror(-err);
	}
	err_print("GPU %u: cannot write %u to %s: %s", id, n, path, why);
}

int gpu_vfs_set(struct ctx *ctx, uint32_t id, uint32_t n)
{
	char dev[64], path[PATH_MAX], cur[16], val[16];
	char *end;
	unsigned long now;
	int err;

	if (gpu_mdev_parent(ctx, id, -1, dev, sizeof(dev)))
		return -1;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/sriov_numvfs",
		 dev);
	err = sysfs_read_line(path, cur, sizeof(cur));
	if (err) {
		err_print("GPU %u (%s) has no SR-IOV VFs: cannot read %s: %s",
			  id, dev, path, strerror(-err));
		return err;
	}
	now = strtoul(cur, &end, 10);
	if (*end) {
		err_print("GPU %u: %s reads \"%s\", not a count", id, path,
			  cur);
		return -EINVAL;
	}
	if (now == n)
		return 0;
	/*
	 * The PCI core changes a count only through 0. Disabling is refused
	 * while a VF has a vGPU, so nothing in use ends here.
	 */
	if (now && n) {
		err = sysfs_write(path, "0");
		if (err) {
			vfs_refusal(id, path, 0, err);
			return err;
		}
	}
	snprintf(val, sizeof(val), "%u", n);
	err = sysfs_write(path, val);
	if (err)
		vfs_refusal(id, path, n, err);
	return err;
}

enum { GPU_SET_ID, GPU_SET_MODEL, GPU_SET_VFS };

struct gpu_set_opts {
	uint32_t id;
	uint32_t model;
	uint32_t vfs;
};

static const struct arg_spec gpu_set_args[] = {
	[GPU_SET_ID] = {
		.keyword = "id", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct gpu_set_opts, id),
		.flags = ARG_REQUIRED,
	},
	[GPU_SET_MODEL] = {
		.keyword = "vgpu-model", .type = ARG_ENUM, .meta = "MODEL",
		.offset = offsetof(struct gpu_set_opts, model),
		.enums = vgpu_model_names, .flags = ARG_ONE_OF,
	},
	[GPU_SET_VFS] = {
		.keyword = "vfs", .type = ARG_U32, .meta = "N",
		.offset = offsetof(struct gpu_set_opts, vfs),
		.flags = ARG_ONE_OF,
	},
	{ .keyword = NULL }
};

/*
 * The model first when entering sriov, the VFs first when leaving it, so
 * that "vgpu-model sriov vfs 4" and "vgpu-model mdev vfs 0" both work.
 */
static int gpu_set(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct gpu_set_opts *opts = o;
	bool model = given & ARG_BIT(GPU_SET_MODEL);
	bool vfs = given & ARG_BIT(GPU_SET_VFS);
	int ret;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	if (model && vfs && opts->model == GPUVIRT_VGPU_MODEL_MDEV &&
	    opts->vfs) {
		err_print("\"vfs\" needs vgpu-model sriov: a GPU in the mdev model has no VFs");
		return EXIT_USAGE;
	}
	if (vfs && (!model || opts->model == GPUVIRT_VGPU_MODEL_MDEV) &&
	    gpu_vfs_set(ctx, opts->id, opts->vfs))
		return EXIT_RUNTIME;
	if (model && gpu_model_set(ctx, opts->id, opts->model))
		return EXIT_RUNTIME;
	if (vfs && model && opts->model == GPUVIRT_VGPU_MODEL_SRIOV &&
	    gpu_vfs_set(ctx, opts->id, opts->vfs))
		return EXIT_RUNTIME;
	return EXIT_OK;
}

static const struct cmd gpu_cmds[] = {
	{ "show", gpu_show_args, sizeof(struct gpu_show_opts), gpu_show },
	{ "set", gpu_set_args, sizeof(struct gpu_set_opts), gpu_set },
	{ .name = NULL }
};

const struct object gpu_object = {
	.name = "gpu",
	.cmds = gpu_cmds,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vgpu object: vGPUs, the mdev devices of a type.
 *
 *	gpuvirtctl vgpu show [ uuid UUID | gpu ID ]
 *	gpuvirtctl vgpu add gpu ID type NAME [ gi GI ] [ uuid UUID ]
 *			    [ weight W ] [ min PCT ] [ max PCT ]
 *	gpuvirtctl vgpu set uuid UUID [ weight W ] [ min PCT ] [ max PCT ]
 *	gpuvirtctl vgpu del uuid UUID
 *
 * Only the mdev core creates and removes mdev devices, so "add" and "del"
 * go through sysfs (sysfs.c); everything else, and every check that the
 * kernel can answer with a message, goes through netlink. "add" is all or
 * nothing: a vGPU whose parameters the kernel refuses is removed again.
 * In MIG mode "gi" picks the GPU instance whose MIG-backed type it is.
 */
#include <errno.h>
#include <string.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"
#include "sysfs.h"

/* The command-line keywords, for the kernel's error messages. */
static const char *const vgpu_keywords[GPUVIRT_A_VGPU_MAX + 1] = {
	[GPUVIRT_A_VGPU_GPU_ID]		= "gpu",
	[GPUVIRT_A_VGPU_MIN_PCT]	= "min",
	[GPUVIRT_A_VGPU_MAX_PCT]	= "max",
	[GPUVIRT_A_VGPU_GI_ID]		= "gi",
};

static const struct nl_attr_names vgpu_names = VGPU_ATTR_NAMES(vgpu_keywords);

/* "vgpu add" checks the GPU and type with type-get: name them so. */
static const char *const add_type_keywords[GPUVIRT_A_TYPE_MAX + 1] = {
	[GPUVIRT_A_TYPE_GPU_ID]	= "gpu",
	[GPUVIRT_A_TYPE_NAME]	= "type",
	[GPUVIRT_A_TYPE_GI_ID]	= "gi",
};

static const struct nl_attr_names add_type_names =
	TYPE_ATTR_NAMES(add_type_keywords);

/* Microseconds to nanoseconds; UINT64_MAX (no bound) stays so. */
static uint64_t us_to_ns(uint64_t us)
{
	return us > UINT64_MAX / 1000 ? UINT64_MAX : us * 1000;
}

/* The scheduling counters: an object in JSON, more of the line in text. */
static int stats_print(const struct nlattr *nest)
{
	const struct nlattr *tb[GPUVIRT_A_VGPU_STATS_MAX + 1];
	const struct nlattr *a;

	if (nl_parse_nested(nest, vgpu_stats_policy, GPUVIRT_A_VGPU_STATS_MAX, tb))
		return -EINVAL;

	pr_open_object("stats");
	if (tb[GPUVIRT_A_VGPU_STATS_RUN_NS])
		pr_time("run", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_VGPU_STATS_RUN_NS]));
	if (tb[GPUVIRT_A_VGPU_STATS_SLICES])
		pr_uint("slices", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_VGPU_STATS_SLICES]));
	if (tb[GPUVIRT_A_VGPU_STATS_PREEMPTIONS])
		pr_uint("preemptions", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_VGPU_STATS_PREEMPTIONS]));
	if (tb[GPUVIRT_A_VGPU_STATS_WORK_NS])
		pr_time("work", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_VGPU_STATS_WORK_NS]));
	if (tb[GPUVIRT_A_VGPU_STATS_PACKETS])
		pr_uint("packets", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_VGPU_STATS_PACKETS]));
	a = tb[GPUVIRT_A_VGPU_STATS_WAIT_MAX_US];
	if (a)
		pr_time("wait-max", NULL, us_to_ns(mnl_attr_get_u64(a)));
	pr_close_object();
	return 0;
}

/* The members of one vGPU; times in nanoseconds, sizes in bytes. */
int vgpu_print(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[GPUVIRT_A_VGPU_MAX + 1];

	if (nl_parse(nlh, vgpu_policy, GPUVIRT_A_VGPU_MAX, tb))
		goto err_malformed;

	if (tb[GPUVIRT_A_VGPU_UUID])
		pr_string("uuid", "vgpu",
			  mnl_attr_get_str(tb[GPUVIRT_A_VGPU_UUID]));
	if (tb[GPUVIRT_A_VGPU_GPU_ID])
		pr_uint("gpu", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_GPU_ID]));
	if (tb[GPUVIRT_A_VGPU_TYPE])
		pr_string("type", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_VGPU_TYPE]));
	if (tb[GPUVIRT_A_VGPU_WEIGHT])
		pr_uint("weight", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_WEIGHT]));
	if (tb[GPUVIRT_A_VGPU_MIN_PCT])
		pr_uint("min", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_MIN_PCT]));
	if (tb[GPUVIRT_A_VGPU_MAX_PCT])
		pr_uint("max", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_MAX_PCT]));
	if (tb[GPUVIRT_A_VGPU_VRAM_OFFSET])
		pr_size("vram-offset", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_VGPU_VRAM_OFFSET]));
	if (tb[GPUVIRT_A_VGPU_VRAM_SIZE])
		pr_size("vram", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_VGPU_VRAM_SIZE]));
	if (tb[GPUVIRT_A_VGPU_OPEN])
		pr_bool("open", NULL,
			mnl_attr_get_u8(tb[GPUVIRT_A_VGPU_OPEN]));
	if (tb[GPUVIRT_A_VGPU_CTX])
		pr_uint("ctx", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_CTX]));
	if (tb[GPUVIRT_A_VGPU_GI_ID])
		pr_uint("gi", NULL, mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_GI_ID]));
	if (tb[GPUVIRT_A_VGPU_STATS] && stats_print(tb[GPUVIRT_A_VGPU_STATS]))
		goto err_malformed;
	return 0;

err_malformed:
	err_print("malformed vGPU message from the kernel");
	return -EINVAL;
}

/* Print the vGPU @uuid as "vgpu show uuid UUID" does. */
static int vgpu_show_one(struct ctx *ctx, const char *uuid)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_VGPU_GET, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	return show_exchange(ctx, "vgpu", vgpu_print, &vgpu_names);
}

/* vgpu show --------------------------------------------------------------- */

enum { VGPU_SHOW_UUID, VGPU_SHOW_GPU };

struct vgpu_show_opts {
	char uuid[UNITS_UUID_LEN];
	uint32_t gpu;
};

static const struct arg_spec vgpu_show_args[] = {
	[VGPU_SHOW_UUID] = {
		.keyword = "uuid", .type = ARG_UUID, .meta = "UUID",
		.offset = offsetof(struct vgpu_show_opts, uuid),
		.excludes = ARG_BIT(VGPU_SHOW_GPU),
	},
	[VGPU_SHOW_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct vgpu_show_opts, gpu),
	},
	{ .keyword = NULL }
};

static int vgpu_show(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct vgpu_show_opts *opts = o;
	struct nlmsghdr *nlh;
	int ret;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;

	if (given & ARG_BIT(VGPU_SHOW_UUID))
		return vgpu_show_one(ctx, opts->uuid);

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP);
	if (given & ARG_BIT(VGPU_SHOW_GPU))
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_GPU_ID, opts->gpu);
	return show_exchange(ctx, "vgpu", vgpu_print, &vgpu_names);
}

/* Scheduling parameters, shared by "add" and "set" ------------------------ */

#define VGPU_WEIGHT_SPEC(opts, flg) {				\
	.keyword = "weight", .type = ARG_U32, .meta = "W",		\
	.offset = offsetof(opts, weight), .flags = (flg),	\
	.min = 1, .max = 10000,						\
}
#define VGPU_MIN_SPEC(opts, flg) {				\
	.keyword = "min", .type = ARG_U32, .meta = "PCT",		\
	.offset = offsetof(opts, min), .flags = (flg),		\
	.min = 0, .max = 100,						\
}
#define VGPU_MAX_SPEC(opts, flg) {				\
	.keyword = "max", .type = ARG_U32, .meta = "PCT",		\
	.offset = offsetof(opts, max), .flags = (flg),		\
	.min = 1, .max = 100,						\
}

struct vgpu_params {
	bool weight_set, min_set, max_set;
	uint32_t weight, min, max;
};

/*
 * Send vgpu-set for @uuid with the parameters given; the kernel checks them
 * together (min against max, the GPU's minimums against 100 %) and changes
 * nothing if it refuses. Returns 0 or -1 with ctx->nl->error filled.
 */
static int vgpu_params_set(struct ctx *ctx, const char *uuid,
			   const struct vgpu_params *p)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_VGPU_SET, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	if (p->weight_set)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_WEIGHT, p->weight);
	if (p->min_set)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_MIN_PCT, p->min);
	if (p->max_set)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_MAX_PCT, p->max);
	return nl_exchange(ctx->nl, NULL, NULL) ? -1 : 0;
}

/* vgpu add ---------------------------------------------------------------- */

enum {
	VGPU_ADD_GPU, VGPU_ADD_TYPE, VGPU_ADD_UUID, VGPU_ADD_WEIGHT,
	VGPU_ADD_MIN, VGPU_ADD_MAX, VGPU_ADD_GI,
};

struct vgpu_add_opts {
	uint32_t gpu;
	const char *type;
	char uuid[UNITS_UUID_LEN];
	uint32_t weight, min, max;
	uint32_t gi;
};

static const struct arg_spec vgpu_add_args[] = {
	[VGPU_ADD_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct vgpu_add_opts, gpu),
		.flags = ARG_REQUIRED,
	},
	[VGPU_ADD_TYPE] = {
		.keyword = "type", .type = ARG_STRING, .meta = "NAME",
		.offset = offsetof(struct vgpu_add_opts, type),
		.flags = ARG_REQUIRED, .max_len = 23,
	},
	[VGPU_ADD_UUID] = {
		.keyword = "uuid", .type = ARG_UUID, .meta = "UUID",
		.offset = offsetof(struct vgpu_add_opts, uuid),
	},
	[VGPU_ADD_WEIGHT] = VGPU_WEIGHT_SPEC(struct vgpu_add_opts, 0),
	[VGPU_ADD_MIN] = VGPU_MIN_SPEC(struct vgpu_add_opts, 0),
	[VGPU_ADD_MAX] = VGPU_MAX_SPEC(struct vgpu_add_opts, 0),
	[VGPU_ADD_GI] = {
		.keyword = "gi", .type = ARG_U32, .meta = "GI",
		.offset = offsetof(struct vgpu_add_opts, gi),
	},
	{ .keyword = NULL }
};

const char *vgpu_create_hint(int err)
{
	switch (err) {
	case -ENOSPC:
		return "no room left on the GPU for a vGPU of this type";
	case -EBUSY:
		return "the GPU holds vGPUs of another type (homogeneous mode)";
	case -EEXIST:
		return "a device with this UUID exists already";
	default:
		return strerror(-err);
	}
}

static int vgpu_add(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct vgpu_add_opts *opts = o;
	struct vgpu_params p = {
		.weight_set = given & ARG_BIT(VGPU_ADD_WEIGHT),
		.min_set = given & ARG_BIT(VGPU_ADD_MIN),
		.max_set = given & ARG_BIT(VGPU_ADD_MAX),
		.weight = opts->weight, .min = opts->min, .max = opts->max,
	};
	char uuid[UNITS_UUID_LEN], gpu[64] = "", dir[512];
	struct nlmsghdr *nlh;
	int ret, err;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;

	/* The GPU and the type exist: the kernel says which does not. */
	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_TYPE_GET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_TYPE_GPU_ID, opts->gpu);
	mnl_attr_put_strz(nlh, GPUVIRT_A_TYPE_NAME, opts->type);
	if (given & ARG_BIT(VGPU_ADD_GI))
		mnl_attr_put_u32(nlh, GPUVIRT_A_TYPE_GI_ID, opts->gi);
	if (nl_exchange(ctx->nl, NULL, NULL)) {
		nl_perror(ctx->nl, &add_type_names);
		return EXIT_RUNTIME;
	}
	ret = gpu_name(ctx, opts->gpu, gpu, sizeof(gpu));
	if (ret)
		return ret;
	/* a MIG-backed type is offered by its GI's device, "<gpu>-gi<N>" */
	if (given & ARG_BIT(VGPU_ADD_GI)) {
		size_t n = strlen(gpu);

		snprintf(gpu + n, sizeof(gpu) - n, "-gi%u", opts->gi);
	}

	err = sysfs_mdev_type_dir(gpu, opts->type, dir, sizeof(dir));
	if (err == -ENOENT) {
		err_print("GPU %u (%s) has no mdev type \"%s\" in sysfs",
			  opts->gpu, gpu, opts->type);
		return EXIT_RUNTIME;
	} else if (err) {
		err_print("cannot list the mdev types of GPU %u (%s): %s",
			  opts->gpu, gpu, strerror(-err));
		return EXIT_RUNTIME;
	}

	if (given & ARG_BIT(VGPU_ADD_UUID)) {
		memcpy(uuid, opts->uuid, sizeof(uuid));
	} else {
		err = sysfs_random_uuid(uuid);
		if (err) {
			err_print("cannot make a UUID: /dev/urandom: %s",
				  strerror(-err));
			return EXIT_RUNTIME;
		}
	}

	err = sysfs_mdev_create(dir, uuid);
	if (err) {
		err_print("cannot create vGPU %s of type %s on GPU %u: %s",
			  uuid, opts->type, opts->gpu, vgpu_create_hint(err));
		return EXIT_RUNTIME;
	}

	/* All or nothing: a vGPU whose parameters are refused goes again. */
	if ((p.weight_set || p.min_set || p.max_set) &&
	    vgpu_params_set(ctx, uuid, &p)) {
		nl_perror(ctx->nl, &vgpu_names);
		err = sysfs_mdev_remove(uuid);
		if (err)
			err_print("cannot remove the new vGPU %s again: %s",
				  uuid, strerror(-err));
		else
			err_print("removed the new vGPU %s again", uuid);
		return EXIT_RUNTIME;
	}

	return vgpu_show_one(ctx, uuid);
}

/* vgpu set ---------------------------------------------------------------- */

enum { VGPU_SET_UUID, VGPU_SET_WEIGHT, VGPU_SET_MIN, VGPU_SET_MAX };

struct vgpu_set_opts {
	char uuid[UNITS_UUID_LEN];
	uint32_t weight, min, max;
};

static const struct arg_spec vgpu_set_args[] = {
	[VGPU_SET_UUID] = {
		.keyword = "uuid", .type = ARG_UUID, .meta = "UUID",
		.offset = offsetof(struct vgpu_set_opts, uuid),
		.flags = ARG_REQUIRED,
	},
	[VGPU_SET_WEIGHT] = VGPU_WEIGHT_SPEC(struct vgpu_set_opts, ARG_ONE_OF),
	[VGPU_SET_MIN] = VGPU_MIN_SPEC(struct vgpu_set_opts, ARG_ONE_OF),
	[VGPU_SET_MAX] = VGPU_MAX_SPEC(struct vgpu_set_opts, ARG_ONE_OF),
	{ .keyword = NULL }
};

static int vgpu_set(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct vgpu_set_opts *opts = o;
	struct vgpu_params p = {
		.weight_set = given & ARG_BIT(VGPU_SET_WEIGHT),
		.min_set = given & ARG_BIT(VGPU_SET_MIN),
		.max_set = given & ARG_BIT(VGPU_SET_MAX),
		.weight = opts->weight, .min = opts->min, .max = opts->max,
	};
	int ret;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	if (vgpu_params_set(ctx, opts->uuid, &p)) {
		nl_perror(ctx->nl, &vgpu_names);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* vgpu del ---------------------------------------------------------------- */

enum { VGPU_DEL_UUID };

struct vgpu_del_opts {
	char uuid[UNITS_UUID_LEN];
};

static const struct arg_spec vgpu_del_args[] = {
	[VGPU_DEL_UUID] = {
		.keyword = "uuid", .type = ARG_UUID, .meta = "UUID",
		.offset = offsetof(struct vgpu_del_opts, uuid),
		.flags = ARG_REQUIRED,
	},
	{ .keyword = NULL }
};

static int vgpu_del(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct vgpu_del_opts *opts = o;
	struct nlmsghdr *nlh;
	int ret, err;

	(void)given;
	ret = ctx_nl(ctx);
	if (ret)
		return ret;

	/* Only gpuvirt's vGPUs: another driver's mdev device is not ours. */
	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_VGPU_GET, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, opts->uuid);
	if (nl_exchange(ctx->nl, NULL, NULL)) {
		nl_perror(ctx->nl, &vgpu_names);
		return EXIT_RUNTIME;
	}

	err = sysfs_mdev_remove(opts->uuid);
	if (err == -ENOENT) {
		err_print("no vGPU with UUID %s", opts->uuid);
		return EXIT_RUNTIME;
	} else if (err) {
		err_print("cannot remove vGPU %s: %s", opts->uuid,
			  strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static const struct cmd vgpu_cmds[] = {
	{ "show", vgpu_show_args, sizeof(struct vgpu_show_opts), vgpu_show },
	{ "add", vgpu_add_args, sizeof(struct vgpu_add_opts), vgpu_add },
	{ "set", vgpu_set_args, sizeof(struct vgpu_set_opts), vgpu_set },
	{ "del", vgpu_del_args, sizeof(struct vgpu_del_opts), vgpu_del },
	{ .name = NULL }
};

const struct object vgpu_object = {
	.name = "vgpu",
	.cmds = vgpu_cmds,
};

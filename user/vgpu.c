// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vgpu object: vGPUs, the mdev devices of a type.
 *
 *	gpuvirtctl vgpu show [ uuid UUID | vf BDF | gpu ID | dev NAME ]
 *			     [ stack STACK ]
 *	gpuvirtctl vgpu add gpu ID type NAME [ gi GI ] [ uuid UUID | vf BDF ]
 *			    [ weight W ] [ min PCT ] [ max PCT ]
 *	gpuvirtctl vgpu add dev NAME type NAME [ uuid UUID | vf BDF ]
 *	gpuvirtctl vgpu set uuid UUID [ weight W ] [ min PCT ] [ max PCT ]
 *	gpuvirtctl vgpu del { uuid UUID | vf BDF }
 *
 * "dev NAME" names a device of another stack (stacks.h): an mdev parent,
 * or a PF on the nvidia-vf stack, whose vGPUs are VFs named by their PCI
 * address ("vf BDF"). What only gpuvirt offers (weight, min, max, gi) is
 * refused there, naming the stack.
 *
 * Only the mdev core creates and removes mdev devices, so "add" and "del"
 * go through sysfs (sysfs.c); everything else, and every check that the
 * kernel can answer with a message, goes through netlink. "add" is all or
 * nothing: a vGPU whose parameters the kernel refuses is removed again.
 * In MIG mode "gi" picks the GPU instance whose MIG-backed type it is.
 * A GPU in the sriov vGPU model makes a vGPU by giving a VF a type, as
 * NVIDIA's SR-IOV GPUs do: "vf BDF" names the VF, or the first free one
 * that can take the type is used; "del vf BDF" clears a VF's type.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"
#include "pt.h"
#include "stacks_cmd.h"
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

/* A DRM fourcc code as its four characters, "XR24"; unprintable as hex. */
static void fourcc_str(char *buf, size_t len, uint32_t code)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		char c = (code >> (8 * i)) & 0xff;

		if (c < 0x20 || c > 0x7e) {
			snprintf(buf, len, "0x%08x", code);
			return;
		}
		buf[i] = c;
	}
	buf[4] = '\0';
}

/*
 * A head that is on: an object in JSON; "headN WxH FORMAT stride S" in
 * text.
 */
static int head_print(const struct nlattr *nest)
{
	const struct nlattr *tb[GPUVIRT_A_VGPU_HEAD_MAX + 1];
	char fmt[16];
	uint32_t i, w, h;

	if (nl_parse_nested(nest, vgpu_head_policy, GPUVIRT_A_VGPU_HEAD_MAX, tb) ||
	    !tb[GPUVIRT_A_VGPU_HEAD_INDEX] || !tb[GPUVIRT_A_VGPU_HEAD_WIDTH] ||
	    !tb[GPUVIRT_A_VGPU_HEAD_HEIGHT] || !tb[GPUVIRT_A_VGPU_HEAD_STRIDE] ||
	    !tb[GPUVIRT_A_VGPU_HEAD_FORMAT])
		return -EINVAL;
	i = mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_HEAD_INDEX]);
	w = mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_HEAD_WIDTH]);
	h = mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_HEAD_HEIGHT]);
	fourcc_str(fmt, sizeof(fmt), mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_HEAD_FORMAT]));
	pr_open_object(NULL);
	if (pr_is_json()) {
		pr_uint("index", NULL, i);
		pr_uint("width", NULL, w);
		pr_uint("height", NULL, h);
	} else {
		char label[16], mode[32];

		snprintf(label, sizeof(label), "head%u", i);
		snprintf(mode, sizeof(mode), "%ux%u", w, h);
		pr_string("mode", label, mode);
		pr_text(fmt);
	}
	if (pr_is_json())
		pr_string("format", NULL, fmt);
	pr_uint("stride", NULL,
		mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_HEAD_STRIDE]));
	pr_close_object();
	return 0;
}

/* Live migration: its state and counters, an object in JSON. */
static int migration_print(const struct nlattr *nest)
{
	const struct nlattr *tb[GPUVIRT_A_VGPU_MIGRATION_MAX + 1];
	static const struct {
		unsigned int attr;
		const char *key;
		enum { MIG_COUNT, MIG_BYTES, MIG_TIME } kind;
	} ctrs[] = {
		{ GPUVIRT_A_VGPU_MIGRATION_SAVES, "saves", MIG_COUNT },
		{ GPUVIRT_A_VGPU_MIGRATION_RESUMES, "resumes", MIG_COUNT },
		{ GPUVIRT_A_VGPU_MIGRATION_REFUSED, "refused", MIG_COUNT },
		{ GPUVIRT_A_VGPU_MIGRATION_BYTES_SAVED, "bytes-saved", MIG_BYTES },
		{ GPUVIRT_A_VGPU_MIGRATION_BYTES_RESUMED, "bytes-resumed", MIG_BYTES },
		{ GPUVIRT_A_VGPU_MIGRATION_LAST_STOP_COPY_NS, "last-stop-copy",
		  MIG_TIME },
	};
	unsigned int i;
	uint64_t v;

	if (nl_parse_nested(nest, vgpu_migration_policy,
			    GPUVIRT_A_VGPU_MIGRATION_MAX, tb))
		return -EINVAL;

	pr_open_object("migration");
	if (tb[GPUVIRT_A_VGPU_MIGRATION_STATE])
		pr_enum("state", "migration", migration_state_names,
			mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_MIGRATION_STATE]));
	for (i = 0; i < sizeof(ctrs) / sizeof(ctrs[0]); i++) {
		if (!tb[ctrs[i].attr])
			continue;
		v = mnl_attr_get_u64(tb[ctrs[i].attr]);
		if (ctrs[i].kind == MIG_BYTES)
			pr_size(ctrs[i].key, NULL, v);
		else if (ctrs[i].kind == MIG_TIME)
			pr_time(ctrs[i].key, NULL, v);
		else
			pr_uint(ctrs[i].key, NULL, v);
	}
	pr_close_object();
	return 0;
}

/* The display: the limiter, the heads offered and those that are on. */
static int display_print(const struct nlmsghdr *nlh,
			 const struct nlattr *const *tb)
{
	const struct nlattr *a;
	unsigned int on = 0;

	if (tb[GPUVIRT_A_VGPU_FRAME_RATE_LIMITER])
		pr_bool("frame-rate-limiter", NULL,
			mnl_attr_get_u8(tb[GPUVIRT_A_VGPU_FRAME_RATE_LIMITER]));
	if (tb[GPUVIRT_A_VGPU_HEADS])
		pr_uint("heads", NULL, mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_HEADS]));
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == GPUVIRT_A_VGPU_HEAD)
			on++;
	pr_uint("heads-on", NULL, on);
	if (!on)
		return 0;
	pr_open_array("head");
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == GPUVIRT_A_VGPU_HEAD && head_print(a))
			return -EINVAL;
	pr_close_array();
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
	if (tb[GPUVIRT_A_VGPU_VF])
		pr_string("vf", NULL, mnl_attr_get_str(tb[GPUVIRT_A_VGPU_VF]));
	if (display_print(nlh, tb))
		goto err_malformed;
	if (tb[GPUVIRT_A_VGPU_STATS] && stats_print(tb[GPUVIRT_A_VGPU_STATS]))
		goto err_malformed;
	if (tb[GPUVIRT_A_VGPU_MIGRATION] &&
	    migration_print(tb[GPUVIRT_A_VGPU_MIGRATION]))
		goto err_malformed;
	return 0;

err_malformed:
	err_print("malformed vGPU message from the kernel");
	return -EINVAL;
}

/* Our vGPU, with its stack in JSON (the text line stays as it was). */
static int vgpu_print_stack(const struct nlmsghdr *nlh)
{
	if (pr_is_json())
		pr_string("stack", NULL, "gpuvirt");
	return vgpu_print(nlh);
}

/* Print the vGPU @uuid as "vgpu show uuid UUID" does. */
static int vgpu_show_one(struct ctx *ctx, const char *uuid)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_VGPU_GET, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	return show_exchange(ctx, "vgpu", vgpu_print_stack, &vgpu_names);
}

/* vgpu show --------------------------------------------------------------- */

enum { VGPU_SHOW_UUID, VGPU_SHOW_GPU, VGPU_SHOW_VF, VGPU_SHOW_DEV,
	VGPU_SHOW_STACK };

struct vgpu_show_opts {
	char uuid[UNITS_UUID_LEN];
	uint32_t gpu;
	const char *vf;
	const char *dev;
	uint32_t stack;
};

/* Which vGPUs: at most one of these. */
#define VGPU_SHOW_WHICH	(ARG_BIT(VGPU_SHOW_UUID) | ARG_BIT(VGPU_SHOW_GPU) | \
			 ARG_BIT(VGPU_SHOW_VF) | ARG_BIT(VGPU_SHOW_DEV))

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
	[VGPU_SHOW_VF] = {
		.keyword = "vf", .type = ARG_STRING, .meta = "BDF",
		.offset = offsetof(struct vgpu_show_opts, vf),
		.max_len = 15, .excludes = ARG_BIT(VGPU_SHOW_DEV),
	},
	[VGPU_SHOW_DEV] = {
		.keyword = "dev", .type = ARG_STRING, .meta = "NAME",
		.offset = offsetof(struct vgpu_show_opts, dev),
		.max_len = 63,
	},
	[VGPU_SHOW_STACK] = {
		.keyword = "stack", .type = ARG_ENUM, .meta = "STACK",
		.offset = offsetof(struct vgpu_show_opts, stack),
		.enums = stk_kind_enums,
	},
	{ .keyword = NULL }
};


/*
 * Is @arg a VF of one of gpuvirt's GPUs (it has gpuvirt/vgpu_uuid)? -1 if
 * not; EXIT_RUNTIME having said so if it has no type; 0 with its address
 * in @vf and its vGPU's UUID in @uuid.
 */
static int our_vf(const struct ctx *ctx, const char *arg,
		  char vf[PT_BDF_LEN], char uuid[UNITS_UUID_LEN])
{
	char err_buf[128];
	int err;

	if (ctx->sysfs_root || pt_bdf_parse(arg, vf, err_buf, sizeof(err_buf)))
		return -1;
	err = sysfs_vf_uuid(vf, uuid);
	if (err == -ENODATA) {
		err_print("no vGPU on VF %s: its current_vgpu_type is 0", vf);
		return EXIT_RUNTIME;
	}
	return err ? -1 : 0;
}

static int vgpu_show(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct vgpu_show_opts *opts = o;
	bool stack = given & ARG_BIT(VGPU_SHOW_STACK);
	bool others = !(given & ARG_BIT(VGPU_SHOW_GPU)) &&
		      (!stack || opts->stack != STK_GPUVIRT);
	bool ours = !(given & (ARG_BIT(VGPU_SHOW_VF) | ARG_BIT(VGPU_SHOW_DEV))) &&
		    !ctx->sysfs_root && (!stack || opts->stack == STK_GPUVIRT);
	struct stk_host h = { .n_devs = 0 };
	struct stk_show sh = { .h = &h, .kind = stack ? (int)opts->stack : -1 };
	const char *one = NULL;
	struct nlmsghdr *nlh;
	struct stk_dev *d;
	int ret;

	if (__builtin_popcountll(given & VGPU_SHOW_WHICH) > 1) {
		err_print("give one of \"uuid\", \"gpu\", \"vf\" and \"dev\"");
		fprintf(stderr, "Try \"gpuvirtctl vgpu help\".\n");
		return EXIT_USAGE;
	}
	/* a VF of one of our GPUs in the sriov model: its vGPU, by UUID */
	if (given & ARG_BIT(VGPU_SHOW_VF) &&
	    (!stack || opts->stack == STK_GPUVIRT)) {
		char vf[PT_BDF_LEN], uuid[UNITS_UUID_LEN];

		ret = our_vf(ctx, opts->vf, vf, uuid);
		if (ret > 0)
			return ret;
		if (!ret) {
			ret = ctx_nl(ctx);
			return ret ? ret : vgpu_show_one(ctx, uuid);
		}
	}
	if (others) {
		ret = stk_load(ctx, &h);
		if (ret)
			return ret;
		if (given & ARG_BIT(VGPU_SHOW_UUID))
			one = opts->uuid;
		else if (given & ARG_BIT(VGPU_SHOW_VF))
			one = opts->vf;
		if (one) {
			sh.vgpu = stk_find_vgpu(&h, one);
			if (sh.vgpu) {
				show_list("vgpu", stk_show_vgpus, &sh);
				ret = EXIT_OK;
				goto out;
			}
			if (!ours) {
				err_print("no vGPU %s on the mdev or nvidia-vf stacks",
					  one);
				ret = EXIT_RUNTIME;
				goto out;
			}
		}
		if (given & ARG_BIT(VGPU_SHOW_DEV)) {
			ret = stk_dev_arg(&h, opts->dev, &d);
			if (ret)
				goto out;
			sh.dev = d;
		}
	}
	if (!ours) {
		show_list("vgpu", stk_show_vgpus, &sh);
		ret = EXIT_OK;
		goto out;
	}

	ret = ctx_nl(ctx);
	if (ret) {
		if (others && !one && stk_count(&sh, STK_VGPUS)) {
			show_list("vgpu", stk_show_vgpus, &sh);
			ret = EXIT_OK;
		}
		goto out;
	}
	if (given & ARG_BIT(VGPU_SHOW_UUID)) {
		ret = vgpu_show_one(ctx, opts->uuid);
		goto out;
	}
	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP);
	if (given & ARG_BIT(VGPU_SHOW_GPU))
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_GPU_ID, opts->gpu);
	ret = show_exchange_more(ctx, "vgpu", vgpu_print_stack, &vgpu_names,
				 others ? stk_show_vgpus : NULL, &sh);
out:
	stk_free(&h);
	return ret;
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
	bool weight_set, min_set, max_set, frl_set;
	uint32_t weight, min, max, frl;
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
	if (p->frl_set)
		mnl_attr_put_u8(nlh, GPUVIRT_A_VGPU_FRAME_RATE_LIMITER, !!p->frl);
	return nl_exchange(ctx->nl, NULL, NULL) ? -1 : 0;
}

/* vgpu add ---------------------------------------------------------------- */

enum {
	VGPU_ADD_GPU, VGPU_ADD_TYPE, VGPU_ADD_UUID, VGPU_ADD_WEIGHT,
	VGPU_ADD_MIN, VGPU_ADD_MAX, VGPU_ADD_GI, VGPU_ADD_DEV, VGPU_ADD_VF,
};

struct vgpu_add_opts {
	uint32_t gpu;
	const char *type;
	char uuid[UNITS_UUID_LEN];
	uint32_t weight, min, max;
	uint32_t gi;
	const char *dev;
	const char *vf;
};

static const struct arg_spec vgpu_add_args[] = {
	[VGPU_ADD_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct vgpu_add_opts, gpu),
		.excludes = ARG_BIT(VGPU_ADD_DEV),
	},
	[VGPU_ADD_TYPE] = {
		.keyword = "type", .type = ARG_STRING, .meta = "NAME",
		.offset = offsetof(struct vgpu_add_opts, type),
		.flags = ARG_REQUIRED, .max_len = 95,
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
	[VGPU_ADD_DEV] = {
		.keyword = "dev", .type = ARG_STRING, .meta = "NAME",
		.offset = offsetof(struct vgpu_add_opts, dev),
		.max_len = 63,
	},
	[VGPU_ADD_VF] = {
		.keyword = "vf", .type = ARG_STRING, .meta = "BDF",
		.offset = offsetof(struct vgpu_add_opts, vf),
		.max_len = 15,
		.excludes = ARG_BIT(VGPU_ADD_UUID) | ARG_BIT(VGPU_ADD_GI),
	},
	{ .keyword = NULL }
};

/* What only gpuvirt offers, by keyword, for the refusals on other stacks. */
static const struct {
	unsigned int arg;
	const char *keyword;
} vgpu_add_ours_only[] = {
	{ VGPU_ADD_WEIGHT, "weight" },
	{ VGPU_ADD_MIN, "min" },
	{ VGPU_ADD_MAX, "max" },
	{ VGPU_ADD_GI, "gi" },
};

/* vgpu add dev NAME: a vGPU on another stack. */
static int vgpu_add_other(struct ctx *ctx, const struct vgpu_add_opts *opts,
			  uint64_t given)
{
	struct stk_host h = { .n_devs = 0 };
	struct stk_vgpu made = { .gi = -1, .placement = -1 };
	struct stk_dev *targets[64], *d = NULL;
	char err[2048], uuid[UNITS_UUID_LEN];
	const struct stk_type *t = NULL;
	const char *stack;
	unsigned int n, i;
	int ret, idx;

	ret = stk_load(ctx, &h);
	if (ret)
		return ret;
	n = stk_targets(&h, opts->dev, targets, 64);
	if (!n) {
		ret = stk_dev_arg(&h, opts->dev, &d);
		if (!ret) {
			err_print("%s offers no vGPU types", opts->dev);
			ret = EXIT_RUNTIME;
		}
		goto out;
	}
	stack = stk_kind_name(targets[0]->kind);
	for (i = 0; i < sizeof(vgpu_add_ours_only) / sizeof(vgpu_add_ours_only[0]); i++) {
		if (given & ARG_BIT(vgpu_add_ours_only[i].arg)) {
			err_print("\"%s\" is not offered by this stack (%s)",
				  vgpu_add_ours_only[i].keyword, stack);
			ret = EXIT_USAGE;
			goto out;
		}
	}
	if (targets[0]->kind == STK_SRIOV) {
		err_print("vGPUs are not offered by this stack (sriov): %s has plain VFs, which \"gpuvirtctl pt\" assigns whole",
			  targets[0]->name);
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (targets[0]->kind == STK_NVVF && (given & ARG_BIT(VGPU_ADD_UUID))) {
		err_print("\"uuid\" is not offered by this stack (nvidia-vf): its vGPUs are named by their VF's PCI address");
		ret = EXIT_USAGE;
		goto out;
	}
	if (targets[0]->kind == STK_MDEV && (given & ARG_BIT(VGPU_ADD_VF))) {
		err_print("\"vf\" is not offered by this stack (mdev)");
		ret = EXIT_USAGE;
		goto out;
	}

	/* the type by its name on the first parent, then a parent with room */
	idx = stk_match_type(targets[0], opts->type, err, sizeof(err));
	if (idx < 0) {
		err_print("%s", err);
		ret = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < n && !d; i++) {
		const struct stk_type *ti = NULL;
		unsigned int j;

		for (j = 0; j < targets[i]->n_types; j++)
			if (!strcmp(targets[i]->types[j].id,
				    targets[0]->types[idx].id))
				ti = &targets[i]->types[j];
		/* nvidia-vf: stk_nvvf_create() looks for the free VF */
		if (ti && (ti->available != 0 ||
			   targets[i]->kind == STK_NVVF)) {
			d = targets[i];
			t = ti;
		}
	}
	if (!d) {
		err_print("no room for a vGPU of type \"%s\" (%s) on %s: available_instances is 0",
			  targets[0]->types[idx].name, targets[0]->types[idx].id,
			  opts->dev);
		ret = EXIT_RUNTIME;
		goto out;
	}

	made.kind = d->kind;
	stk_copy(made.dev, sizeof(made.dev), d->name);
	stk_copy(made.type_id, sizeof(made.type_id), t->id);
	stk_copy(made.type_name, sizeof(made.type_name), t->name);
	if (d->kind == STK_NVVF) {
		char bdf[STK_BDF_LEN], vf[PT_BDF_LEN];

		if ((given & ARG_BIT(VGPU_ADD_VF)) &&
		    pt_bdf_parse(opts->vf, vf, err, sizeof(err))) {
			err_print("\"vf\": %s", err);
			ret = EXIT_USAGE;
			goto out;
		}
		if (stk_nvvf_create(&h, d, t,
				    (given & ARG_BIT(VGPU_ADD_VF)) ? vf : NULL,
				    bdf, err, sizeof(err))) {
			err_print("%s", err);
			ret = EXIT_RUNTIME;
			goto out;
		}
		stk_copy(made.handle, sizeof(made.handle), bdf);
	} else {
		if (given & ARG_BIT(VGPU_ADD_UUID)) {
			memcpy(uuid, opts->uuid, sizeof(uuid));
		} else {
			ret = sysfs_random_uuid(uuid);
			if (ret) {
				err_print("cannot make a UUID: /dev/urandom: %s",
					  strerror(-ret));
				ret = EXIT_RUNTIME;
				goto out;
			}
		}
		if (stk_mdev_create(&h, d, t, uuid, err, sizeof(err))) {
			err_print("%s", err);
			ret = EXIT_RUNTIME;
			goto out;
		}
		stk_copy(made.handle, sizeof(made.handle), uuid);
	}
	pr_open_object(NULL);
	pr_open_array("vgpu");
	stk_print_vgpu(&made);
	pr_close_array();
	pr_close_object();
	ret = EXIT_OK;
out:
	stk_free(&h);
	return ret;
}

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

const char *vf_type_hint(int err)
{
	switch (err) {
	case -EXDEV:
		return "it is a VF of another GPU";
	case -ENODEV:
		return "there is no such VF (does the GPU have enough \"vfs\"?)";
	case -EBUSY:
		return "it has a type already";
	case -ENOENT:
		return "its gpuvirt/creatable_vgpu_types does not list the type now (the GPU has no room left for it)";
	default:
		return vgpu_create_hint(err);
	}
}

/*
 * vgpu add on a GPU in the sriov vGPU model: give the VF asked for, or a
 * free one, the type. The VFs are tried in order; one taken meanwhile by
 * another writer refuses (EBUSY) and the next is tried. The kernel
 * chooses the UUID.
 */
static int vgpu_add_vf(struct ctx *ctx, const struct vgpu_add_opts *opts,
		       uint64_t given, const struct vgpu_params *p)
{
	char dev[64], vf[64], uuid[UNITS_UUID_LEN];
	int ret, err;

	if (given & (ARG_BIT(VGPU_ADD_UUID) | ARG_BIT(VGPU_ADD_GI))) {
		err_print("GPU %u has SR-IOV vGPUs: a VF vGPU's UUID is the kernel's, and its GI the one the type places it on; leave out \"%s\"",
			  opts->gpu, given & ARG_BIT(VGPU_ADD_UUID) ? "uuid" : "gi");
		return EXIT_USAGE;
	}
	ret = gpu_mdev_parent(ctx, opts->gpu, -1, dev, sizeof(dev));
	if (ret)
		return ret;
	if (given & ARG_BIT(VGPU_ADD_VF)) {
		char err_buf[128];

		if (pt_bdf_parse(opts->vf, vf, err_buf, sizeof(err_buf))) {
			err_print("\"vf\": %s", err_buf);
			return EXIT_USAGE;
		}
		err = sysfs_vf_type(dev, vf, opts->type, uuid);
		if (err) {
			err_print("cannot give VF %s of GPU %u (%s) the type %s: %s",
				  vf, opts->gpu, dev, opts->type,
				  vf_type_hint(err));
			return EXIT_RUNTIME;
		}
		goto typed;
	}
	err = sysfs_vf_take(dev, opts->type, vf, sizeof(vf), uuid);
	if (err == -ENOENT) {
		err_print("GPU %u (%s) has no free VF that can take a vGPU of type %s: see its VFs' gpuvirt/creatable_vgpu_types, or enable more through sriov_numvfs",
			  opts->gpu, dev, opts->type);
		return EXIT_RUNTIME;
	} else if (err) {
		err_print("cannot give a VF of GPU %u (%s) the type %s: %s",
			  opts->gpu, dev, opts->type, vgpu_create_hint(err));
		return EXIT_RUNTIME;
	}

typed:
	if ((p->weight_set || p->min_set || p->max_set) &&
	    vgpu_params_set(ctx, uuid, p)) {
		nl_perror(ctx->nl, &vgpu_names);
		err = sysfs_vf_release(vf);
		if (err)
			err_print("cannot take the type from VF %s again: %s",
				  vf, strerror(-err));
		else
			err_print("took the type from VF %s again", vf);
		return EXIT_RUNTIME;
	}
	return vgpu_show_one(ctx, uuid);
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

	if (given & ARG_BIT(VGPU_ADD_DEV))
		return vgpu_add_other(ctx, opts, given);
	if (!(given & ARG_BIT(VGPU_ADD_GPU))) {
		err_print("missing argument \"gpu\" (or \"dev\" for another stack's device)");
		fprintf(stderr, "Try \"gpuvirtctl vgpu help\".\n");
		return EXIT_USAGE;
	}
	if (strlen(opts->type) > 23) {
		err_print("\"type\" of a gpuvirt vGPU is at most 23 characters");
		return EXIT_USAGE;
	}

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
	/* a MIG-backed type is offered by its GI's device */
	ret = gpu_mdev_parent(ctx, opts->gpu, (given & ARG_BIT(VGPU_ADD_GI)) ?
			      (int)opts->gi : -1, gpu, sizeof(gpu));
	if (ret)
		return ret;
	if (gpu_sriov(ctx, opts->gpu) > 0)
		return vgpu_add_vf(ctx, opts, given, &p);
	if (given & ARG_BIT(VGPU_ADD_VF)) {
		err_print("\"vf\": GPU %u has the mdev vGPU model, whose vGPUs are no VFs (gpuvirtctl gpu set id %u vgpu-model sriov)",
			  opts->gpu, opts->gpu);
		return EXIT_USAGE;
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

enum { VGPU_SET_UUID, VGPU_SET_WEIGHT, VGPU_SET_MIN, VGPU_SET_MAX, VGPU_SET_FRL };

struct vgpu_set_opts {
	char uuid[UNITS_UUID_LEN];
	uint32_t weight, min, max, frl;
};

static const struct arg_enum vgpu_on_off[] = {
	{ "on",		1 },
	{ "off",	0 },
	{ .name = NULL }
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
	[VGPU_SET_FRL] = {
		.keyword = "frame-rate-limiter", .type = ARG_ENUM,
		.enums = vgpu_on_off, .meta = "{ on | off }",
		.offset = offsetof(struct vgpu_set_opts, frl),
		.flags = ARG_ONE_OF,
	},
	{ .keyword = NULL }
};

static int vgpu_set(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct vgpu_set_opts *opts = o;
	struct vgpu_params p = {
		.weight_set = given & ARG_BIT(VGPU_SET_WEIGHT),
		.min_set = given & ARG_BIT(VGPU_SET_MIN),
		.max_set = given & ARG_BIT(VGPU_SET_MAX),
		.frl_set = given & ARG_BIT(VGPU_SET_FRL),
		.weight = opts->weight, .min = opts->min, .max = opts->max,
		.frl = opts->frl,
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

enum { VGPU_DEL_UUID, VGPU_DEL_VF };

struct vgpu_del_opts {
	char uuid[UNITS_UUID_LEN];
	const char *vf;
};

static const struct arg_spec vgpu_del_args[] = {
	[VGPU_DEL_UUID] = {
		.keyword = "uuid", .type = ARG_UUID, .meta = "UUID",
		.offset = offsetof(struct vgpu_del_opts, uuid),
		.excludes = ARG_BIT(VGPU_DEL_VF),
	},
	[VGPU_DEL_VF] = {
		.keyword = "vf", .type = ARG_STRING, .meta = "BDF",
		.offset = offsetof(struct vgpu_del_opts, vf),
		.max_len = 15,
	},
	{ .keyword = NULL }
};

/*
 * A vGPU of another stack: -1 if @handle is none, else an exit status
 * having removed it or said why not.
 */
static int vgpu_del_other(struct ctx *ctx, const char *handle, bool vf)
{
	struct stk_host h = { .n_devs = 0 };
	const struct stk_vgpu *v;
	char err[1024];
	int ret;

	ret = stk_load(ctx, &h);
	if (ret)
		return ret;
	v = stk_find_vgpu(&h, handle);
	if (!v) {
		ret = -1;
		if (vf || ctx->sysfs_root) {
			err_print(vf ? "no vGPU on VF %s (its current_vgpu_type is 0, or it has no NVIDIA vGPU files)" :
				  "no vGPU with UUID %s", handle);
			ret = EXIT_RUNTIME;
		}
		goto out;
	}
	if (v->kind == STK_NVVF)
		ret = stk_nvvf_remove(&h, v, err, sizeof(err));
	else
		ret = stk_mdev_remove(&h, v, err, sizeof(err));
	if (ret) {
		err_print("%s", err);
		ret = EXIT_RUNTIME;
	}
out:
	stk_free(&h);
	return ret;
}

/*
 * A VF of one of gpuvirt's GPUs, which has gpuvirt/current_vgpu_type: -1
 * if @arg is none, else an exit status having cleared its type or said
 * why not.
 */
static int vgpu_del_our_vf(struct ctx *ctx, const char *arg)
{
	char vf[PT_BDF_LEN], uuid[UNITS_UUID_LEN];
	int err;

	err = our_vf(ctx, arg, vf, uuid);
	if (err < 0)
		return -1;
	if (err)
		return err;
	err = sysfs_vf_release(vf);
	if (err == -EBUSY) {
		err_print("cannot clear the type of VF %s: it is open; it keeps its type until its user closes it",
			  vf);
		return EXIT_RUNTIME;
	} else if (err) {
		err_print("cannot clear the type of VF %s: %s", vf,
			  strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* The VF address of a vGPU made on one, or "" for an mdev vGPU. */
static int vgpu_vf_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_VGPU_MAX + 1];
	char *vf = data;

	if (nl_parse(nlh, vgpu_policy, GPUVIRT_A_VGPU_MAX, tb)) {
		err_print("malformed vGPU message from the kernel");
		return -EINVAL;
	}
	nl_attr_strcpy(vf, 64, tb[GPUVIRT_A_VGPU_VF]);
	return 0;
}

static int vgpu_del(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct vgpu_del_opts *opts = o;
	struct nlmsghdr *nlh;
	char vf[64] = "";
	int ret, err;

	if (given & ARG_BIT(VGPU_DEL_VF)) {
		ret = vgpu_del_our_vf(ctx, opts->vf);
		return ret >= 0 ? ret : vgpu_del_other(ctx, opts->vf, true);
	}
	if (!(given & ARG_BIT(VGPU_DEL_UUID))) {
		err_print("missing argument \"uuid\" (or \"vf\" for an nvidia-vf vGPU)");
		fprintf(stderr, "Try \"gpuvirtctl vgpu help\".\n");
		return EXIT_USAGE;
	}
	/*
	 * gpuvirt's own vGPUs are asked about first, by UUID: scanning every
	 * stack's devices for one costs as much as there are vGPUs, which a
	 * batch removing them all would pay once per vGPU. Without the
	 * module, or on a tree under --sysfs-root, only the other stacks are
	 * looked at.
	 */
	if (ctx->sysfs_root)
		return vgpu_del_other(ctx, opts->uuid, false);
	ret = ctx_nl_try(ctx);
	if (ret == -ENOENT) {
		ret = vgpu_del_other(ctx, opts->uuid, false);
		if (ret >= 0)
			return ret;
		/* neither gpuvirt nor another stack: say gpuvirt is missing */
		return ctx_nl(ctx);
	}
	if (ret)
		return ret;

	/*
	 * gpuvirt's first: the kernel knows its vGPUs. A UUID it does not
	 * know may be another stack's mdev device (mtty, NVIDIA, GVT-g),
	 * removed through its own "remove" unless in use.
	 */
	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_VGPU_GET, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, opts->uuid);
	/* only its VF is read: not its counters (a batch asks once a vGPU) */
	nl_put_optional_u32(ctx->nl, nlh, GPUVIRT_A_VGPU_OMIT,
			    GPUVIRT_VGPU_OMIT_STATS |
			    GPUVIRT_VGPU_OMIT_MIGRATION);
	if (nl_exchange(ctx->nl, vgpu_vf_cb, vf)) {
		/* not gpuvirt's: another stack's, or the kernel's answer */
		struct nl_error nl_err = ctx->nl->error;

		ret = vgpu_del_other(ctx, opts->uuid, false);
		if (ret >= 0)
			return ret;
		ctx->nl->error = nl_err;
		nl_perror(ctx->nl, &vgpu_names);
		return EXIT_RUNTIME;
	}

	/* a VF's vGPU goes when the VF's type is cleared */
	err = vf[0] ? sysfs_vf_release(vf) : sysfs_mdev_remove(opts->uuid);
	if (err == -EBUSY && vf[0]) {
		err_print("cannot remove vGPU %s: VF %s is open; it keeps its type until its user closes it",
			  opts->uuid, vf);
		return EXIT_RUNTIME;
	} else if (err == -ENOENT) {
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

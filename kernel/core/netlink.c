// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gpuvirt generic netlink family. The policies, op table, hooks and
 * uapi come from Documentation/netlink/specs/gpuvirt.yaml through the
 * kernel's YNL generator (netlink-gen.[ch]); this file holds the hooks and
 * the handlers.
 *
 * Every request is checked before its handler runs, by the hooks the spec
 * names: gpuvirt_nl_pre_doit() for a request that names no GPU,
 * gpuvirt_nl_pre_doit_gpu() for one that does (it finds the GPU, takes a
 * reference and the GPU's lock, and the post hook gives both back), and
 * gpuvirt_nl_dump_start() for a dump. Dumps all run through
 * gpuvirt_nl_dump(), resuming from a typed struct gpuvirt_nl_dump_ctx in
 * cb->ctx; notifications all go through gpuvirt_nl_notify(), called by
 * the function that makes a change (gpu.c, gi.c, engine.c, mdev.c), never
 * by the handlers here.
 *
 * Handlers follow <fam>_nl_<obj>_<cmd>_doit/_dumpit, with one
 * <fam>_nl_<obj>_fill per object and <fam>_<obj>_notify for events.
 */
#include <linux/pci.h>
#include <net/genetlink.h>

#include "gpuvirt.h"
#include "sriov.h"
#include "vgpu.h"

/*
 * For a genetlink-legacy family the generator leaves the family struct to
 * us but emits the multicast group table as a static array; compiling the
 * generated tables as part of this file lets the family use that table
 * straight from the spec.
 */
#include "netlink-gen.c"

#ifndef GPUVIRT_HAVE_GENL_SPLIT_OPS
/* v6.1: the split table as one genl_ops per command (compat.h) */
static struct genl_ops gpuvirt_nl_legacy_ops[ARRAY_SIZE(gpuvirt_nl_ops)]
	__ro_after_init;
static int gpuvirt_nl_legacy_pre_doit(const struct genl_ops *ops,
				      struct sk_buff *skb,
				      struct genl_info *info);
static void gpuvirt_nl_legacy_post_doit(const struct genl_ops *ops,
					struct sk_buff *skb,
					struct genl_info *info);
#endif

/*
 * GPUs are host-wide objects, so the family only exists in the initial
 * network namespace. Every command validates strictly.
 */
static struct genl_family gpuvirt_nl_family __ro_after_init = {
	.name		= GPUVIRT_FAMILY_NAME,
	.version	= GPUVIRT_FAMILY_VERSION,
	.netnsok	= false,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
#ifdef GPUVIRT_HAVE_GENL_SPLIT_OPS
	.split_ops	= gpuvirt_nl_ops,
	.n_split_ops	= ARRAY_SIZE(gpuvirt_nl_ops),
#else
	.ops		= gpuvirt_nl_legacy_ops,
	.pre_doit	= gpuvirt_nl_legacy_pre_doit,
	.post_doit	= gpuvirt_nl_legacy_post_doit,
#endif
	.n_mcgrps	= ARRAY_SIZE(gpuvirt_nl_mcgrps),
};

/*
 * The generator leaves the groups' flags out; the monitor group carries
 * vGPU counters, tenant data, so listening to it takes CAP_NET_ADMIN.
 */
static struct genl_multicast_group
gpuvirt_nl_mcgrps_admin[ARRAY_SIZE(gpuvirt_nl_mcgrps)] __ro_after_init;

/*
 * What the generated policies cannot say about a request: the genetlink
 * header's reserved field is zero, and no attribute comes twice (the
 * parser would silently keep the last one).
 */
static int gpuvirt_nl_check_req(const struct nlmsghdr *nlh,
				struct netlink_ext_ack *extack)
{
	const struct genlmsghdr *g = nlmsg_data(nlh);
	DECLARE_BITMAP(seen, 64);
	const struct nlattr *a;
	int rem;

	if (g->reserved) {
		NL_SET_ERR_MSG(extack, "the genetlink header's reserved field must be 0");
		return -EINVAL;
	}
	bitmap_zero(seen, 64);
	nlmsg_for_each_attr(a, nlh, GENL_HDRLEN, rem) {
		if (nla_type(a) < 64 && __test_and_set_bit(nla_type(a), seen)) {
			NL_SET_ERR_MSG_ATTR(extack, a, "attribute given twice");
			return -EINVAL;
		}
	}
	return 0;
}

/* Hooks, named by the spec */

int gpuvirt_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
			struct genl_info *info)
{
	return gpuvirt_nl_check_req(info->nlhdr, info->extack);
}

void gpuvirt_nl_post_doit(const struct genl_split_ops *ops,
			  struct sk_buff *skb, struct genl_info *info)
{
}

/* The attribute that names the GPU in a request of @cmd. */
static unsigned int gpuvirt_nl_gpu_attr(u8 cmd)
{
	switch (cmd) {
	case GPUVIRT_CMD_GPU_GET:
	case GPUVIRT_CMD_GPU_SET:
		return GPUVIRT_A_GPU_ID;
	case GPUVIRT_CMD_TYPE_GET:
		return GPUVIRT_A_TYPE_GPU_ID;
	case GPUVIRT_CMD_SCHED_GET:
	case GPUVIRT_CMD_SCHED_SET:
		return GPUVIRT_A_SCHED_GPU_ID;
	default:
		return GPUVIRT_A_GI_GPU_ID;
	}
}

/*
 * For a request that names a GPU: find it, hold a reference and its lock
 * until gpuvirt_nl_post_doit_gpu(). The handler finds it in user_ptr[0];
 * it is registered, and stays so, until the post hook.
 */
int gpuvirt_nl_pre_doit_gpu(const struct genl_split_ops *ops,
			    struct sk_buff *skb, struct genl_info *info)
{
	unsigned int attr = gpuvirt_nl_gpu_attr(ops->cmd);
	struct gpuvirt_gpu *gpu;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, attr)) {
		NL_SET_ERR_MSG(info->extack, "GPU id is required");
		return -EINVAL;
	}
	gpu = gpuvirt_gpu_get(nla_get_u32(info->attrs[attr]));
	if (!gpu) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr],
				    "no GPU with this id");
		return -ENOENT;
	}
	err = gpuvirt_gpu_lock(gpu);
	if (err) {
		gpuvirt_gpu_put(gpu);
		if (err == -EINTR)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr],
					    "interrupted while waiting for the GPU");
		else
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr],
					    "the GPU is going away");
		return err;
	}
	info->user_ptr[0] = gpu;
	return 0;
}

void gpuvirt_nl_post_doit_gpu(const struct genl_split_ops *ops,
			      struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_gpu *gpu = info->user_ptr[0];

	gpuvirt_gpu_unlock(gpu);
	gpuvirt_gpu_put(gpu);
}

/**
 * struct gpuvirt_nl_dump_ctx - where a dump resumes, in cb->ctx
 * @gpu_id: the GPU it was at
 * @mp: the vGPU parent or scheduler in that GPU (gpuvirt_gpu_mp() index)
 * @item: the item in that parent: a type, a vGPU slot or a GI id
 * @done: every GPU has been sent
 * @check: the request is still to be checked (gpuvirt_nl_dump_start())
 *
 * Each object's dump function starts at @mp and @item and moves them past
 * each item it puts, so that a full skb leaves them at the one that did
 * not fit.
 */
struct gpuvirt_nl_dump_ctx {
	unsigned long gpu_id;
	unsigned int mp;
	unsigned int item;
	bool done;
	bool check;
};

static struct gpuvirt_nl_dump_ctx *gpuvirt_nl_dump_ctx(struct netlink_callback *cb)
{
	NL_ASSERT_CTX_FITS(struct gpuvirt_nl_dump_ctx);
	return (struct gpuvirt_nl_dump_ctx *)cb->ctx;
}

int gpuvirt_nl_dump_start(struct netlink_callback *cb)
{
	/*
	 * A kernel that gives start() no extack (v6.1) has the check run at
	 * the first dumpit instead, whose refusal carries its extack in
	 * NLMSG_DONE.
	 */
	if (!cb->extack) {
		gpuvirt_nl_dump_ctx(cb)->check = true;
		return 0;
	}
	return gpuvirt_nl_check_req(cb->nlh, cb->extack);
}

/**
 * gpuvirt_nl_dump() - the one walk of every dump over the GPUs
 * @skb: the dump's message buffer
 * @cb: the dump
 * @filter_attr: the request's gpu-id attribute that limits the dump to one
 *	GPU, or 0
 * @dump_gpu: puts the GPU's objects from the context's position on
 *
 * cb->seq is the registry's generation, so that a dump that spans a change
 * is flagged NLM_F_DUMP_INTR (each message's header is checked against it).
 *
 * Return: what a dumpit returns: the bytes put, 0 at the end, or -errno.
 */
static int gpuvirt_nl_dump(struct sk_buff *skb, struct netlink_callback *cb,
			   unsigned int filter_attr,
			   int (*dump_gpu)(struct sk_buff *skb,
					   struct netlink_callback *cb,
					   struct gpuvirt_gpu *gpu,
					   struct gpuvirt_nl_dump_ctx *ctx))
{
	struct gpuvirt_nl_dump_ctx *ctx = gpuvirt_nl_dump_ctx(cb);
	struct nlattr *filter = NULL;
	struct gpuvirt_gpu *gpu;
	unsigned long id;
	int err = 0;

	if (ctx->done)
		return 0;
	if (ctx->check) {
		err = gpuvirt_nl_check_req(cb->nlh, cb->extack);
		if (err)
			return err;
		ctx->check = false;
	}
	if (filter_attr)
		filter = gpuvirt_genl_dump_attrs(cb)[filter_attr];
	mutex_lock(&gpuvirt_registry.lock);
	cb->seq = atomic_read(&gpuvirt_registry.gen);
	xa_for_each_start(&gpuvirt_registry.gpus, id, gpu, ctx->gpu_id) {
		if (id != ctx->gpu_id) {
			ctx->gpu_id = id;
			ctx->mp = 0;
			ctx->item = 0;
		}
		if (filter && nla_get_u32(filter) != gpu->id)
			continue;
		err = dump_gpu(skb, cb, gpu, ctx);
		if (err)
			break;
	}
	mutex_unlock(&gpuvirt_registry.lock);

	if (!err)
		ctx->done = true;
	else if (err == -EMSGSIZE && skb->len)
		err = 0;	/* a full skb: resume where it stopped */
	return err ?: skb->len;
}

/**
 * gpuvirt_nl_put_hdr() - start a gpuvirt message
 * @skb: the message buffer
 * @m: its destination and command
 *
 * Return: the header to end or cancel, or NULL when @skb is full.
 */
void *gpuvirt_nl_put_hdr(struct sk_buff *skb, const struct gpuvirt_nl_msg *m)
{
	void *hdr = genlmsg_put(skb, m->portid, m->seq, &gpuvirt_nl_family,
				m->flags, m->cmd);

	if (hdr && m->cb)
		genl_dump_check_consistent(m->cb, hdr);
	return hdr;
}

/* The header of the message a dump puts next. */
static struct gpuvirt_nl_msg gpuvirt_nl_dump_msg(struct netlink_callback *cb,
						 u8 cmd)
{
	return (struct gpuvirt_nl_msg){
		.portid = NETLINK_CB(cb->skb).portid,
		.seq = cb->nlh->nlmsg_seq,
		.flags = NLM_F_MULTI,
		.cmd = cmd,
		.cb = cb,
	};
}

/* The header of a doit's reply. */
static struct gpuvirt_nl_msg gpuvirt_nl_reply_msg(struct genl_info *info,
						  u8 cmd)
{
	return (struct gpuvirt_nl_msg){
		.portid = info->snd_portid,
		.seq = info->snd_seq,
		.cmd = cmd,
	};
}

/**
 * gpuvirt_nl_reply_msg_obj() - answer a doit with one object, as @m says
 * @info: the request
 * @fill: puts the object
 * @obj: the object
 * @m: the reply's header (gpuvirt_nl_reply_msg()) and what it leaves out
 *
 * Return: 0, or -errno with extack.
 */
static int gpuvirt_nl_reply_msg_obj(struct genl_info *info,
				    int (*fill)(struct sk_buff *skb, void *obj,
						const struct gpuvirt_nl_msg *m),
				    void *obj, const struct gpuvirt_nl_msg *m)
{
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	err = fill(msg, obj, m);
	if (err) {
		NL_SET_ERR_MSG(info->extack, "the object does not fit in a message");
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/**
 * gpuvirt_nl_reply() - answer a doit with one object
 * @info: the request
 * @fill: puts the object
 * @obj: the object
 * @cmd: the reply's command
 *
 * Return: 0, or -errno with extack.
 */
static int gpuvirt_nl_reply(struct genl_info *info,
			    int (*fill)(struct sk_buff *skb, void *obj,
					const struct gpuvirt_nl_msg *m),
			    void *obj, u8 cmd)
{
	struct gpuvirt_nl_msg m = gpuvirt_nl_reply_msg(info, cmd);

	return gpuvirt_nl_reply_msg_obj(info, fill, obj, &m);
}

/**
 * gpuvirt_nl_notify() - tell the monitor group about an object
 * @fill: puts the object
 * @obj: the object
 * @cmd: the notification, GPUVIRT_CMD_*_NTF
 *
 * The one way every event goes out. Nothing is sent when nobody listens;
 * an event that cannot be allocated or does not fit is dropped, and the
 * change it reports stands.
 *
 * Context: may sleep.
 */
void gpuvirt_nl_notify(int (*fill)(struct sk_buff *skb, void *obj,
				   const struct gpuvirt_nl_msg *m),
		       void *obj, u8 cmd)
{
	struct gpuvirt_nl_msg m = { .cmd = cmd };
	struct sk_buff *msg;

	if (!genl_has_listeners(&gpuvirt_nl_family, &init_net,
				GPUVIRT_NLGRP_MONITOR))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (fill(msg, obj, &m)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&gpuvirt_nl_family, msg, 0, GPUVIRT_NLGRP_MONITOR,
			  GFP_KERNEL);
}

/* The constant message of each refusal, for kernels without formatted ones. */
static const char *const gpuvirt_nl_mig_reasons[] = {
	[GPUVIRT_MIG_OK]		= "refused",
	[GPUVIRT_MIG_ERR_PROFILE]	= "no GI profile of this name",
	[GPUVIRT_MIG_ERR_START]		= "not a legal start of the profile",
	[GPUVIRT_MIG_ERR_GI]		= "no GI with this id",
	[GPUVIRT_MIG_ERR_GIS]		= "the GPU already has 7 GIs",
	[GPUVIRT_MIG_ERR_MAX]		= "the GPU has as many GIs of the profile as it may",
	[GPUVIRT_MIG_ERR_MEMORY]	= "a memory slot of the placement is taken by another GI",
	[GPUVIRT_MIG_ERR_COMPUTE]	= "a compute slice of the placement is taken by another GI",
	[GPUVIRT_MIG_ERR_NO_START]	= "no legal start of the profile is free",
	[GPUVIRT_MIG_ERR_SLICES]	= "the GIs need more than 7 compute slices",
	[GPUVIRT_MIG_ERR_SLOTS]		= "the GIs need more than 8 memory slots",
	[GPUVIRT_MIG_ERR_FRAGMENT]	= "no placement holds all the GIs",
	[GPUVIRT_MIG_ERR_BUSY]		= "a busy GI is in the way",
	[GPUVIRT_MIG_ERR_BUSY_PLACE]	= "the GIs do not fit around the busy GIs",
};

/*
 * Report a refusal from gi.c: its own words where the kernel can carry
 * them, else the constant for its reason, else @fixed.
 */
static void gpuvirt_nl_why(struct netlink_ext_ack *extack,
			   const struct gpuvirt_mig_why *why, const char *fixed)
{
	if (why->reason != GPUVIRT_MIG_OK &&
	    why->reason < ARRAY_SIZE(gpuvirt_nl_mig_reasons))
		fixed = gpuvirt_nl_mig_reasons[why->reason];
	gpuvirt_nl_err_str(extack, fixed, why->msg[0] ? why->msg : fixed);
}

/* GPUs */

static int gpuvirt_nl_gpu_fill(struct sk_buff *skb, void *obj,
			       const struct gpuvirt_nl_msg *m)
{
	struct gpuvirt_gpu *gpu = obj;
	void *hdr;

	hdr = gpuvirt_nl_put_hdr(skb, m);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, GPUVIRT_A_GPU_ID, gpu->id) ||
	    nla_put_string(skb, GPUVIRT_A_GPU_NAME, gpu->name) ||
	    nla_put_string(skb, GPUVIRT_A_GPU_MODEL, gpu->model_name) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_GPU_VRAM_SIZE, gpu->vram_size,
			      GPUVIRT_A_GPU_PAD) ||
	    nla_put_u32(skb, GPUVIRT_A_GPU_ENGINES, gpu->engines) ||
	    nla_put_u32(skb, GPUVIRT_A_GPU_MODE, gpu->mode) ||
	    nla_put_string(skb, GPUVIRT_A_GPU_BACKEND, gpu->ops->name) ||
	    nla_put_u32(skb, GPUVIRT_A_GPU_VGPU_MODE,
			gpuvirt_gpu_vgpu_mode(gpu)) ||
	    nla_put_string(skb, GPUVIRT_A_GPU_DEV_NAME, dev_name(gpu->dev)) ||
	    nla_put_u32(skb, GPUVIRT_A_GPU_VGPU_MODEL,
			gpuvirt_gpu_sriov(gpu) ? GPUVIRT_VGPU_MODEL_SRIOV :
						 GPUVIRT_VGPU_MODEL_MDEV) ||
	    (gpu->sriov &&
	     (nla_put_u32(skb, GPUVIRT_A_GPU_MAX_VFS, gpu->max_vfs) ||
	      nla_put_u32(skb, GPUVIRT_A_GPU_NUM_VFS,
			  pci_num_vf(to_pci_dev(gpu->dev)))))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

int gpuvirt_nl_gpu_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return gpuvirt_nl_reply(info, gpuvirt_nl_gpu_fill, info->user_ptr[0],
				GPUVIRT_CMD_GPU_GET);
}

static int gpuvirt_nl_gpu_dump_one(struct sk_buff *skb,
				   struct netlink_callback *cb,
				   struct gpuvirt_gpu *gpu,
				   struct gpuvirt_nl_dump_ctx *ctx)
{
	struct gpuvirt_nl_msg m = gpuvirt_nl_dump_msg(cb, GPUVIRT_CMD_GPU_GET);

	return gpuvirt_nl_gpu_fill(skb, gpu, &m);
}

int gpuvirt_nl_gpu_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuvirt_nl_dump(skb, cb, 0, gpuvirt_nl_gpu_dump_one);
}

/**
 * gpuvirt_gpu_notify() - tell the monitor group about a GPU event
 * @gpu: the GPU, its lock held (its mode cannot change meanwhile)
 * @cmd: GPUVIRT_CMD_GPU_ADD_NTF, GPUVIRT_CMD_GPU_DEL_NTF or
 *	GPUVIRT_CMD_GPU_CHANGE_NTF
 */
void gpuvirt_gpu_notify(struct gpuvirt_gpu *gpu, u8 cmd)
{
	lockdep_assert_held(&gpu->lock);
	gpuvirt_nl_notify(gpuvirt_nl_gpu_fill, gpu, cmd);
}

/*
 * A refusal of gpuvirt_gpu_configure(), aimed at the attribute of the
 * setting refused. Only the GIs in the way come with details, where the
 * kernel can carry them.
 */
static void gpuvirt_nl_gpu_why(struct genl_info *info,
			       const struct gpuvirt_gpu_why *why)
{
	static const unsigned int attrs[] = {
		[GPUVIRT_GPU_CFG_VGPU_MODEL]	= GPUVIRT_A_GPU_VGPU_MODEL,
		[GPUVIRT_GPU_CFG_VGPU_MODE]	= GPUVIRT_A_GPU_VGPU_MODE,
		[GPUVIRT_GPU_CFG_MODE]		= GPUVIRT_A_GPU_MODE,
	};
	struct netlink_ext_ack *extack = info->extack;
	const struct nlattr *attr = info->attrs[attrs[why->item]];

	switch (why->reason) {
	case GPUVIRT_GPU_REFUSED_NO_SRIOV:
		NL_SET_ERR_MSG_ATTR(extack, attr, "the GPU has no SR-IOV");
		break;
	case GPUVIRT_GPU_REFUSED_NO_MIG:
		NL_SET_ERR_MSG_ATTR(extack, attr, "the GPU has no MIG profiles");
		break;
	case GPUVIRT_GPU_REFUSED_GIS:
		gpuvirt_nl_err_str(extack, "the GPU has GPU instances; destroy them first",
				   why->msg);
		NL_SET_BAD_ATTR(extack, attr);
		break;
	case GPUVIRT_GPU_REFUSED_VFS:
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "the GPU has VFs enabled; write 0 to sriov_numvfs first");
		break;
	case GPUVIRT_GPU_REFUSED_VGPUS:
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "the GPU has vGPUs; remove them first");
		break;
	default:
		NL_SET_ERR_MSG_ATTR(extack, attr, "out of memory");
		break;
	}
}

static u32 gpuvirt_nl_u32_or(struct genl_info *info, unsigned int attr,
			     u32 dflt)
{
	return info->attrs[attr] ? nla_get_u32(info->attrs[attr]) : dflt;
}

/* All or nothing (gpuvirt_gpu_configure()): a refused request changes nothing. */
int gpuvirt_nl_gpu_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_gpu_cfg cfg = {
		.vgpu_model = gpuvirt_nl_u32_or(info, GPUVIRT_A_GPU_VGPU_MODEL,
						GPUVIRT_GPU_CFG_KEEP),
		.vgpu_mode = gpuvirt_nl_u32_or(info, GPUVIRT_A_GPU_VGPU_MODE,
					       GPUVIRT_GPU_CFG_KEEP),
		.mode = gpuvirt_nl_u32_or(info, GPUVIRT_A_GPU_MODE,
					  GPUVIRT_GPU_CFG_KEEP),
	};
	struct gpuvirt_gpu_why why;
	int err;

	if (cfg.vgpu_model == GPUVIRT_GPU_CFG_KEEP &&
	    cfg.vgpu_mode == GPUVIRT_GPU_CFG_KEEP &&
	    cfg.mode == GPUVIRT_GPU_CFG_KEEP) {
		NL_SET_ERR_MSG(info->extack, "nothing to set: give mode, vgpu-mode or vgpu-model");
		return -EINVAL;
	}
	err = gpuvirt_gpu_configure(info->user_ptr[0], &cfg, &why);
	if (err == -EINVAL)
		NL_SET_ERR_MSG(info->extack, "unknown value");
	else if (err)
		gpuvirt_nl_gpu_why(info, &why);
	return err;
}

/* A GI id attribute, or -1 when absent. */
static int gpuvirt_nl_gi_id(struct nlattr *attr)
{
	return attr ? (int)min_t(u32, nla_get_u32(attr), INT_MAX) : -1;
}

/* Put the GI id of a parent that is a GI. */
static int gpuvirt_nl_put_gi(struct sk_buff *skb, unsigned int attr,
			     const struct gpuvirt_mdev_parent *mp)
{
	return mp->gi ? nla_put_u32(skb, attr, mp->gi->id) : 0;
}

/*
 * Walk the vGPU parents of a GPU from ctx->mp on, running @dump_mp on
 * each; it starts at ctx->item and moves it on.
 */
static int gpuvirt_nl_dump_parents(struct sk_buff *skb,
				   struct netlink_callback *cb,
				   struct gpuvirt_gpu *gpu,
				   struct gpuvirt_nl_dump_ctx *ctx,
				   int (*dump_mp)(struct sk_buff *skb,
						  struct netlink_callback *cb,
						  struct gpuvirt_mdev_parent *mp,
						  struct gpuvirt_nl_dump_ctx *ctx))
{
	struct gpuvirt_mdev_parent *mp;
	int err;

	for (; ctx->mp < GPUVIRT_GPU_MPS; ctx->mp++, ctx->item = 0) {
		mp = gpuvirt_gpu_mp(gpu, ctx->mp);
		if (!mp)
			continue;
		err = dump_mp(skb, cb, mp, ctx);
		if (err)
			return err;
	}
	return 0;
}

/* Types */

static int gpuvirt_nl_type_fill(struct sk_buff *skb, void *obj,
				const struct gpuvirt_nl_msg *m)
{
	struct gpuvirt_type *type = obj;
	struct gpuvirt_mdev_parent *mp = type->parent;
	const struct gpuvirt_profile *p = type->profile;
	char series[2] = { gpuvirt_profile_series_letter(p->series) };
	unsigned int avail;
	bool mixed;
	void *hdr;

	mutex_lock(&mp->lock);
	avail = gpuvirt_fb_available(&mp->fb, p);
	mixed = mp->fb.mixed;
	mutex_unlock(&mp->lock);

	hdr = gpuvirt_nl_put_hdr(skb, m);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, GPUVIRT_A_TYPE_GPU_ID, mp->gpu->id) ||
	    nla_put_string(skb, GPUVIRT_A_TYPE_NAME, p->name) ||
	    nla_put_string(skb, GPUVIRT_A_TYPE_SERIES, series) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_TYPE_FB_SIZE, p->fb_size,
			      GPUVIRT_A_TYPE_PAD) ||
	    nla_put_u32(skb, GPUVIRT_A_TYPE_MAX_INSTANCES,
			mixed ? p->mixed_max_instances : p->max_instances) ||
	    nla_put_u32(skb, GPUVIRT_A_TYPE_AVAILABLE_INSTANCES, avail) ||
	    nla_put_string(skb, GPUVIRT_A_TYPE_DESCRIPTION, p->description) ||
	    gpuvirt_nl_put_gi(skb, GPUVIRT_A_TYPE_GI_ID, mp)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

int gpuvirt_nl_type_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *gi_attr = info->attrs[GPUVIRT_A_TYPE_GI_ID];
	struct nlattr *name = info->attrs[GPUVIRT_A_TYPE_NAME];
	struct gpuvirt_gpu *gpu = info->user_ptr[0];
	struct gpuvirt_type *type = NULL;
	struct gpuvirt_mdev_parent *mp;
	int gi = gpuvirt_nl_gi_id(gi_attr);
	unsigned int i, m;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_TYPE_NAME)) {
		NL_SET_ERR_MSG(info->extack, "type name is required");
		return -EINVAL;
	}
	if (gi >= 0 && (gi >= GPUVIRT_MIG_GIS_MAX ||
			!gpuvirt_gpu_mp(gpu, gi + 1))) {
		NL_SET_ERR_MSG_ATTR(info->extack, gi_attr,
				    "the GPU has no GI with this id");
		return -ENOENT;
	}
	for (m = 0; m < GPUVIRT_GPU_MPS && !type; m++) {
		mp = gpuvirt_gpu_mp(gpu, m);
		if (!mp || (gi >= 0 && (!mp->gi || mp->gi->id != gi)))
			continue;
		for (i = 0; i < mp->nr_types; i++)
			if (!nla_strcmp(name, mp->profiles[i].name))
				type = &mp->types[i];
	}
	if (!type) {
		if (gi >= 0)
			NL_SET_ERR_MSG_ATTR(info->extack, name,
					    "the GI has no type of this name");
		else
			NL_SET_ERR_MSG_ATTR(info->extack, name,
					    "the GPU has no type of this name");
		return -ENOENT;
	}
	return gpuvirt_nl_reply(info, gpuvirt_nl_type_fill, type,
				GPUVIRT_CMD_TYPE_GET);
}

static int gpuvirt_nl_type_dump_mp(struct sk_buff *skb,
				   struct netlink_callback *cb,
				   struct gpuvirt_mdev_parent *mp,
				   struct gpuvirt_nl_dump_ctx *ctx)
{
	struct gpuvirt_nl_msg m = gpuvirt_nl_dump_msg(cb, GPUVIRT_CMD_TYPE_GET);
	int err;

	for (; ctx->item < mp->nr_types; ctx->item++) {
		err = gpuvirt_nl_type_fill(skb, &mp->types[ctx->item], &m);
		if (err)
			return err;
	}
	return 0;
}

static int gpuvirt_nl_type_dump_gpu(struct sk_buff *skb,
				    struct netlink_callback *cb,
				    struct gpuvirt_gpu *gpu,
				    struct gpuvirt_nl_dump_ctx *ctx)
{
	return gpuvirt_nl_dump_parents(skb, cb, gpu, ctx,
				       gpuvirt_nl_type_dump_mp);
}

int gpuvirt_nl_type_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuvirt_nl_dump(skb, cb, GPUVIRT_A_TYPE_GPU_ID,
			       gpuvirt_nl_type_dump_gpu);
}

/* vGPUs */

static int gpuvirt_nl_vgpu_stats_put(struct sk_buff *skb,
				     const struct gpuvirt_vgpu_stats *st)
{
	u64 wait_max = 0;
	struct nlattr *nest;
	int b;

	for (b = GPUVIRT_WAIT_HIST_BUCKETS - 1; b >= 0; b--) {
		if (st->wait_hist[b]) {
			wait_max = b == GPUVIRT_WAIT_HIST_BUCKETS - 1 ? U64_MAX :
				   1ULL << (2 * b);
			break;
		}
	}
	nest = nla_nest_start(skb, GPUVIRT_A_VGPU_STATS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_STATS_RUN_NS, st->run_ns,
			      GPUVIRT_A_VGPU_STATS_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_STATS_SLICES, st->slices,
			      GPUVIRT_A_VGPU_STATS_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_STATS_PREEMPTIONS,
			      st->preemptions, GPUVIRT_A_VGPU_STATS_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_STATS_WORK_NS, st->work_ns,
			      GPUVIRT_A_VGPU_STATS_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_STATS_PACKETS, st->packets,
			      GPUVIRT_A_VGPU_STATS_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_STATS_WAIT_MAX_US, wait_max,
			      GPUVIRT_A_VGPU_STATS_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* The display: heads offered, and each head that is on with its mode. */
static int gpuvirt_nl_vgpu_display_put(struct sk_buff *skb,
				       struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_display_summary sum;
	struct nlattr *nest;
	unsigned int i;

	gpuvirt_display_summary(vgpu, &sum);
	if (nla_put_u8(skb, GPUVIRT_A_VGPU_FRAME_RATE_LIMITER,
		       gpuvirt_display_frl(vgpu)) ||
	    nla_put_u32(skb, GPUVIRT_A_VGPU_HEADS, vgpu->display.heads))
		return -EMSGSIZE;
	for (i = 0; i < GPUVIRT_VGPU_HEADS_MAX; i++) {
		const struct gpuvirt_display_mode *m = &sum.mode[i];

		if (!(sum.on & BIT(i)))
			continue;
		nest = nla_nest_start(skb, GPUVIRT_A_VGPU_HEAD);
		if (!nest)
			return -EMSGSIZE;
		if (nla_put_u32(skb, GPUVIRT_A_VGPU_HEAD_INDEX, i) ||
		    nla_put_u32(skb, GPUVIRT_A_VGPU_HEAD_WIDTH, m->width) ||
		    nla_put_u32(skb, GPUVIRT_A_VGPU_HEAD_HEIGHT, m->height) ||
		    nla_put_u32(skb, GPUVIRT_A_VGPU_HEAD_STRIDE, m->stride) ||
		    nla_put_u32(skb, GPUVIRT_A_VGPU_HEAD_FORMAT, m->format)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, nest);
	}
	return 0;
}

/* Live migration: the state and the counters. */
static int gpuvirt_nl_vgpu_migration_put(struct sk_buff *skb,
					 struct gpuvirt_migration *mig)
{
	struct gpuvirt_migration_stats st;
	struct nlattr *nest;

	gpuvirt_migration_get(mig, &st);
	nest = nla_nest_start(skb, GPUVIRT_A_VGPU_MIGRATION);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, GPUVIRT_A_VGPU_MIGRATION_STATE, st.state) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_MIGRATION_SAVES, st.saves,
			      GPUVIRT_A_VGPU_MIGRATION_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_MIGRATION_RESUMES, st.resumes,
			      GPUVIRT_A_VGPU_MIGRATION_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_MIGRATION_REFUSED, st.refused,
			      GPUVIRT_A_VGPU_MIGRATION_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_MIGRATION_BYTES_SAVED,
			      st.bytes_saved, GPUVIRT_A_VGPU_MIGRATION_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_MIGRATION_BYTES_RESUMED,
			      st.bytes_resumed, GPUVIRT_A_VGPU_MIGRATION_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_MIGRATION_LAST_STOP_COPY_NS,
			      st.last_stop_copy_ns,
			      GPUVIRT_A_VGPU_MIGRATION_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * The parts of each vGPU a vgpu-get request asks its replies to leave out;
 * the policy has refused the bits that name no part.
 */
static u32 gpuvirt_nl_vgpu_omit(const struct nlattr *attr)
{
	return attr ? nla_get_u32(attr) : 0;
}

/*
 * Put a vGPU, less the parts m->omit names; the GPU's sched lock held
 * keeps it in its slot. A dump runs this for every vGPU of the host, so
 * the UUID, always 36 characters (an mdev's name is its UUID, a VF
 * vGPU's is printed as one), goes with its length known rather than
 * measured by nla_put_string().
 */
static int gpuvirt_nl_vgpu_fill_locked(struct sk_buff *skb,
				       struct gpuvirt_vgpu *vgpu,
				       const struct gpuvirt_nl_msg *m)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	const struct gpuvirt_sp_slot *slot = &s->sp.slot[vgpu->slot];
	void *hdr;

	lockdep_assert_held(&s->lock);
	hdr = gpuvirt_nl_put_hdr(skb, m);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put(skb, GPUVIRT_A_VGPU_UUID, sizeof(vgpu->uuid), vgpu->uuid) ||
	    (vgpu->vf &&
	     nla_put_string(skb, GPUVIRT_A_VGPU_VF, gpuvirt_vf_name(vgpu))) ||
	    nla_put_u32(skb, GPUVIRT_A_VGPU_GPU_ID, vgpu->mp->gpu->id) ||
	    nla_put_string(skb, GPUVIRT_A_VGPU_TYPE, vgpu->type->profile->name) ||
	    nla_put_u32(skb, GPUVIRT_A_VGPU_WEIGHT, slot->weight) ||
	    nla_put_u32(skb, GPUVIRT_A_VGPU_MIN_PCT, slot->min_pct) ||
	    nla_put_u32(skb, GPUVIRT_A_VGPU_MAX_PCT, slot->max_pct) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_VRAM_OFFSET, vgpu->vram_offset,
			      GPUVIRT_A_VGPU_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_VGPU_VRAM_SIZE, vgpu->vram_size,
			      GPUVIRT_A_VGPU_PAD) ||
	    nla_put_u8(skb, GPUVIRT_A_VGPU_OPEN, slot->open) ||
	    nla_put_u32(skb, GPUVIRT_A_VGPU_CTX, vgpu->mp->ctx_base + vgpu->slot) ||
	    gpuvirt_nl_put_gi(skb, GPUVIRT_A_VGPU_GI_ID, vgpu->mp) ||
	    gpuvirt_nl_vgpu_display_put(skb, vgpu) ||
	    (!(m->omit & GPUVIRT_VGPU_OMIT_STATS) &&
	     gpuvirt_nl_vgpu_stats_put(skb, &vgpu->stats)) ||
	    (!(m->omit & GPUVIRT_VGPU_OMIT_MIGRATION) &&
	     gpuvirt_nl_vgpu_migration_put(skb, &vgpu->mig))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* Put a vGPU that the caller keeps alive, taking its sched lock. */
static int gpuvirt_nl_vgpu_fill(struct sk_buff *skb, void *obj,
				const struct gpuvirt_nl_msg *m)
{
	struct gpuvirt_vgpu *vgpu = obj;
	int err;

	spin_lock(&vgpu->mp->sched.lock);
	err = gpuvirt_nl_vgpu_fill_locked(skb, vgpu, m);
	spin_unlock(&vgpu->mp->sched.lock);
	return err;
}

/*
 * The vGPU of @uuid among @gpu's, or NULL; with @get, with a reference to
 * its VFIO device, which keeps it and its policy slot until put_device().
 *
 * Context: registry lock or the GPU's lock held, so that its parents stay.
 */
static struct gpuvirt_vgpu *gpuvirt_nl_vgpu_find(struct gpuvirt_gpu *gpu,
						 const char *uuid, bool get)
{
	struct gpuvirt_vgpu *vgpu = NULL;
	struct gpuvirt_mdev_parent *mp;
	unsigned int m;

	for (m = 0; m < GPUVIRT_GPU_MPS && !vgpu; m++) {
		mp = gpuvirt_gpu_mp(gpu, m);
		if (!mp)
			continue;
		spin_lock(&mp->sched.lock);
		vgpu = gpuvirt_sched_find_locked(&mp->sched, uuid);
		if (vgpu && get)
			get_device(&vgpu->vdev.device);
		spin_unlock(&mp->sched.lock);
	}
	return vgpu;
}

/*
 * The vGPU a request names by UUID, or an error with extack. On success
 * its GPU is in *@gpup, referenced and locked, so that no parent of the
 * GPU goes away (a GI's is destroyed under the GPU's lock), and the vGPU
 * holds a reference; gpuvirt_nl_vgpu_put() gives all three back.
 */
static struct gpuvirt_vgpu *gpuvirt_nl_vgpu_lookup(struct genl_info *info,
						   struct gpuvirt_gpu **gpup)
{
	struct nlattr *attr = info->attrs[GPUVIRT_A_VGPU_UUID];
	struct gpuvirt_gpu *gpu, *found = NULL;
	struct gpuvirt_vgpu *vgpu = NULL;
	int err;
	u32 id;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_VGPU_UUID)) {
		NL_SET_ERR_MSG(info->extack, "vGPU UUID is required");
		return ERR_PTR(-EINVAL);
	}
	/* the index names the GPU; its slots, looked at locked, decide */
	mutex_lock(&gpuvirt_registry.lock);
	if (!gpuvirt_sched_find_gpu_id(nla_data(attr), &id)) {
		gpu = xa_load(&gpuvirt_registry.gpus, id);
		if (gpu && gpuvirt_nl_vgpu_find(gpu, nla_data(attr), false)) {
			refcount_inc(&gpu->refs);
			found = gpu;
		}
	}
	mutex_unlock(&gpuvirt_registry.lock);
	err = found ? gpuvirt_gpu_lock(found) : -ENODEV;
	if (!err) {
		vgpu = gpuvirt_nl_vgpu_find(found, nla_data(attr), true);
		if (!vgpu)
			gpuvirt_gpu_unlock(found);
	}
	if (!vgpu) {
		if (found)
			gpuvirt_gpu_put(found);
		if (err == -EINTR) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "interrupted while waiting for the GPU");
			return ERR_PTR(err);
		}
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no vGPU with this UUID");
		return ERR_PTR(-ENOENT);
	}
	*gpup = found;
	return vgpu;
}

static void gpuvirt_nl_vgpu_put(struct gpuvirt_vgpu *vgpu,
				struct gpuvirt_gpu *gpu)
{
	/* a last reference releases the vGPU; its parent is still there */
	put_device(&vgpu->vdev.device);
	gpuvirt_gpu_unlock(gpu);
	gpuvirt_gpu_put(gpu);
}

int gpuvirt_nl_vgpu_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_nl_msg m = gpuvirt_nl_reply_msg(info, GPUVIRT_CMD_VGPU_GET);
	struct gpuvirt_vgpu *vgpu;
	struct gpuvirt_gpu *gpu;
	int err;

	vgpu = gpuvirt_nl_vgpu_lookup(info, &gpu);
	if (IS_ERR(vgpu))
		return PTR_ERR(vgpu);
	m.omit = gpuvirt_nl_vgpu_omit(info->attrs[GPUVIRT_A_VGPU_OMIT]);
	err = gpuvirt_nl_reply_msg_obj(info, gpuvirt_nl_vgpu_fill, vgpu, &m);
	gpuvirt_nl_vgpu_put(vgpu, gpu);
	return err;
}

static int gpuvirt_nl_vgpu_dump_mp(struct sk_buff *skb,
				   struct netlink_callback *cb,
				   struct gpuvirt_mdev_parent *mp,
				   struct gpuvirt_nl_dump_ctx *ctx)
{
	struct nlattr *omit = gpuvirt_genl_dump_attrs(cb)[GPUVIRT_A_VGPU_OMIT];
	struct gpuvirt_nl_msg m = gpuvirt_nl_dump_msg(cb, GPUVIRT_CMD_VGPU_GET);
	int err = 0;

	m.omit = gpuvirt_nl_vgpu_omit(omit);
	spin_lock(&mp->sched.lock);
	for (; ctx->item < GPUVIRT_SP_SLOTS; ctx->item++) {
		if (!mp->sched.vgpus[ctx->item])
			continue;
		err = gpuvirt_nl_vgpu_fill_locked(skb, mp->sched.vgpus[ctx->item],
						  &m);
		if (err)
			break;
	}
	spin_unlock(&mp->sched.lock);
	return err;
}

static int gpuvirt_nl_vgpu_dump_gpu(struct sk_buff *skb,
				    struct netlink_callback *cb,
				    struct gpuvirt_gpu *gpu,
				    struct gpuvirt_nl_dump_ctx *ctx)
{
	return gpuvirt_nl_dump_parents(skb, cb, gpu, ctx,
				       gpuvirt_nl_vgpu_dump_mp);
}

int gpuvirt_nl_vgpu_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuvirt_nl_dump(skb, cb, GPUVIRT_A_VGPU_GPU_ID,
			       gpuvirt_nl_vgpu_dump_gpu);
}

int gpuvirt_nl_vgpu_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *min_attr = info->attrs[GPUVIRT_A_VGPU_MIN_PCT];
	struct nlattr *max_attr = info->attrs[GPUVIRT_A_VGPU_MAX_PCT];
	struct gpuvirt_vgpu *vgpu;
	struct gpuvirt_gpu *gpu;
	int err;

	vgpu = gpuvirt_nl_vgpu_lookup(info, &gpu);
	if (IS_ERR(vgpu))
		return PTR_ERR(vgpu);
	err = gpuvirt_sched_vgpu_set(vgpu,
				     gpuvirt_nl_u32_or(info, GPUVIRT_A_VGPU_WEIGHT, U32_MAX),
				     gpuvirt_nl_u32_or(info, GPUVIRT_A_VGPU_MIN_PCT, U32_MAX),
				     gpuvirt_nl_u32_or(info, GPUVIRT_A_VGPU_MAX_PCT, U32_MAX));
	if (err == -ENOSPC)
		NL_SET_ERR_MSG_ATTR(info->extack, min_attr,
				    "the minimums of the GPU's vGPUs would add up past 100%");
	else if (err)
		NL_SET_ERR_MSG_ATTR(info->extack, min_attr ?: max_attr,
				    "min-pct must not be above max-pct");
	/* the policy bounds it to 0 or 1; set only once the rest is accepted */
	else if (info->attrs[GPUVIRT_A_VGPU_FRAME_RATE_LIMITER])
		gpuvirt_display_set_frl(vgpu,
					nla_get_u8(info->attrs[GPUVIRT_A_VGPU_FRAME_RATE_LIMITER]));
	gpuvirt_nl_vgpu_put(vgpu, gpu);
	return err;
}

/**
 * gpuvirt_vgpu_notify() - tell the monitor group about a vGPU event
 * @vgpu: the vGPU, in its policy slot
 * @cmd: GPUVIRT_CMD_VGPU_{ADD,DEL,CHANGE}_NTF
 *
 * Context: may sleep; takes the GPU's sched lock.
 */
void gpuvirt_vgpu_notify(struct gpuvirt_vgpu *vgpu, u8 cmd)
{
	gpuvirt_nl_notify(gpuvirt_nl_vgpu_fill, vgpu, cmd);
}

/* Schedulers */

static int gpuvirt_nl_sched_fill(struct sk_buff *skb, void *obj,
				 const struct gpuvirt_nl_msg *m)
{
	struct gpuvirt_mdev_parent *mp = obj;
	struct gpuvirt_sched *s = &mp->sched;
	unsigned int i, n = 0;
	void *hdr;

	hdr = gpuvirt_nl_put_hdr(skb, m);
	if (!hdr)
		return -EMSGSIZE;
	spin_lock(&s->lock);
	for (i = 0; i < GPUVIRT_SP_SLOTS; i++)
		n += s->sp.slot[i].used;
	if (nla_put_u32(skb, GPUVIRT_A_SCHED_GPU_ID, mp->gpu->id) ||
	    gpuvirt_nl_put_gi(skb, GPUVIRT_A_SCHED_GI_ID, mp) ||
	    nla_put_u32(skb, GPUVIRT_A_SCHED_POLICY, s->sp.policy) ||
	    nla_put_u32(skb, GPUVIRT_A_SCHED_TIMESLICE_US,
			div_u64(s->sp.slice_ns, NSEC_PER_USEC)) ||
	    nla_put_u32(skb, GPUVIRT_A_SCHED_TIMESLICE_EFFECTIVE_US,
			div_u64(gpuvirt_sp_slice(&s->sp), NSEC_PER_USEC)) ||
	    nla_put_u32(skb, GPUVIRT_A_SCHED_VGPUS, n) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_SCHED_BUSY_NS, s->busy_ns,
			      GPUVIRT_A_SCHED_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_SCHED_IDLE_NS, s->idle_ns,
			      GPUVIRT_A_SCHED_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_SCHED_SWITCH_NS, s->switch_ns,
			      GPUVIRT_A_SCHED_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_SCHED_SWITCHES, s->switches,
			      GPUVIRT_A_SCHED_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_SCHED_LAG_NS, s->behind_ns,
			      GPUVIRT_A_SCHED_PAD)) {
		spin_unlock(&s->lock);
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	spin_unlock(&s->lock);
	genlmsg_end(skb, hdr);
	return 0;
}

/* A GPU's schedulers: its own (0), even in MIG mode, then its GIs'. */
static struct gpuvirt_mdev_parent *gpuvirt_nl_sched_mp(struct gpuvirt_gpu *gpu,
						       unsigned int i)
{
	return i ? gpuvirt_gpu_mp(gpu, i) : gpu->mdev;
}

/* The scheduler a sched request names: its GPU's, or a GI's. */
static struct gpuvirt_mdev_parent *gpuvirt_nl_sched_lookup(struct genl_info *info)
{
	struct nlattr *gi_attr = info->attrs[GPUVIRT_A_SCHED_GI_ID];
	struct gpuvirt_gpu *gpu = info->user_ptr[0];
	struct gpuvirt_mdev_parent *mp;
	int gi = gpuvirt_nl_gi_id(gi_attr);

	if (gi < 0)
		return gpu->mdev;
	mp = gi < GPUVIRT_MIG_GIS_MAX ? gpuvirt_gpu_mp(gpu, gi + 1) : NULL;
	if (!mp)
		NL_SET_ERR_MSG_ATTR(info->extack, gi_attr,
				    "the GPU has no GI with this id");
	return mp;
}

int gpuvirt_nl_sched_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_mdev_parent *mp = gpuvirt_nl_sched_lookup(info);

	if (!mp)
		return -ENOENT;
	return gpuvirt_nl_reply(info, gpuvirt_nl_sched_fill, mp,
				GPUVIRT_CMD_SCHED_GET);
}

static int gpuvirt_nl_sched_dump_gpu(struct sk_buff *skb,
				     struct netlink_callback *cb,
				     struct gpuvirt_gpu *gpu,
				     struct gpuvirt_nl_dump_ctx *ctx)
{
	struct gpuvirt_nl_msg m = gpuvirt_nl_dump_msg(cb, GPUVIRT_CMD_SCHED_GET);
	struct gpuvirt_mdev_parent *mp;
	int err;

	for (; ctx->mp < GPUVIRT_GPU_MPS; ctx->mp++) {
		mp = gpuvirt_nl_sched_mp(gpu, ctx->mp);
		if (!mp)
			continue;
		err = gpuvirt_nl_sched_fill(skb, mp, &m);
		if (err)
			return err;
	}
	return 0;
}

int gpuvirt_nl_sched_get_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	return gpuvirt_nl_dump(skb, cb, 0, gpuvirt_nl_sched_dump_gpu);
}

int gpuvirt_nl_sched_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *slice = info->attrs[GPUVIRT_A_SCHED_TIMESLICE_US];
	struct nlattr *policy = info->attrs[GPUVIRT_A_SCHED_POLICY];
	struct gpuvirt_mdev_parent *mp;
	int err;

	if (!slice && !policy) {
		NL_SET_ERR_MSG(info->extack, "nothing to set: give policy or timeslice-us");
		return -EINVAL;
	}
	if (slice && nla_get_u32(slice) &&
	    nla_get_u32(slice) * NSEC_PER_USEC < GPUVIRT_SP_SLICE_MIN_NS) {
		NL_SET_ERR_MSG_ATTR(info->extack, slice,
				    "time slice must be 0 (default) or 100 to 100000 us");
		return -ERANGE;
	}
	mp = gpuvirt_nl_sched_lookup(info);
	if (!mp)
		return -ENOENT;
	err = gpuvirt_sched_set(mp, policy ? nla_get_u32(policy) : U32_MAX,
				slice ? (u64)nla_get_u32(slice) * NSEC_PER_USEC :
					U64_MAX);
	if (err)
		NL_SET_ERR_MSG(info->extack, "the scheduler refused the setting");
	return err;
}

/**
 * gpuvirt_sched_notify() - tell the monitor group a scheduler changed
 * @mp: the parent whose scheduler it is
 */
void gpuvirt_sched_notify(struct gpuvirt_mdev_parent *mp)
{
	gpuvirt_nl_notify(gpuvirt_nl_sched_fill, mp,
			  GPUVIRT_CMD_SCHED_CHANGE_NTF);
}

/* MIG mode and GPU instances */

static int gpuvirt_nl_gi_fill(struct sk_buff *skb, void *obj,
			      const struct gpuvirt_nl_msg *m)
{
	struct gpuvirt_gi *gi = obj;
	const struct gpuvirt_mig_profile *p =
		&gi->gpu->mig->table.profile[gi->profile];
	struct gpuvirt_sched *s = &gi->mp->sched;
	unsigned int vgpus = gpuvirt_gi_vgpus(gi);
	u64 busy_ns, idle_ns;
	void *hdr;

	spin_lock(&s->lock);
	busy_ns = s->busy_ns;
	idle_ns = s->idle_ns;
	spin_unlock(&s->lock);

	hdr = gpuvirt_nl_put_hdr(skb, m);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, GPUVIRT_A_GI_GPU_ID, gi->gpu->id) ||
	    nla_put_u32(skb, GPUVIRT_A_GI_ID, gi->id) ||
	    nla_put_string(skb, GPUVIRT_A_GI_PROFILE, p->name) ||
	    nla_put_u32(skb, GPUVIRT_A_GI_START, gi->start) ||
	    nla_put_u32(skb, GPUVIRT_A_GI_SLOTS, p->slots) ||
	    nla_put_u32(skb, GPUVIRT_A_GI_SLICES, p->slices) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_GI_ENGINES, gi->engines,
			      GPUVIRT_A_GI_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_GI_VRAM_OFFSET, gi->vram_base,
			      GPUVIRT_A_GI_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_GI_VRAM_SIZE, gi->vram_size,
			      GPUVIRT_A_GI_PAD) ||
	    nla_put_string(skb, GPUVIRT_A_GI_VGPU_TYPE, p->vgpu_name) ||
	    nla_put_u32(skb, GPUVIRT_A_GI_VGPUS, vgpus) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_GI_BUSY_NS, busy_ns,
			      GPUVIRT_A_GI_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_GI_IDLE_NS, idle_ns,
			      GPUVIRT_A_GI_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* The GI a request names by id, on the GPU of the request. */
static struct gpuvirt_gi *gpuvirt_nl_gi_lookup(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[GPUVIRT_A_GI_ID];
	struct gpuvirt_gpu *gpu = info->user_ptr[0];
	u32 id;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_GI_ID)) {
		NL_SET_ERR_MSG(info->extack, "GI id is required");
		return ERR_PTR(-EINVAL);
	}
	id = nla_get_u32(attr);
	if (!gpu->mig) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "the GPU is not in MIG mode: it has no GIs");
		return ERR_PTR(-ENOENT);
	}
	if (id >= GPUVIRT_MIG_GIS_MAX || !gpu->mig->gi[id]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "the GPU has no GI with this id");
		return ERR_PTR(-ENOENT);
	}
	return gpu->mig->gi[id];
}

int gpuvirt_nl_gi_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_gi *gi = gpuvirt_nl_gi_lookup(info);

	if (IS_ERR(gi))
		return PTR_ERR(gi);
	return gpuvirt_nl_reply(info, gpuvirt_nl_gi_fill, gi, GPUVIRT_CMD_GI_GET);
}

static int gpuvirt_nl_gi_dump_gpu(struct sk_buff *skb,
				  struct netlink_callback *cb,
				  struct gpuvirt_gpu *gpu,
				  struct gpuvirt_nl_dump_ctx *ctx)
{
	struct gpuvirt_nl_msg m = gpuvirt_nl_dump_msg(cb, GPUVIRT_CMD_GI_GET);
	int err;

	if (!gpu->mig)
		return 0;
	for (; ctx->item < GPUVIRT_MIG_GIS_MAX; ctx->item++) {
		if (!gpu->mig->gi[ctx->item])
			continue;
		err = gpuvirt_nl_gi_fill(skb, gpu->mig->gi[ctx->item], &m);
		if (err)
			return err;
	}
	return 0;
}

int gpuvirt_nl_gi_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuvirt_nl_dump(skb, cb, GPUVIRT_A_GI_GPU_ID,
			       gpuvirt_nl_gi_dump_gpu);
}

int gpuvirt_nl_gi_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *start = info->attrs[GPUVIRT_A_GI_START];
	struct nlattr *name = info->attrs[GPUVIRT_A_GI_PROFILE];
	struct gpuvirt_gpu *gpu = info->user_ptr[0];
	struct gpuvirt_mig_why why;
	int profile, id;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_GI_PROFILE)) {
		NL_SET_ERR_MSG(info->extack, "GI profile is required");
		return -EINVAL;
	}
	if (!gpu->mig) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[GPUVIRT_A_GI_GPU_ID],
				    "the GPU is not in MIG mode");
		return -EINVAL;
	}
	profile = gpuvirt_mig_profile_find(&gpu->mig->table, nla_data(name));
	if (profile < 0) {
		NL_SET_ERR_MSG_ATTR(info->extack, name,
				    "the GPU has no GI profile of this name");
		return -EINVAL;
	}
	id = gpuvirt_gi_create(gpu, profile,
			       start ? nla_get_u32(start) : GPUVIRT_MIG_START_ANY,
			       &why);
	if (id < 0) {
		gpuvirt_nl_why(info->extack, &why, "the GI could not be created");
		NL_SET_BAD_ATTR(info->extack, start ?: name);
		return id;
	}
	/* the GI exists: a reply that does not fit is not a failure */
	gpuvirt_nl_reply(info, gpuvirt_nl_gi_fill, gpu->mig->gi[id],
			 GPUVIRT_CMD_GI_NEW);
	return 0;
}

int gpuvirt_nl_gi_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_mig_why why;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_GI_ID)) {
		NL_SET_ERR_MSG(info->extack, "GI id is required");
		return -EINVAL;
	}
	err = gpuvirt_gi_destroy(info->user_ptr[0],
				 nla_get_u32(info->attrs[GPUVIRT_A_GI_ID]), &why);
	if (err) {
		gpuvirt_nl_why(info->extack, &why,
			       err == -EBUSY ? "the GI has a vGPU" :
			       err == -ENOENT ? "the GPU has no GI with this id" :
			       "the GPU is not in MIG mode");
		NL_SET_BAD_ATTR(info->extack, info->attrs[GPUVIRT_A_GI_ID]);
	}
	return err;
}

/**
 * gpuvirt_gi_notify() - tell the monitor group about a GI event
 * @gi: the GI
 * @cmd: GPUVIRT_CMD_GI_ADD_NTF or GPUVIRT_CMD_GI_DEL_NTF
 *
 * Context: registry lock held.
 */
void gpuvirt_gi_notify(struct gpuvirt_gi *gi, u8 cmd)
{
	gpuvirt_nl_notify(gpuvirt_nl_gi_fill, gi, cmd);
}

#ifndef GPUVIRT_HAVE_GENL_SPLIT_OPS
/* The split op of @cmd that does @mode (GENL_CMD_CAP_DO or _DUMP). */
static const struct genl_split_ops *gpuvirt_nl_split_op(u8 cmd, u8 mode)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(gpuvirt_nl_ops); i++)
		if (gpuvirt_nl_ops[i].cmd == cmd &&
		    (gpuvirt_nl_ops[i].flags & mode))
			return &gpuvirt_nl_ops[i];
	return NULL;
}

static int gpuvirt_nl_legacy_pre_doit(const struct genl_ops *ops,
				      struct sk_buff *skb,
				      struct genl_info *info)
{
	const struct genl_split_ops *op = gpuvirt_nl_split_op(ops->cmd,
							      GENL_CMD_CAP_DO);

	return op && op->pre_doit ? op->pre_doit(op, skb, info) : 0;
}

static void gpuvirt_nl_legacy_post_doit(const struct genl_ops *ops,
					struct sk_buff *skb,
					struct genl_info *info)
{
	const struct genl_split_ops *op = gpuvirt_nl_split_op(ops->cmd,
							      GENL_CMD_CAP_DO);

	if (op && op->post_doit)
		op->post_doit(op, skb, info);
}

/*
 * One genl_ops per command from the split table: the do and the dump of a
 * command share the do's policy (the generator makes them the same).
 */
static unsigned int gpuvirt_nl_legacy_build(void)
{
	const u8 perm = GENL_ADMIN_PERM | GENL_UNS_ADMIN_PERM;
	const struct genl_split_ops *s;
	struct genl_ops *o;
	unsigned int i, j, n = 0;

	for (i = 0; i < ARRAY_SIZE(gpuvirt_nl_ops); i++) {
		s = &gpuvirt_nl_ops[i];
		for (j = 0; j < n && gpuvirt_nl_legacy_ops[j].cmd != s->cmd; j++)
			;
		o = &gpuvirt_nl_legacy_ops[j];
		if (j == n) {
			n++;
			o->cmd = s->cmd;
			o->policy = s->policy;
			o->maxattr = s->maxattr;
		}
		o->flags |= s->flags & perm;
		o->validate |= s->validate;
		if (s->flags & GENL_CMD_CAP_DO) {
			o->doit = s->doit;
			o->policy = s->policy;
			o->maxattr = s->maxattr;
		} else {
			o->start = s->start;
			o->dumpit = s->dumpit;
			o->done = s->done;
		}
	}
	return n;
}
#endif

int gpuvirt_nl_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(gpuvirt_nl_mcgrps); i++) {
		gpuvirt_nl_mcgrps_admin[i] = gpuvirt_nl_mcgrps[i];
		gpuvirt_nl_mcgrps_admin[i].flags |= GPUVIRT_GENL_MCAST_ADMIN;
	}
	gpuvirt_nl_family.mcgrps = gpuvirt_nl_mcgrps_admin;
#ifndef GPUVIRT_HAVE_GENL_SPLIT_OPS
	gpuvirt_nl_family.n_ops = gpuvirt_nl_legacy_build();
#endif
	return genl_register_family(&gpuvirt_nl_family);
}

void gpuvirt_nl_exit(void)
{
	genl_unregister_family(&gpuvirt_nl_family);
}

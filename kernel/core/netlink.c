// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gpuvirt generic netlink family. The policies, op table and uapi come
 * from Documentation/netlink/specs/gpuvirt.yaml through the kernel's YNL
 * generator (netlink-gen.[ch]); this file holds the handlers.
 *
 * Handlers follow <fam>_nl_<obj>_<cmd>_doit/_dumpit, with one
 * <fam>_nl_<obj>_fill per object and <fam>_<obj>_notify for events.
 */
#include <net/genetlink.h>

#include "gpuvirt.h"
#include "vgpu.h"

/*
 * For a genetlink-legacy family the generator leaves the family struct to
 * us but emits the multicast group table as a static array; compiling the
 * generated tables as part of this file lets the family use that table
 * straight from the spec.
 */
#include "netlink-gen.c"

/*
 * GPUs are host-wide objects, so the family only exists in the initial
 * network namespace. Every command validates strictly (resv_start_op 0).
 */
static struct genl_family gpuvirt_nl_family __ro_after_init = {
	.name		= GPUVIRT_FAMILY_NAME,
	.version	= GPUVIRT_FAMILY_VERSION,
	.netnsok	= false,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= gpuvirt_nl_ops,
	.n_ops		= ARRAY_SIZE(gpuvirt_nl_ops),
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

static int gpuvirt_nl_gpu_fill(struct sk_buff *skb, struct gpuvirt_gpu *gpu,
			       u32 portid, u32 seq, int flags, u8 cmd)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &gpuvirt_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;

	if (nla_put_u32(skb, GPUVIRT_A_GPU_ID, gpu->id) ||
	    nla_put_string(skb, GPUVIRT_A_GPU_NAME, gpu->name) ||
	    nla_put_string(skb, GPUVIRT_A_GPU_MODEL, gpu->model_name) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_GPU_VRAM_SIZE, gpu->vram_size,
			      GPUVIRT_A_GPU_PAD) ||
	    nla_put_u32(skb, GPUVIRT_A_GPU_ENGINES, gpu->engines) ||
	    nla_put_u32(skb, GPUVIRT_A_GPU_MODE, gpu->mode) ||
	    nla_put_string(skb, GPUVIRT_A_GPU_BACKEND, gpu->ops->name))
		goto err_cancel_msg;

	genlmsg_end(skb, hdr);
	return 0;

err_cancel_msg:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

int gpuvirt_nl_gpu_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_gpu *gpu;
	struct sk_buff *msg;
	u32 id;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_GPU_ID)) {
		NL_SET_ERR_MSG(info->extack, "GPU id is required");
		return -EINVAL;
	}
	id = nla_get_u32(info->attrs[GPUVIRT_A_GPU_ID]);

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	mutex_lock(&gpuvirt_registry.lock);
	gpu = gpuvirt_gpu_find(id);
	if (!gpu) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[GPUVIRT_A_GPU_ID],
				    "no GPU with this id");
		err = -ENOENT;
		goto err_unlock;
	}
	err = gpuvirt_nl_gpu_fill(msg, gpu, info->snd_portid, info->snd_seq,
				  0, GPUVIRT_CMD_GPU_GET);
	if (err) {
		NL_SET_ERR_MSG(info->extack, "GPU does not fit in a message");
		goto err_unlock;
	}
	mutex_unlock(&gpuvirt_registry.lock);

	return genlmsg_reply(msg, info);

err_unlock:
	mutex_unlock(&gpuvirt_registry.lock);
	nlmsg_free(msg);
	return err;
}

/*
 * cb->args[0] holds the id to resume the dump from, cb->args[1] is set
 * once every GPU has been sent.
 */
int gpuvirt_nl_gpu_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct gpuvirt_gpu *gpu;
	unsigned long id;
	int err = 0;

	if (cb->args[1])
		return 0;
	err = gpuvirt_nl_check_req(cb->nlh, cb->extack);
	if (err)
		return err;

	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each_start(&gpuvirt_registry.gpus, id, gpu, cb->args[0]) {
		err = gpuvirt_nl_gpu_fill(skb, gpu,
					  NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, NLM_F_MULTI,
					  GPUVIRT_CMD_GPU_GET);
		if (err)
			break;
	}
	mutex_unlock(&gpuvirt_registry.lock);

	if (!err) {
		cb->args[1] = 1;
	} else if (err == -EMSGSIZE && skb->len) {
		/* A full skb ends this round; resume at the GPU that missed it. */
		cb->args[0] = id;
		err = 0;
	}
	return err ?: skb->len;
}

/**
 * gpuvirt_gpu_notify() - tell the monitor group about a GPU event
 * @gpu: the GPU
 * @cmd: GPUVIRT_CMD_GPU_ADD_NTF or GPUVIRT_CMD_GPU_DEL_NTF
 *
 * Context: registry lock held.
 */
void gpuvirt_gpu_notify(struct gpuvirt_gpu *gpu, u8 cmd)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&gpuvirt_nl_family, &init_net,
				GPUVIRT_NLGRP_MONITOR))
		return;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (gpuvirt_nl_gpu_fill(msg, gpu, 0, 0, 0, cmd)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&gpuvirt_nl_family, msg, 0, GPUVIRT_NLGRP_MONITOR,
			  GFP_KERNEL);
}

/* The GPU named by a request's @attr, or an error with extack. */
static struct gpuvirt_gpu *gpuvirt_nl_gpu_lookup(struct genl_info *info,
						 unsigned int attr)
{
	struct gpuvirt_gpu *gpu;

	lockdep_assert_held(&gpuvirt_registry.lock);
	if (GENL_REQ_ATTR_CHECK(info, attr)) {
		NL_SET_ERR_MSG(info->extack, "GPU id is required");
		return ERR_PTR(-EINVAL);
	}
	gpu = gpuvirt_gpu_find(nla_get_u32(info->attrs[attr]));
	if (!gpu || !gpu->mdev) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr],
				    "no GPU with this id");
		return ERR_PTR(-ENOENT);
	}
	return gpu;
}

/*
 * Dumps over GPUs and an index inside each: cb->args[0] is the GPU id to
 * resume at, cb->args[1] the index within it, cb->args[2] set when done.
 * cb->seq is the registry generation, so that a dump that spans a change
 * is flagged NLM_F_DUMP_INTR.
 */
struct gpuvirt_nl_dump {
	unsigned long gpu_id;
	unsigned int idx;
};

/* 0 to go on with the dump, 1 when it is over, or a request error. */
static int gpuvirt_nl_dump_begin(struct netlink_callback *cb,
				 struct gpuvirt_nl_dump *d)
{
	int err;

	if (cb->args[2])
		return 1;
	err = gpuvirt_nl_check_req(cb->nlh, cb->extack);
	if (err)
		return err;
	d->gpu_id = cb->args[0];
	d->idx = cb->args[1];
	cb->seq = atomic_read(&gpuvirt_registry.gen);
	return 0;
}

static int gpuvirt_nl_dump_end(struct sk_buff *skb, struct netlink_callback *cb,
			       const struct gpuvirt_nl_dump *d, int err)
{
	if (!err) {
		cb->args[2] = 1;
	} else if (err == -EMSGSIZE && skb->len) {
		cb->args[0] = d->gpu_id;
		cb->args[1] = d->idx;
		err = 0;
	}
	return err ?: skb->len;
}

static void *gpuvirt_nl_put_hdr(struct sk_buff *skb, u32 portid, u32 seq,
				int flags, u8 cmd, struct netlink_callback *cb)
{
	void *hdr = genlmsg_put(skb, portid, seq, &gpuvirt_nl_family, flags,
				cmd);

	if (hdr && cb)
		genl_dump_check_consistent(cb, hdr);
	return hdr;
}

/* Types */

static int gpuvirt_nl_type_fill(struct sk_buff *skb, struct gpuvirt_type *type,
				u32 portid, u32 seq, int flags,
				struct netlink_callback *cb)
{
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

	hdr = gpuvirt_nl_put_hdr(skb, portid, seq, flags, GPUVIRT_CMD_TYPE_GET,
				 cb);
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
	    nla_put_string(skb, GPUVIRT_A_TYPE_DESCRIPTION, p->description)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

int gpuvirt_nl_type_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_type *type = NULL;
	struct gpuvirt_gpu *gpu;
	struct sk_buff *msg;
	unsigned int i;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_TYPE_NAME)) {
		NL_SET_ERR_MSG(info->extack, "type name is required");
		return -EINVAL;
	}
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	mutex_lock(&gpuvirt_registry.lock);
	gpu = gpuvirt_nl_gpu_lookup(info, GPUVIRT_A_TYPE_GPU_ID);
	if (IS_ERR(gpu)) {
		err = PTR_ERR(gpu);
		goto err_unlock;
	}
	for (i = 0; i < gpu->mdev->nr_types; i++)
		if (!nla_strcmp(info->attrs[GPUVIRT_A_TYPE_NAME],
				gpu->mdev->profiles[i].name))
			type = &gpu->mdev->types[i];
	if (!type) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[GPUVIRT_A_TYPE_NAME],
				    "the GPU has no type of this name");
		err = -ENOENT;
		goto err_unlock;
	}
	err = gpuvirt_nl_type_fill(msg, type, info->snd_portid, info->snd_seq,
				   0, NULL);
	mutex_unlock(&gpuvirt_registry.lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);

err_unlock:
	mutex_unlock(&gpuvirt_registry.lock);
	nlmsg_free(msg);
	return err;
}

int gpuvirt_nl_type_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr *filter = gpuvirt_genl_dump_attrs(cb)[GPUVIRT_A_TYPE_GPU_ID];
	struct gpuvirt_nl_dump d;
	struct gpuvirt_gpu *gpu;
	int err = 0;

	err = gpuvirt_nl_dump_begin(cb, &d);
	if (err)
		return err < 0 ? err : 0;
	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each_start(&gpuvirt_registry.gpus, d.gpu_id, gpu, d.gpu_id) {
		if (!gpu->mdev || (filter && nla_get_u32(filter) != gpu->id))
			continue;
		for (; d.idx < gpu->mdev->nr_types; d.idx++) {
			err = gpuvirt_nl_type_fill(skb, &gpu->mdev->types[d.idx],
						   NETLINK_CB(cb->skb).portid,
						   cb->nlh->nlmsg_seq,
						   NLM_F_MULTI, cb);
			if (err)
				break;
		}
		if (err)
			break;
		d.idx = 0;
	}
	mutex_unlock(&gpuvirt_registry.lock);
	return gpuvirt_nl_dump_end(skb, cb, &d, err);
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

/* Called with the GPU's sched lock held: the vGPU stays in its slot. */
static int gpuvirt_nl_vgpu_fill(struct sk_buff *skb, struct gpuvirt_vgpu *vgpu,
				u32 portid, u32 seq, int flags, u8 cmd,
				struct netlink_callback *cb)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	const struct gpuvirt_sp_slot *slot = &s->sp.slot[vgpu->slot];
	void *hdr;

	lockdep_assert_held(&s->lock);
	hdr = gpuvirt_nl_put_hdr(skb, portid, seq, flags, cmd, cb);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, GPUVIRT_A_VGPU_UUID, dev_name(vgpu->vdev.dev)) ||
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
	    nla_put_u32(skb, GPUVIRT_A_VGPU_CTX, vgpu->slot) ||
	    gpuvirt_nl_vgpu_stats_put(skb, &vgpu->stats)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * Run @fn on the vGPU named by GPUVIRT_A_VGPU_UUID, under the registry
 * lock and the vGPU's sched lock, which keep it alive; @fn must not sleep.
 * Returns what @fn returned, or an error with extack when there is no
 * such vGPU.
 */
static int gpuvirt_nl_vgpu_apply(struct genl_info *info,
				 int (*fn)(struct gpuvirt_vgpu *vgpu,
					   struct genl_info *info, void *arg),
				 void *arg)
{
	struct nlattr *attr = info->attrs[GPUVIRT_A_VGPU_UUID];
	struct gpuvirt_vgpu *vgpu = NULL;
	struct gpuvirt_gpu *gpu;
	unsigned long id;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_VGPU_UUID)) {
		NL_SET_ERR_MSG(info->extack, "vGPU UUID is required");
		return -EINVAL;
	}
	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each(&gpuvirt_registry.gpus, id, gpu) {
		if (!gpu->mdev)
			continue;
		spin_lock(&gpu->mdev->sched.lock);
		vgpu = gpuvirt_sched_find_locked(&gpu->mdev->sched,
						 nla_data(attr));
		if (vgpu)
			err = fn(vgpu, info, arg);
		spin_unlock(&gpu->mdev->sched.lock);
		if (vgpu)
			break;
	}
	mutex_unlock(&gpuvirt_registry.lock);
	if (!vgpu) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no vGPU with this UUID");
		return -ENOENT;
	}
	return err;
}

static int gpuvirt_nl_vgpu_get_one(struct gpuvirt_vgpu *vgpu,
				   struct genl_info *info, void *msg)
{
	return gpuvirt_nl_vgpu_fill(msg, vgpu, info->snd_portid, info->snd_seq,
				    0, GPUVIRT_CMD_VGPU_GET, NULL);
}

int gpuvirt_nl_vgpu_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	err = gpuvirt_nl_vgpu_apply(info, gpuvirt_nl_vgpu_get_one, msg);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

int gpuvirt_nl_vgpu_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr *filter = gpuvirt_genl_dump_attrs(cb)[GPUVIRT_A_VGPU_GPU_ID];
	struct gpuvirt_nl_dump d;
	struct gpuvirt_sched *s;
	struct gpuvirt_gpu *gpu;
	int err = 0;

	err = gpuvirt_nl_dump_begin(cb, &d);
	if (err)
		return err < 0 ? err : 0;
	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each_start(&gpuvirt_registry.gpus, d.gpu_id, gpu, d.gpu_id) {
		if (!gpu->mdev || (filter && nla_get_u32(filter) != gpu->id))
			continue;
		s = &gpu->mdev->sched;
		spin_lock(&s->lock);
		for (; d.idx < GPUVIRT_SP_SLOTS; d.idx++) {
			if (!s->vgpus[d.idx])
				continue;
			err = gpuvirt_nl_vgpu_fill(skb, s->vgpus[d.idx],
						   NETLINK_CB(cb->skb).portid,
						   cb->nlh->nlmsg_seq,
						   NLM_F_MULTI,
						   GPUVIRT_CMD_VGPU_GET, cb);
			if (err)
				break;
		}
		spin_unlock(&s->lock);
		if (err)
			break;
		d.idx = 0;
	}
	mutex_unlock(&gpuvirt_registry.lock);
	return gpuvirt_nl_dump_end(skb, cb, &d, err);
}

static u32 gpuvirt_nl_u32_or(struct genl_info *info, unsigned int attr,
			     u32 dflt)
{
	return info->attrs[attr] ? nla_get_u32(info->attrs[attr]) : dflt;
}

/* vgpu-set on one vGPU; the notification is built under the same lock. */
static int gpuvirt_nl_vgpu_set_one(struct gpuvirt_vgpu *vgpu,
				   struct genl_info *info, void *ntf)
{
	u32 weight, min_pct, max_pct;
	int err;

	weight = gpuvirt_nl_u32_or(info, GPUVIRT_A_VGPU_WEIGHT, U32_MAX);
	min_pct = gpuvirt_nl_u32_or(info, GPUVIRT_A_VGPU_MIN_PCT, U32_MAX);
	max_pct = gpuvirt_nl_u32_or(info, GPUVIRT_A_VGPU_MAX_PCT, U32_MAX);
	err = gpuvirt_sched_vgpu_set_locked(vgpu, weight, min_pct, max_pct);
	if (err == -ENOSPC) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[GPUVIRT_A_VGPU_MIN_PCT],
				    "the minimums of the GPU's vGPUs would add up past 100%");
		return err;
	}
	if (err) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[GPUVIRT_A_VGPU_MIN_PCT] ?:
				    info->attrs[GPUVIRT_A_VGPU_MAX_PCT],
				    "min-pct must not be above max-pct");
		return err;
	}
	/*
	 * A notification that does not fit leaves ntf empty and is dropped;
	 * the change stands.
	 */
	gpuvirt_nl_vgpu_fill(ntf, vgpu, 0, 0, 0, GPUVIRT_CMD_VGPU_CHANGE_NTF,
			     NULL);
	return 0;
}

int gpuvirt_nl_vgpu_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *ntf;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;

	ntf = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!ntf)
		return -ENOMEM;
	err = gpuvirt_nl_vgpu_apply(info, gpuvirt_nl_vgpu_set_one, ntf);
	if (err || !ntf->len) {
		nlmsg_free(ntf);
		return err;
	}
	genlmsg_multicast(&gpuvirt_nl_family, ntf, 0, GPUVIRT_NLGRP_MONITOR,
			  GFP_KERNEL);
	return 0;
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
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	struct sk_buff *msg;
	int err;

	if (!genl_has_listeners(&gpuvirt_nl_family, &init_net,
				GPUVIRT_NLGRP_MONITOR))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	spin_lock(&s->lock);
	err = gpuvirt_nl_vgpu_fill(msg, vgpu, 0, 0, 0, cmd, NULL);
	spin_unlock(&s->lock);
	if (err) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&gpuvirt_nl_family, msg, 0, GPUVIRT_NLGRP_MONITOR,
			  GFP_KERNEL);
}

/* Schedulers */

static int gpuvirt_nl_sched_fill(struct sk_buff *skb,
				 struct gpuvirt_mdev_parent *mp, u32 portid,
				 u32 seq, int flags, u8 cmd,
				 struct netlink_callback *cb)
{
	struct gpuvirt_sched *s = &mp->sched;
	unsigned int i, n = 0;
	int err = -EMSGSIZE;
	void *hdr;

	hdr = gpuvirt_nl_put_hdr(skb, portid, seq, flags, cmd, cb);
	if (!hdr)
		return -EMSGSIZE;
	spin_lock(&s->lock);
	for (i = 0; i < GPUVIRT_SP_SLOTS; i++)
		n += s->sp.slot[i].used;
	if (nla_put_u32(skb, GPUVIRT_A_SCHED_GPU_ID, mp->gpu->id) ||
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
			      GPUVIRT_A_SCHED_PAD))
		goto err_cancel_msg;
	spin_unlock(&s->lock);
	genlmsg_end(skb, hdr);
	return 0;

err_cancel_msg:
	spin_unlock(&s->lock);
	genlmsg_cancel(skb, hdr);
	return err;
}

int gpuvirt_nl_sched_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_gpu *gpu;
	struct sk_buff *msg;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&gpuvirt_registry.lock);
	gpu = gpuvirt_nl_gpu_lookup(info, GPUVIRT_A_SCHED_GPU_ID);
	err = IS_ERR(gpu) ? PTR_ERR(gpu) :
	      gpuvirt_nl_sched_fill(msg, gpu->mdev, info->snd_portid,
				    info->snd_seq, 0, GPUVIRT_CMD_SCHED_GET,
				    NULL);
	mutex_unlock(&gpuvirt_registry.lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

int gpuvirt_nl_sched_get_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	struct gpuvirt_nl_dump d;
	struct gpuvirt_gpu *gpu;
	int err = 0;

	err = gpuvirt_nl_dump_begin(cb, &d);
	if (err)
		return err < 0 ? err : 0;
	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each_start(&gpuvirt_registry.gpus, d.gpu_id, gpu, d.gpu_id) {
		if (!gpu->mdev)
			continue;
		err = gpuvirt_nl_sched_fill(skb, gpu->mdev,
					    NETLINK_CB(cb->skb).portid,
					    cb->nlh->nlmsg_seq, NLM_F_MULTI,
					    GPUVIRT_CMD_SCHED_GET, cb);
		if (err)
			break;
	}
	mutex_unlock(&gpuvirt_registry.lock);
	return gpuvirt_nl_dump_end(skb, cb, &d, err);
}

int gpuvirt_nl_sched_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *slice = info->attrs[GPUVIRT_A_SCHED_TIMESLICE_US];
	struct nlattr *policy = info->attrs[GPUVIRT_A_SCHED_POLICY];
	struct gpuvirt_gpu *gpu;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;

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
	mutex_lock(&gpuvirt_registry.lock);
	gpu = gpuvirt_nl_gpu_lookup(info, GPUVIRT_A_SCHED_GPU_ID);
	if (IS_ERR(gpu)) {
		err = PTR_ERR(gpu);
		goto out_unlock;
	}
	/* both were range-checked, so neither can be refused now */
	if (slice)
		err = gpuvirt_sched_set_slice(gpu->mdev, (u64)nla_get_u32(slice) *
					      NSEC_PER_USEC);
	if (!err && policy)
		err = gpuvirt_sched_set_policy(gpu->mdev, nla_get_u32(policy));
	if (err)
		NL_SET_ERR_MSG(info->extack, "the scheduler refused the setting");
	else
		gpuvirt_sched_notify(gpu->mdev);
out_unlock:
	mutex_unlock(&gpuvirt_registry.lock);
	return err;
}

/**
 * gpuvirt_sched_notify() - tell the monitor group a scheduler changed
 * @mp: the GPU's mdev state
 */
void gpuvirt_sched_notify(struct gpuvirt_mdev_parent *mp)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&gpuvirt_nl_family, &init_net,
				GPUVIRT_NLGRP_MONITOR))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (gpuvirt_nl_sched_fill(msg, mp, 0, 0, 0, GPUVIRT_CMD_SCHED_CHANGE_NTF,
				  NULL)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&gpuvirt_nl_family, msg, 0, GPUVIRT_NLGRP_MONITOR,
			  GFP_KERNEL);
}

int gpuvirt_nl_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(gpuvirt_nl_mcgrps); i++) {
		gpuvirt_nl_mcgrps_admin[i] = gpuvirt_nl_mcgrps[i];
		gpuvirt_nl_mcgrps_admin[i].flags |= GPUVIRT_GENL_MCAST_ADMIN;
	}
	gpuvirt_nl_family.mcgrps = gpuvirt_nl_mcgrps_admin;
	return genl_register_family(&gpuvirt_nl_family);
}

void gpuvirt_nl_exit(void)
{
	genl_unregister_family(&gpuvirt_nl_family);
}

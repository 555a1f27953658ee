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
int gpuvirt_nl_check_req(const struct nlmsghdr *nlh,
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
 * @cmd: GPUVIRT_CMD_GPU_ADD_NTF, GPUVIRT_CMD_GPU_DEL_NTF or
 *	GPUVIRT_CMD_GPU_CHANGE_NTF
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

/*
 * Dumps that walk the vGPU parents of a GPU (gpuvirt_gpu_mp()) keep the
 * parent in the upper bits of struct gpuvirt_nl_dump.idx and the item in
 * that parent (a type, a vGPU slot) in the lower ones.
 */
#define GPUVIRT_NL_IDX_SHIFT	8
#define GPUVIRT_NL_IDX_MP(idx)	((idx) >> GPUVIRT_NL_IDX_SHIFT)
#define GPUVIRT_NL_IDX_ITEM(idx)	((idx) & (BIT(GPUVIRT_NL_IDX_SHIFT) - 1))
#define GPUVIRT_NL_IDX(mp, item)	((mp) << GPUVIRT_NL_IDX_SHIFT | (item))

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
	struct gpuvirt_type *type = NULL;
	struct gpuvirt_mdev_parent *mp;
	struct gpuvirt_gpu *gpu;
	struct sk_buff *msg;
	unsigned int i, m;
	int err, gi;

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
	gi = gpuvirt_nl_gi_id(info->attrs[GPUVIRT_A_TYPE_GI_ID]);
	if (gi >= 0 && (gi >= GPUVIRT_MIG_GIS_MAX ||
			!gpuvirt_gpu_mp(gpu, gi + 1))) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[GPUVIRT_A_TYPE_GI_ID],
				    "the GPU has no GI with this id");
		err = -ENOENT;
		goto err_unlock;
	}
	for (m = 0; m < GPUVIRT_GPU_MPS && !type; m++) {
		mp = gpuvirt_gpu_mp(gpu, m);
		if (!mp || (gi >= 0 && (!mp->gi || mp->gi->id != gi)))
			continue;
		for (i = 0; i < mp->nr_types; i++)
			if (!nla_strcmp(info->attrs[GPUVIRT_A_TYPE_NAME],
					mp->profiles[i].name))
				type = &mp->types[i];
	}
	if (!type) {
		if (gi >= 0)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[GPUVIRT_A_TYPE_NAME],
					    "the GI has no type of this name");
		else
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[GPUVIRT_A_TYPE_NAME],
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
	struct gpuvirt_mdev_parent *mp;
	struct gpuvirt_nl_dump d;
	struct gpuvirt_gpu *gpu;
	unsigned int m, i;
	int err = 0;

	err = gpuvirt_nl_dump_begin(cb, &d);
	if (err)
		return err < 0 ? err : 0;
	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each_start(&gpuvirt_registry.gpus, d.gpu_id, gpu, d.gpu_id) {
		if (filter && nla_get_u32(filter) != gpu->id)
			continue;
		for (m = GPUVIRT_NL_IDX_MP(d.idx); m < GPUVIRT_GPU_MPS; m++) {
			mp = gpuvirt_gpu_mp(gpu, m);
			i = m == GPUVIRT_NL_IDX_MP(d.idx) ?
			    GPUVIRT_NL_IDX_ITEM(d.idx) : 0;
			for (; mp && i < mp->nr_types; i++) {
				err = gpuvirt_nl_type_fill(skb, &mp->types[i],
							   NETLINK_CB(cb->skb).portid,
							   cb->nlh->nlmsg_seq,
							   NLM_F_MULTI, cb);
				if (err)
					break;
			}
			if (err) {
				d.idx = GPUVIRT_NL_IDX(m, i);
				break;
			}
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
	    nla_put_u32(skb, GPUVIRT_A_VGPU_CTX, vgpu->mp->ctx_base + vgpu->slot) ||
	    gpuvirt_nl_put_gi(skb, GPUVIRT_A_VGPU_GI_ID, vgpu->mp) ||
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
	struct gpuvirt_mdev_parent *mp;
	struct gpuvirt_gpu *gpu;
	unsigned long id;
	unsigned int m;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_VGPU_UUID)) {
		NL_SET_ERR_MSG(info->extack, "vGPU UUID is required");
		return -EINVAL;
	}
	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each(&gpuvirt_registry.gpus, id, gpu) {
		for (m = 0; m < GPUVIRT_GPU_MPS && !vgpu; m++) {
			mp = gpuvirt_gpu_mp(gpu, m);
			if (!mp)
				continue;
			spin_lock(&mp->sched.lock);
			vgpu = gpuvirt_sched_find_locked(&mp->sched,
							 nla_data(attr));
			if (vgpu)
				err = fn(vgpu, info, arg);
			spin_unlock(&mp->sched.lock);
		}
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
	struct gpuvirt_mdev_parent *mp;
	struct gpuvirt_nl_dump d;
	struct gpuvirt_gpu *gpu;
	unsigned int m, i;
	int err = 0;

	err = gpuvirt_nl_dump_begin(cb, &d);
	if (err)
		return err < 0 ? err : 0;
	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each_start(&gpuvirt_registry.gpus, d.gpu_id, gpu, d.gpu_id) {
		if (filter && nla_get_u32(filter) != gpu->id)
			continue;
		for (m = GPUVIRT_NL_IDX_MP(d.idx); m < GPUVIRT_GPU_MPS; m++) {
			mp = gpuvirt_gpu_mp(gpu, m);
			if (!mp)
				continue;
			i = m == GPUVIRT_NL_IDX_MP(d.idx) ?
			    GPUVIRT_NL_IDX_ITEM(d.idx) : 0;
			spin_lock(&mp->sched.lock);
			for (; i < GPUVIRT_SP_SLOTS; i++) {
				if (!mp->sched.vgpus[i])
					continue;
				err = gpuvirt_nl_vgpu_fill(skb, mp->sched.vgpus[i],
							   NETLINK_CB(cb->skb).portid,
							   cb->nlh->nlmsg_seq,
							   NLM_F_MULTI,
							   GPUVIRT_CMD_VGPU_GET, cb);
				if (err)
					break;
			}
			spin_unlock(&mp->sched.lock);
			if (err) {
				d.idx = GPUVIRT_NL_IDX(m, i);
				break;
			}
		}
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

/* A GPU's schedulers: its own (0), even in MIG mode, then its GIs'. */
static struct gpuvirt_mdev_parent *gpuvirt_nl_sched_mp(struct gpuvirt_gpu *gpu,
						       unsigned int i)
{
	return i ? gpuvirt_gpu_mp(gpu, i) : gpu->mdev;
}

/* The scheduler a sched request names: a GPU's, or a GI's. */
static struct gpuvirt_mdev_parent *gpuvirt_nl_sched_lookup(struct genl_info *info)
{
	struct nlattr *gi_attr = info->attrs[GPUVIRT_A_SCHED_GI_ID];
	struct gpuvirt_mdev_parent *mp;
	struct gpuvirt_gpu *gpu;
	int gi;

	gpu = gpuvirt_nl_gpu_lookup(info, GPUVIRT_A_SCHED_GPU_ID);
	if (IS_ERR(gpu))
		return ERR_CAST(gpu);
	gi = gpuvirt_nl_gi_id(gi_attr);
	if (gi < 0)
		return gpu->mdev;
	mp = gi < GPUVIRT_MIG_GIS_MAX ? gpuvirt_gpu_mp(gpu, gi + 1) : NULL;
	if (!mp) {
		NL_SET_ERR_MSG_ATTR(info->extack, gi_attr,
				    "the GPU has no GI with this id");
		return ERR_PTR(-ENOENT);
	}
	return mp;
}

int gpuvirt_nl_sched_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_mdev_parent *mp;
	struct sk_buff *msg;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&gpuvirt_registry.lock);
	mp = gpuvirt_nl_sched_lookup(info);
	err = IS_ERR(mp) ? PTR_ERR(mp) :
	      gpuvirt_nl_sched_fill(msg, mp, info->snd_portid,
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
	struct gpuvirt_mdev_parent *mp;
	struct gpuvirt_nl_dump d;
	struct gpuvirt_gpu *gpu;
	int err = 0;

	err = gpuvirt_nl_dump_begin(cb, &d);
	if (err)
		return err < 0 ? err : 0;
	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each_start(&gpuvirt_registry.gpus, d.gpu_id, gpu, d.gpu_id) {
		for (; d.idx < GPUVIRT_GPU_MPS; d.idx++) {
			mp = gpuvirt_nl_sched_mp(gpu, d.idx);
			if (!mp)
				continue;
			err = gpuvirt_nl_sched_fill(skb, mp,
						    NETLINK_CB(cb->skb).portid,
						    cb->nlh->nlmsg_seq,
						    NLM_F_MULTI,
						    GPUVIRT_CMD_SCHED_GET, cb);
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

int gpuvirt_nl_sched_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *slice = info->attrs[GPUVIRT_A_SCHED_TIMESLICE_US];
	struct nlattr *policy = info->attrs[GPUVIRT_A_SCHED_POLICY];
	struct gpuvirt_mdev_parent *mp;
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
	mp = gpuvirt_nl_sched_lookup(info);
	if (IS_ERR(mp)) {
		err = PTR_ERR(mp);
		goto out_unlock;
	}
	/* both were range-checked, so neither can be refused now */
	if (slice)
		err = gpuvirt_sched_set_slice(mp, (u64)nla_get_u32(slice) *
					      NSEC_PER_USEC);
	if (!err && policy)
		err = gpuvirt_sched_set_policy(mp, nla_get_u32(policy));
	if (err)
		NL_SET_ERR_MSG(info->extack, "the scheduler refused the setting");
	else
		gpuvirt_sched_notify(mp);
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

/* MIG mode and GPU instances */

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

/* The GPU a MIG request names; the MIG mutex keeps it registered. */
static struct gpuvirt_gpu *gpuvirt_nl_mig_gpu(struct genl_info *info,
					      unsigned int attr)
{
	struct gpuvirt_gpu *gpu;

	lockdep_assert_held(&gpuvirt_mig_mutex);
	mutex_lock(&gpuvirt_registry.lock);
	gpu = gpuvirt_nl_gpu_lookup(info, attr);
	mutex_unlock(&gpuvirt_registry.lock);
	return gpu;
}

int gpuvirt_nl_gpu_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_mig_why why;
	struct gpuvirt_gpu *gpu;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_GPU_MODE)) {
		NL_SET_ERR_MSG(info->extack, "mode is required");
		return -EINVAL;
	}

	mutex_lock(&gpuvirt_mig_mutex);
	gpu = gpuvirt_nl_mig_gpu(info, GPUVIRT_A_GPU_ID);
	if (IS_ERR(gpu)) {
		err = PTR_ERR(gpu);
		goto out_unlock;
	}
	err = gpuvirt_mig_set_mode(gpu, nla_get_u32(info->attrs[GPUVIRT_A_GPU_MODE]) ==
				   GPUVIRT_GPU_MODE_MIG, &why);
	if (err) {
		gpuvirt_nl_why(info->extack, &why,
			       err == -EBUSY ? "the GPU has vGPUs or GIs" :
			       err == -EOPNOTSUPP ? "the GPU has no MIG profiles" :
			       "the mode could not be changed");
		NL_SET_BAD_ATTR(info->extack, info->attrs[GPUVIRT_A_GPU_MODE]);
	}
out_unlock:
	mutex_unlock(&gpuvirt_mig_mutex);
	return err;
}

static int gpuvirt_nl_gi_fill(struct sk_buff *skb, struct gpuvirt_gi *gi,
			      u32 portid, u32 seq, int flags, u8 cmd,
			      struct netlink_callback *cb)
{
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

	hdr = gpuvirt_nl_put_hdr(skb, portid, seq, flags, cmd, cb);
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

/* The GI a request names by gpu-id and id, under the registry lock. */
static struct gpuvirt_gi *gpuvirt_nl_gi_lookup(struct genl_info *info)
{
	struct gpuvirt_gpu *gpu;
	u32 id;

	gpu = gpuvirt_nl_gpu_lookup(info, GPUVIRT_A_GI_GPU_ID);
	if (IS_ERR(gpu))
		return ERR_CAST(gpu);
	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_GI_ID)) {
		NL_SET_ERR_MSG(info->extack, "GI id is required");
		return ERR_PTR(-EINVAL);
	}
	id = nla_get_u32(info->attrs[GPUVIRT_A_GI_ID]);
	if (!gpu->mig || id >= GPUVIRT_MIG_GIS_MAX || !gpu->mig->gi[id]) {
		if (gpu->mig)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[GPUVIRT_A_GI_ID],
					    "the GPU has no GI with this id");
		else
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[GPUVIRT_A_GI_ID],
					    "the GPU is not in MIG mode: it has no GIs");
		return ERR_PTR(-ENOENT);
	}
	return gpu->mig->gi[id];
}

int gpuvirt_nl_gi_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_gi *gi;
	struct sk_buff *msg;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&gpuvirt_registry.lock);
	gi = gpuvirt_nl_gi_lookup(info);
	err = IS_ERR(gi) ? PTR_ERR(gi) :
	      gpuvirt_nl_gi_fill(msg, gi, info->snd_portid, info->snd_seq, 0,
				 GPUVIRT_CMD_GI_GET, NULL);
	mutex_unlock(&gpuvirt_registry.lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

int gpuvirt_nl_gi_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr *filter = gpuvirt_genl_dump_attrs(cb)[GPUVIRT_A_GI_GPU_ID];
	struct gpuvirt_nl_dump d;
	struct gpuvirt_gpu *gpu;
	int err = 0;

	err = gpuvirt_nl_dump_begin(cb, &d);
	if (err)
		return err < 0 ? err : 0;
	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each_start(&gpuvirt_registry.gpus, d.gpu_id, gpu, d.gpu_id) {
		if (!gpu->mig || (filter && nla_get_u32(filter) != gpu->id))
			continue;
		for (; d.idx < GPUVIRT_MIG_GIS_MAX; d.idx++) {
			if (!gpu->mig->gi[d.idx])
				continue;
			err = gpuvirt_nl_gi_fill(skb, gpu->mig->gi[d.idx],
						 NETLINK_CB(cb->skb).portid,
						 cb->nlh->nlmsg_seq, NLM_F_MULTI,
						 GPUVIRT_CMD_GI_GET, cb);
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

int gpuvirt_nl_gi_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *start = info->attrs[GPUVIRT_A_GI_START];
	struct nlattr *name = info->attrs[GPUVIRT_A_GI_PROFILE];
	struct gpuvirt_mig_why why;
	struct gpuvirt_gpu *gpu;
	struct sk_buff *msg;
	int err, profile, id;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_GI_PROFILE)) {
		NL_SET_ERR_MSG(info->extack, "GI profile is required");
		return -EINVAL;
	}
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	mutex_lock(&gpuvirt_mig_mutex);
	gpu = gpuvirt_nl_mig_gpu(info, GPUVIRT_A_GI_GPU_ID);
	if (IS_ERR(gpu)) {
		err = PTR_ERR(gpu);
		goto err_unlock;
	}
	if (!gpu->mig) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[GPUVIRT_A_GI_GPU_ID],
				    "the GPU is not in MIG mode");
		err = -EINVAL;
		goto err_unlock;
	}
	profile = gpuvirt_mig_profile_find(&gpu->mig->table, nla_data(name));
	if (profile < 0) {
		NL_SET_ERR_MSG_ATTR(info->extack, name,
				    "the GPU has no GI profile of this name");
		err = -EINVAL;
		goto err_unlock;
	}
	id = gpuvirt_gi_create(gpu, profile,
			       start ? nla_get_u32(start) : GPUVIRT_MIG_START_ANY,
			       &why);
	if (id < 0) {
		err = id;
		gpuvirt_nl_why(info->extack, &why, "the GI could not be created");
		NL_SET_BAD_ATTR(info->extack, start ?: name);
		goto err_unlock;
	}
	mutex_lock(&gpuvirt_registry.lock);
	err = gpuvirt_nl_gi_fill(msg, gpu->mig->gi[id], info->snd_portid,
				 info->snd_seq, 0, GPUVIRT_CMD_GI_NEW, NULL);
	mutex_unlock(&gpuvirt_registry.lock);
	mutex_unlock(&gpuvirt_mig_mutex);
	if (err) {
		/* the GI exists: say so rather than fail the request */
		nlmsg_free(msg);
		return 0;
	}
	return genlmsg_reply(msg, info);

err_unlock:
	mutex_unlock(&gpuvirt_mig_mutex);
	nlmsg_free(msg);
	return err;
}

int gpuvirt_nl_gi_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuvirt_mig_why why;
	struct gpuvirt_gpu *gpu;
	int err;

	err = gpuvirt_nl_check_req(info->nlhdr, info->extack);
	if (err)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_GI_ID)) {
		NL_SET_ERR_MSG(info->extack, "GI id is required");
		return -EINVAL;
	}

	mutex_lock(&gpuvirt_mig_mutex);
	gpu = gpuvirt_nl_mig_gpu(info, GPUVIRT_A_GI_GPU_ID);
	if (IS_ERR(gpu)) {
		err = PTR_ERR(gpu);
		goto out_unlock;
	}
	err = gpuvirt_gi_destroy(gpu, nla_get_u32(info->attrs[GPUVIRT_A_GI_ID]),
				 &why);
	if (err) {
		gpuvirt_nl_why(info->extack, &why,
			       err == -EBUSY ? "the GI has a vGPU" :
			       err == -ENOENT ? "the GPU has no GI with this id" :
			       "the GPU is not in MIG mode");
		NL_SET_BAD_ATTR(info->extack, info->attrs[GPUVIRT_A_GI_ID]);
	}
out_unlock:
	mutex_unlock(&gpuvirt_mig_mutex);
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
	struct sk_buff *msg;

	if (!genl_has_listeners(&gpuvirt_nl_family, &init_net,
				GPUVIRT_NLGRP_MONITOR))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (gpuvirt_nl_gi_fill(msg, gi, 0, 0, 0, cmd, NULL)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&gpuvirt_nl_family, msg, 0, GPUVIRT_NLGRP_MONITOR,
			  GFP_KERNEL);
}

/**
 * gpuvirt_nl_msg_put() - start a gpuvirt message
 * @skb: the message buffer
 * @portid: destination, 0 for a notification
 * @seq: sequence number of the request, 0 for a notification
 * @cmd: GPUVIRT_CMD_*
 *
 * Return: the header to end or cancel, or NULL when @skb is full.
 */
void *gpuvirt_nl_msg_put(struct sk_buff *skb, u32 portid, u32 seq, u8 cmd)
{
	return genlmsg_put(skb, portid, seq, &gpuvirt_nl_family, 0, cmd);
}

/* Whether anyone listens to the monitor group. */
bool gpuvirt_nl_has_listeners(void)
{
	return genl_has_listeners(&gpuvirt_nl_family, &init_net,
				  GPUVIRT_NLGRP_MONITOR);
}

/**
 * gpuvirt_nl_multicast() - send a notification to the monitor group
 * @msg: a complete message; consumed
 */
void gpuvirt_nl_multicast(struct sk_buff *msg)
{
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

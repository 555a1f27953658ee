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
	.mcgrps		= gpuvirt_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(gpuvirt_nl_mcgrps),
};

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

int gpuvirt_nl_init(void)
{
	return genl_register_family(&gpuvirt_nl_family);
}

void gpuvirt_nl_exit(void)
{
	genl_unregister_family(&gpuvirt_nl_family);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private interfaces between the files of gpuvirt.ko.
 */
#ifndef GPUVIRT_CORE_H
#define GPUVIRT_CORE_H

#include <linux/mutex.h>
#include <linux/xarray.h>

#include "compat.h"
#include "gpuvirt_backend.h"

struct nlmsghdr;
struct sk_buff;
struct netlink_ext_ack;

/**
 * struct gpuvirt_registry - every registered GPU
 * @lock: protects @gpus and what readers of a GPU found there may see
 *	change (struct gpuvirt_gpu: mode, mig, registered). Held only for
 *	short walks and updates, never across a wait. A GPU looked up under
 *	@lock stays valid until @lock is dropped; to keep it longer, take a
 *	reference (gpuvirt_gpu_get()).
 * @gpus: GPUs indexed by id
 * @gen: bumped whenever a GPU or a vGPU comes or goes, so that netlink
 *	dumps spanning a change are flagged inconsistent
 * @debugfs: <debugfs>/gpuvirt/, the core's debugfs root
 * @debugfs_gpus: <debugfs>/gpuvirt/gpus/
 */
struct gpuvirt_registry {
	struct mutex lock;	/* see above */
	struct xarray gpus;
	atomic_t gen;
	struct dentry *debugfs;
	struct dentry *debugfs_gpus;
};

extern struct gpuvirt_registry gpuvirt_registry;

struct gpuvirt_mig_why;

struct gpuvirt_gpu *gpuvirt_gpu_find(u32 id);
struct gpuvirt_gpu *gpuvirt_gpu_get(u32 id);
struct gpuvirt_gpu *gpuvirt_gpu_get_by_dev(struct device *dev);
void gpuvirt_gpu_put(struct gpuvirt_gpu *gpu);
int gpuvirt_gpu_lock(struct gpuvirt_gpu *gpu);
void gpuvirt_gpu_unlock(struct gpuvirt_gpu *gpu);
int gpuvirt_gpu_set_mode(struct gpuvirt_gpu *gpu, u32 mode,
			 struct gpuvirt_mig_why *why);
u32 gpuvirt_gpu_vgpu_mode(struct gpuvirt_gpu *gpu);
int gpuvirt_gpu_set_vgpu_mode(struct gpuvirt_gpu *gpu, u32 mode);

int gpuvirt_debugfs_init(void);
void gpuvirt_debugfs_exit(void);
void gpuvirt_debugfs_gpu_add(struct gpuvirt_gpu *gpu);
void gpuvirt_debugfs_gpu_del(struct gpuvirt_gpu *gpu);

int gpuvirt_nl_init(void);
void gpuvirt_nl_exit(void);
void gpuvirt_gpu_notify(struct gpuvirt_gpu *gpu, u8 cmd);
struct gpuvirt_gi;
void gpuvirt_gi_notify(struct gpuvirt_gi *gi, u8 cmd);
void gpuvirt_registry_changed(void);

struct netlink_callback;

/**
 * struct gpuvirt_nl_msg - who a message goes to and what it is
 * @portid: the requester, 0 for a notification
 * @seq: the request's sequence number, 0 for a notification
 * @flags: NLM_F_MULTI in a dump
 * @cmd: GPUVIRT_CMD_*
 * @cb: the dump, whose consistency the header is checked against, or NULL
 */
struct gpuvirt_nl_msg {
	u32 portid;
	u32 seq;
	int flags;
	u8 cmd;
	struct netlink_callback *cb;
};

void *gpuvirt_nl_put_hdr(struct sk_buff *skb, const struct gpuvirt_nl_msg *m);
void gpuvirt_nl_notify(int (*fill)(struct sk_buff *skb, void *obj,
				   const struct gpuvirt_nl_msg *m),
		       void *obj, u8 cmd);

#endif /* GPUVIRT_CORE_H */

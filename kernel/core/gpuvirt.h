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
 * @lock: serialises register, unregister and every reader that walks
 *	@gpus or dereferences a GPU found there (netlink, debugfs). A GPU
 *	looked up under @lock stays valid until @lock is dropped, because
 *	unregistering takes @lock before the backend may free it.
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

struct gpuvirt_gpu *gpuvirt_gpu_find(u32 id);

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
int gpuvirt_nl_check_req(const struct nlmsghdr *nlh,
			 struct netlink_ext_ack *extack);
void *gpuvirt_nl_msg_put(struct sk_buff *skb, u32 portid, u32 seq, u8 cmd);
bool gpuvirt_nl_has_listeners(void);
void gpuvirt_nl_multicast(struct sk_buff *msg);

#endif /* GPUVIRT_CORE_H */

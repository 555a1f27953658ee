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
 *	dumps spanning a change are flagged inconsistent; never 0, which
 *	nl_dump_check_consistent() takes for "not set yet"
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

/* A setting of struct gpuvirt_gpu_cfg that stays as it is */
#define GPUVIRT_GPU_CFG_KEEP	U32_MAX

/**
 * struct gpuvirt_gpu_cfg - what one request changes of a GPU's settings
 * @vgpu_model: GPUVIRT_VGPU_MODEL_*: mdev or sriov (sriov.c)
 * @vgpu_mode: GPUVIRT_VGPU_MODE_*: homogeneous or mixed-size (fbacct.h)
 * @mode: enum gpuvirt_gpu_mode: time-sliced or MIG (gi.c)
 *
 * Each is GPUVIRT_GPU_CFG_KEEP to leave it as it is.
 */
struct gpuvirt_gpu_cfg {
	u32 vgpu_model;
	u32 vgpu_mode;
	u32 mode;
};

/* The setting a refusal is about, by its member of struct gpuvirt_gpu_cfg */
enum gpuvirt_gpu_cfg_item {
	GPUVIRT_GPU_CFG_VGPU_MODEL,
	GPUVIRT_GPU_CFG_VGPU_MODE,
	GPUVIRT_GPU_CFG_MODE,
};

/* What is in the way of a change of a GPU's settings */
enum gpuvirt_gpu_refusal {
	GPUVIRT_GPU_REFUSED_NONE,
	GPUVIRT_GPU_REFUSED_NO_SRIOV,	/* the sriov model without SR-IOV */
	GPUVIRT_GPU_REFUSED_NO_MIG,	/* MIG mode without MIG profiles */
	GPUVIRT_GPU_REFUSED_GIS,	/* the GPU has GPU instances */
	GPUVIRT_GPU_REFUSED_VFS,	/* the GPU has VFs enabled */
	GPUVIRT_GPU_REFUSED_VGPUS,	/* the GPU has vGPUs */
	GPUVIRT_GPU_REFUSED_NOMEM,	/* out of memory */
};

#define GPUVIRT_GPU_WHY_MAX	128

/**
 * struct gpuvirt_gpu_why - why gpuvirt_gpu_configure() refused a change
 * @item: the setting refused
 * @reason: what is in the way
 * @msg: one line for people, naming the GPU and what is in the way
 */
struct gpuvirt_gpu_why {
	enum gpuvirt_gpu_cfg_item item;
	enum gpuvirt_gpu_refusal reason;
	char msg[GPUVIRT_GPU_WHY_MAX];
};

struct gpuvirt_gpu *gpuvirt_gpu_find(u32 id);
struct gpuvirt_gpu *gpuvirt_gpu_get(u32 id);
struct gpuvirt_gpu *gpuvirt_gpu_get_by_dev(struct device *dev);
void gpuvirt_gpu_put(struct gpuvirt_gpu *gpu);
int gpuvirt_gpu_lock(struct gpuvirt_gpu *gpu);
void gpuvirt_gpu_unlock(struct gpuvirt_gpu *gpu);
int gpuvirt_gpu_configure(struct gpuvirt_gpu *gpu,
			  const struct gpuvirt_gpu_cfg *cfg,
			  struct gpuvirt_gpu_why *why);
__printf(4, 5)
int gpuvirt_gpu_why_set(struct gpuvirt_gpu_why *why,
			enum gpuvirt_gpu_cfg_item item,
			enum gpuvirt_gpu_refusal reason, const char *fmt, ...);
u32 gpuvirt_gpu_vgpu_mode(struct gpuvirt_gpu *gpu);

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
 * @omit: in a vgpu-get reply, the parts the request asked to leave out
 *	(GPUVIRT_VGPU_OMIT_*); 0 puts everything
 */
struct gpuvirt_nl_msg {
	u32 portid;
	u32 seq;
	int flags;
	u8 cmd;
	struct netlink_callback *cb;
	u32 omit;
};

void *gpuvirt_nl_put_hdr(struct sk_buff *skb, const struct gpuvirt_nl_msg *m);
void gpuvirt_nl_notify(int (*fill)(struct sk_buff *skb, void *obj,
				   const struct gpuvirt_nl_msg *m),
		       void *obj, u8 cmd);

#endif /* GPUVIRT_CORE_H */

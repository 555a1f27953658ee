/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/gpuvirt.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_GPUVIRT_GEN_H
#define _LINUX_GPUVIRT_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/gpuvirt.h>

extern const struct nla_policy gpuvirt_gpu_get_nl_policy[GPUVIRT_A_GPU_ID + 1];

extern const struct nla_policy gpuvirt_type_get_nl_policy[GPUVIRT_A_TYPE_GI_ID + 1];

extern const struct nla_policy gpuvirt_vgpu_get_nl_policy[GPUVIRT_A_VGPU_GPU_ID + 1];

extern const struct nla_policy gpuvirt_vgpu_set_nl_policy[GPUVIRT_A_VGPU_MAX_PCT + 1];

extern const struct nla_policy gpuvirt_sched_get_nl_policy[GPUVIRT_A_SCHED_GI_ID + 1];

extern const struct nla_policy gpuvirt_sched_set_nl_policy[GPUVIRT_A_SCHED_GI_ID + 1];

extern const struct nla_policy gpuvirt_gpu_set_nl_policy[GPUVIRT_A_GPU_MODE + 1];

extern const struct nla_policy gpuvirt_gi_get_nl_policy[GPUVIRT_A_GI_ID + 1];

extern const struct nla_policy gpuvirt_gi_new_nl_policy[GPUVIRT_A_GI_START + 1];

extern const struct nla_policy gpuvirt_gi_del_nl_policy[GPUVIRT_A_GI_ID + 1];

extern const struct nla_policy gpuvirt_pt_get_nl_policy[GPUVIRT_A_PT_BDF + 1];

/* Ops table for gpuvirt */
extern const struct genl_ops gpuvirt_nl_ops[11];

int gpuvirt_nl_gpu_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_gpu_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int gpuvirt_nl_type_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_type_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb);
int gpuvirt_nl_vgpu_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_vgpu_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb);
int gpuvirt_nl_vgpu_set_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_sched_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_sched_get_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb);
int gpuvirt_nl_sched_set_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_gpu_set_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_gi_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_gi_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int gpuvirt_nl_gi_new_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_gi_del_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_pt_get_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	GPUVIRT_NLGRP_MONITOR,
};

#endif /* _LINUX_GPUVIRT_GEN_H */

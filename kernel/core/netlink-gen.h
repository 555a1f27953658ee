/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/gpuvirt.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_GPUVIRT_GEN_H
#define _LINUX_GPUVIRT_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/gpuvirt.h>

/* Ops table for gpuvirt */
extern const struct genl_split_ops gpuvirt_nl_ops[16];

int gpuvirt_nl_pre_doit_gpu(const struct genl_split_ops *ops,
			    struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
			struct genl_info *info);
void
gpuvirt_nl_post_doit_gpu(const struct genl_split_ops *ops, struct sk_buff *skb,
			 struct genl_info *info);
void
gpuvirt_nl_post_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		     struct genl_info *info);
int gpuvirt_nl_dump_start(struct netlink_callback *cb);

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

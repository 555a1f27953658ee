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

/* Ops table for gpuvirt */
extern const struct genl_ops gpuvirt_nl_ops[1];

int gpuvirt_nl_gpu_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuvirt_nl_gpu_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);

enum {
	GPUVIRT_NLGRP_MONITOR,
};

#endif /* _LINUX_GPUVIRT_GEN_H */

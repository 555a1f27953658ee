// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: generic netlink takes split do/dump operations with per-operation
 * pre_doit/post_doit hooks (struct genl_split_ops, v6.2).
 */
#include <net/genetlink.h>

static int probe_doit(struct sk_buff *skb, struct genl_info *info)
{
	return 0;
}

const struct genl_split_ops probe_ops[] = {
	{ .cmd = 1, .doit = probe_doit, .flags = GENL_CMD_CAP_DO },
};

const struct genl_family probe_family = {
	.split_ops = probe_ops,
	.n_split_ops = ARRAY_SIZE(probe_ops),
};

// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/gpuvirt.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink-gen.h"

#include <uapi/linux/gpuvirt.h>

/* GPUVIRT_CMD_GPU_GET - do */
const struct nla_policy gpuvirt_gpu_get_nl_policy[GPUVIRT_A_GPU_ID + 1] = {
	[GPUVIRT_A_GPU_ID] = { .type = NLA_U32, },
};

/* Ops table for gpuvirt */
const struct genl_ops gpuvirt_nl_ops[1] = {
	{
		.cmd		= GPUVIRT_CMD_GPU_GET,
		.doit		= gpuvirt_nl_gpu_get_doit,
		.dumpit		= gpuvirt_nl_gpu_get_dumpit,
		.policy		= gpuvirt_gpu_get_nl_policy,
		.maxattr	= GPUVIRT_A_GPU_ID,
	},
};

static const struct genl_multicast_group gpuvirt_nl_mcgrps[] = {
	[GPUVIRT_NLGRP_MONITOR] = { "monitor", },
};

// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/gpuvirt.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink-gen.h"

#include <uapi/linux/gpuvirt.h>

/* Integer value ranges */
static const struct netlink_range_validation gpuvirt_a_sched_timeslice_us_range = {
	.max	= 100000ULL,
};

/* GPUVIRT_CMD_GPU_GET - do */
const struct nla_policy gpuvirt_gpu_get_nl_policy[GPUVIRT_A_GPU_ID + 1] = {
	[GPUVIRT_A_GPU_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_TYPE_GET - do */
const struct nla_policy gpuvirt_type_get_nl_policy[GPUVIRT_A_TYPE_GI_ID + 1] = {
	[GPUVIRT_A_TYPE_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_TYPE_NAME] = { .type = NLA_NUL_STRING, .len = 23, },
	[GPUVIRT_A_TYPE_GI_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_VGPU_GET - do */
const struct nla_policy gpuvirt_vgpu_get_nl_policy[GPUVIRT_A_VGPU_GPU_ID + 1] = {
	[GPUVIRT_A_VGPU_UUID] = { .type = NLA_NUL_STRING, .len = 36, },
	[GPUVIRT_A_VGPU_GPU_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_VGPU_SET - do */
const struct nla_policy gpuvirt_vgpu_set_nl_policy[GPUVIRT_A_VGPU_MAX_PCT + 1] = {
	[GPUVIRT_A_VGPU_UUID] = { .type = NLA_NUL_STRING, .len = 36, },
	[GPUVIRT_A_VGPU_WEIGHT] = NLA_POLICY_RANGE(NLA_U32, 1, 10000),
	[GPUVIRT_A_VGPU_MIN_PCT] = NLA_POLICY_MAX(NLA_U32, 100),
	[GPUVIRT_A_VGPU_MAX_PCT] = NLA_POLICY_RANGE(NLA_U32, 1, 100),
};

/* GPUVIRT_CMD_SCHED_GET - do */
const struct nla_policy gpuvirt_sched_get_nl_policy[GPUVIRT_A_SCHED_GI_ID + 1] = {
	[GPUVIRT_A_SCHED_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_SCHED_GI_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_SCHED_SET - do */
const struct nla_policy gpuvirt_sched_set_nl_policy[GPUVIRT_A_SCHED_GI_ID + 1] = {
	[GPUVIRT_A_SCHED_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_SCHED_GI_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_SCHED_POLICY] = NLA_POLICY_MAX(NLA_U32, 3),
	[GPUVIRT_A_SCHED_TIMESLICE_US] = NLA_POLICY_FULL_RANGE(NLA_U32, &gpuvirt_a_sched_timeslice_us_range),
};

/* GPUVIRT_CMD_GPU_SET - do */
const struct nla_policy gpuvirt_gpu_set_nl_policy[GPUVIRT_A_GPU_MODE + 1] = {
	[GPUVIRT_A_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_GPU_MODE] = NLA_POLICY_MAX(NLA_U32, 1),
};

/* GPUVIRT_CMD_GI_GET - do */
const struct nla_policy gpuvirt_gi_get_nl_policy[GPUVIRT_A_GI_ID + 1] = {
	[GPUVIRT_A_GI_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_GI_ID] = NLA_POLICY_MAX(NLA_U32, 6),
};

/* GPUVIRT_CMD_GI_NEW - do */
const struct nla_policy gpuvirt_gi_new_nl_policy[GPUVIRT_A_GI_START + 1] = {
	[GPUVIRT_A_GI_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_GI_PROFILE] = { .type = NLA_NUL_STRING, .len = 15, },
	[GPUVIRT_A_GI_START] = NLA_POLICY_MAX(NLA_U32, 7),
};

/* GPUVIRT_CMD_GI_DEL - do */
const struct nla_policy gpuvirt_gi_del_nl_policy[GPUVIRT_A_GI_ID + 1] = {
	[GPUVIRT_A_GI_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_GI_ID] = NLA_POLICY_MAX(NLA_U32, 6),
};

/* GPUVIRT_CMD_PT_GET - do */
const struct nla_policy gpuvirt_pt_get_nl_policy[GPUVIRT_A_PT_BDF + 1] = {
	[GPUVIRT_A_PT_BDF] = { .type = NLA_NUL_STRING, .len = 15, },
};

/* Ops table for gpuvirt */
const struct genl_ops gpuvirt_nl_ops[11] = {
	{
		.cmd		= GPUVIRT_CMD_GPU_GET,
		.doit		= gpuvirt_nl_gpu_get_doit,
		.dumpit		= gpuvirt_nl_gpu_get_dumpit,
		.policy		= gpuvirt_gpu_get_nl_policy,
		.maxattr	= GPUVIRT_A_GPU_ID,
	},
	{
		.cmd		= GPUVIRT_CMD_TYPE_GET,
		.doit		= gpuvirt_nl_type_get_doit,
		.dumpit		= gpuvirt_nl_type_get_dumpit,
		.policy		= gpuvirt_type_get_nl_policy,
		.maxattr	= GPUVIRT_A_TYPE_GI_ID,
	},
	{
		.cmd		= GPUVIRT_CMD_VGPU_GET,
		.doit		= gpuvirt_nl_vgpu_get_doit,
		.dumpit		= gpuvirt_nl_vgpu_get_dumpit,
		.policy		= gpuvirt_vgpu_get_nl_policy,
		.maxattr	= GPUVIRT_A_VGPU_GPU_ID,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUVIRT_CMD_VGPU_SET,
		.doit		= gpuvirt_nl_vgpu_set_doit,
		.policy		= gpuvirt_vgpu_set_nl_policy,
		.maxattr	= GPUVIRT_A_VGPU_MAX_PCT,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUVIRT_CMD_SCHED_GET,
		.doit		= gpuvirt_nl_sched_get_doit,
		.dumpit		= gpuvirt_nl_sched_get_dumpit,
		.policy		= gpuvirt_sched_get_nl_policy,
		.maxattr	= GPUVIRT_A_SCHED_GI_ID,
	},
	{
		.cmd		= GPUVIRT_CMD_SCHED_SET,
		.doit		= gpuvirt_nl_sched_set_doit,
		.policy		= gpuvirt_sched_set_nl_policy,
		.maxattr	= GPUVIRT_A_SCHED_GI_ID,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUVIRT_CMD_GPU_SET,
		.doit		= gpuvirt_nl_gpu_set_doit,
		.policy		= gpuvirt_gpu_set_nl_policy,
		.maxattr	= GPUVIRT_A_GPU_MODE,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUVIRT_CMD_GI_GET,
		.doit		= gpuvirt_nl_gi_get_doit,
		.dumpit		= gpuvirt_nl_gi_get_dumpit,
		.policy		= gpuvirt_gi_get_nl_policy,
		.maxattr	= GPUVIRT_A_GI_ID,
	},
	{
		.cmd		= GPUVIRT_CMD_GI_NEW,
		.doit		= gpuvirt_nl_gi_new_doit,
		.policy		= gpuvirt_gi_new_nl_policy,
		.maxattr	= GPUVIRT_A_GI_START,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUVIRT_CMD_GI_DEL,
		.doit		= gpuvirt_nl_gi_del_doit,
		.policy		= gpuvirt_gi_del_nl_policy,
		.maxattr	= GPUVIRT_A_GI_ID,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUVIRT_CMD_PT_GET,
		.doit		= gpuvirt_nl_pt_get_doit,
		.policy		= gpuvirt_pt_get_nl_policy,
		.maxattr	= GPUVIRT_A_PT_BDF,
		.flags		= GENL_ADMIN_PERM,
	},
};

static const struct genl_multicast_group gpuvirt_nl_mcgrps[] = {
	[GPUVIRT_NLGRP_MONITOR] = { "monitor", },
};

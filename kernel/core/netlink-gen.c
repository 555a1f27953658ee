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
static const struct nla_policy gpuvirt_gpu_get_do_nl_policy[GPUVIRT_A_GPU_ID + 1] = {
	[GPUVIRT_A_GPU_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_GPU_GET - dump */
static const struct nla_policy gpuvirt_gpu_get_dump_nl_policy[GPUVIRT_A_GPU_ID + 1] = {
	[GPUVIRT_A_GPU_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_TYPE_GET - do */
static const struct nla_policy gpuvirt_type_get_do_nl_policy[GPUVIRT_A_TYPE_GI_ID + 1] = {
	[GPUVIRT_A_TYPE_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_TYPE_NAME] = { .type = NLA_NUL_STRING, .len = 23, },
	[GPUVIRT_A_TYPE_GI_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_TYPE_GET - dump */
static const struct nla_policy gpuvirt_type_get_dump_nl_policy[GPUVIRT_A_TYPE_GI_ID + 1] = {
	[GPUVIRT_A_TYPE_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_TYPE_NAME] = { .type = NLA_NUL_STRING, .len = 23, },
	[GPUVIRT_A_TYPE_GI_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_VGPU_GET - do */
static const struct nla_policy gpuvirt_vgpu_get_do_nl_policy[GPUVIRT_A_VGPU_OMIT + 1] = {
	[GPUVIRT_A_VGPU_UUID] = { .type = NLA_NUL_STRING, .len = 36, },
	[GPUVIRT_A_VGPU_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_VGPU_OMIT] = NLA_POLICY_MASK(NLA_U32, 0x3),
};

/* GPUVIRT_CMD_VGPU_GET - dump */
static const struct nla_policy gpuvirt_vgpu_get_dump_nl_policy[GPUVIRT_A_VGPU_OMIT + 1] = {
	[GPUVIRT_A_VGPU_UUID] = { .type = NLA_NUL_STRING, .len = 36, },
	[GPUVIRT_A_VGPU_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_VGPU_OMIT] = NLA_POLICY_MASK(NLA_U32, 0x3),
};

/* GPUVIRT_CMD_VGPU_SET - do */
static const struct nla_policy gpuvirt_vgpu_set_nl_policy[GPUVIRT_A_VGPU_FRAME_RATE_LIMITER + 1] = {
	[GPUVIRT_A_VGPU_UUID] = { .type = NLA_NUL_STRING, .len = 36, },
	[GPUVIRT_A_VGPU_WEIGHT] = NLA_POLICY_RANGE(NLA_U32, 1, 10000),
	[GPUVIRT_A_VGPU_MIN_PCT] = NLA_POLICY_MAX(NLA_U32, 100),
	[GPUVIRT_A_VGPU_MAX_PCT] = NLA_POLICY_RANGE(NLA_U32, 1, 100),
	[GPUVIRT_A_VGPU_FRAME_RATE_LIMITER] = NLA_POLICY_MAX(NLA_U8, 1),
};

/* GPUVIRT_CMD_SCHED_GET - do */
static const struct nla_policy gpuvirt_sched_get_do_nl_policy[GPUVIRT_A_SCHED_GI_ID + 1] = {
	[GPUVIRT_A_SCHED_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_SCHED_GI_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_SCHED_GET - dump */
static const struct nla_policy gpuvirt_sched_get_dump_nl_policy[GPUVIRT_A_SCHED_GI_ID + 1] = {
	[GPUVIRT_A_SCHED_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_SCHED_GI_ID] = { .type = NLA_U32, },
};

/* GPUVIRT_CMD_SCHED_SET - do */
static const struct nla_policy gpuvirt_sched_set_nl_policy[GPUVIRT_A_SCHED_GI_ID + 1] = {
	[GPUVIRT_A_SCHED_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_SCHED_GI_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_SCHED_POLICY] = NLA_POLICY_MAX(NLA_U32, 3),
	[GPUVIRT_A_SCHED_TIMESLICE_US] = NLA_POLICY_FULL_RANGE(NLA_U32, &gpuvirt_a_sched_timeslice_us_range),
};

/* GPUVIRT_CMD_GPU_SET - do */
static const struct nla_policy gpuvirt_gpu_set_nl_policy[GPUVIRT_A_GPU_VGPU_MODEL + 1] = {
	[GPUVIRT_A_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_GPU_MODE] = NLA_POLICY_MAX(NLA_U32, 1),
	[GPUVIRT_A_GPU_VGPU_MODE] = NLA_POLICY_MAX(NLA_U32, 1),
	[GPUVIRT_A_GPU_VGPU_MODEL] = NLA_POLICY_MAX(NLA_U32, 1),
};

/* GPUVIRT_CMD_GI_GET - do */
static const struct nla_policy gpuvirt_gi_get_do_nl_policy[GPUVIRT_A_GI_ID + 1] = {
	[GPUVIRT_A_GI_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_GI_ID] = NLA_POLICY_MAX(NLA_U32, 6),
};

/* GPUVIRT_CMD_GI_GET - dump */
static const struct nla_policy gpuvirt_gi_get_dump_nl_policy[GPUVIRT_A_GI_ID + 1] = {
	[GPUVIRT_A_GI_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_GI_ID] = NLA_POLICY_MAX(NLA_U32, 6),
};

/* GPUVIRT_CMD_GI_NEW - do */
static const struct nla_policy gpuvirt_gi_new_nl_policy[GPUVIRT_A_GI_START + 1] = {
	[GPUVIRT_A_GI_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_GI_PROFILE] = { .type = NLA_NUL_STRING, .len = 15, },
	[GPUVIRT_A_GI_START] = NLA_POLICY_MAX(NLA_U32, 7),
};

/* GPUVIRT_CMD_GI_DEL - do */
static const struct nla_policy gpuvirt_gi_del_nl_policy[GPUVIRT_A_GI_ID + 1] = {
	[GPUVIRT_A_GI_GPU_ID] = { .type = NLA_U32, },
	[GPUVIRT_A_GI_ID] = NLA_POLICY_MAX(NLA_U32, 6),
};

/* GPUVIRT_CMD_PT_GET - do */
static const struct nla_policy gpuvirt_pt_get_nl_policy[GPUVIRT_A_PT_BDF + 1] = {
	[GPUVIRT_A_PT_BDF] = { .type = NLA_NUL_STRING, .len = 15, },
};

/* Ops table for gpuvirt */
const struct genl_split_ops gpuvirt_nl_ops[16] = {
	{
		.cmd		= GPUVIRT_CMD_GPU_GET,
		.pre_doit	= gpuvirt_nl_pre_doit_gpu,
		.doit		= gpuvirt_nl_gpu_get_doit,
		.post_doit	= gpuvirt_nl_post_doit_gpu,
		.policy		= gpuvirt_gpu_get_do_nl_policy,
		.maxattr	= GPUVIRT_A_GPU_ID,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_GPU_GET,
		.start		= gpuvirt_nl_dump_start,
		.dumpit		= gpuvirt_nl_gpu_get_dumpit,
		.policy		= gpuvirt_gpu_get_dump_nl_policy,
		.maxattr	= GPUVIRT_A_GPU_ID,
		.flags		= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= GPUVIRT_CMD_TYPE_GET,
		.pre_doit	= gpuvirt_nl_pre_doit_gpu,
		.doit		= gpuvirt_nl_type_get_doit,
		.post_doit	= gpuvirt_nl_post_doit_gpu,
		.policy		= gpuvirt_type_get_do_nl_policy,
		.maxattr	= GPUVIRT_A_TYPE_GI_ID,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_TYPE_GET,
		.start		= gpuvirt_nl_dump_start,
		.dumpit		= gpuvirt_nl_type_get_dumpit,
		.policy		= gpuvirt_type_get_dump_nl_policy,
		.maxattr	= GPUVIRT_A_TYPE_GI_ID,
		.flags		= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= GPUVIRT_CMD_VGPU_GET,
		.pre_doit	= gpuvirt_nl_pre_doit,
		.doit		= gpuvirt_nl_vgpu_get_doit,
		.post_doit	= gpuvirt_nl_post_doit,
		.policy		= gpuvirt_vgpu_get_do_nl_policy,
		.maxattr	= GPUVIRT_A_VGPU_OMIT,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_VGPU_GET,
		.start		= gpuvirt_nl_dump_start,
		.dumpit		= gpuvirt_nl_vgpu_get_dumpit,
		.policy		= gpuvirt_vgpu_get_dump_nl_policy,
		.maxattr	= GPUVIRT_A_VGPU_OMIT,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= GPUVIRT_CMD_VGPU_SET,
		.pre_doit	= gpuvirt_nl_pre_doit,
		.doit		= gpuvirt_nl_vgpu_set_doit,
		.post_doit	= gpuvirt_nl_post_doit,
		.policy		= gpuvirt_vgpu_set_nl_policy,
		.maxattr	= GPUVIRT_A_VGPU_FRAME_RATE_LIMITER,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_SCHED_GET,
		.pre_doit	= gpuvirt_nl_pre_doit_gpu,
		.doit		= gpuvirt_nl_sched_get_doit,
		.post_doit	= gpuvirt_nl_post_doit_gpu,
		.policy		= gpuvirt_sched_get_do_nl_policy,
		.maxattr	= GPUVIRT_A_SCHED_GI_ID,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_SCHED_GET,
		.start		= gpuvirt_nl_dump_start,
		.dumpit		= gpuvirt_nl_sched_get_dumpit,
		.policy		= gpuvirt_sched_get_dump_nl_policy,
		.maxattr	= GPUVIRT_A_SCHED_GI_ID,
		.flags		= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= GPUVIRT_CMD_SCHED_SET,
		.pre_doit	= gpuvirt_nl_pre_doit_gpu,
		.doit		= gpuvirt_nl_sched_set_doit,
		.post_doit	= gpuvirt_nl_post_doit_gpu,
		.policy		= gpuvirt_sched_set_nl_policy,
		.maxattr	= GPUVIRT_A_SCHED_GI_ID,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_GPU_SET,
		.pre_doit	= gpuvirt_nl_pre_doit_gpu,
		.doit		= gpuvirt_nl_gpu_set_doit,
		.post_doit	= gpuvirt_nl_post_doit_gpu,
		.policy		= gpuvirt_gpu_set_nl_policy,
		.maxattr	= GPUVIRT_A_GPU_VGPU_MODEL,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_GI_GET,
		.pre_doit	= gpuvirt_nl_pre_doit_gpu,
		.doit		= gpuvirt_nl_gi_get_doit,
		.post_doit	= gpuvirt_nl_post_doit_gpu,
		.policy		= gpuvirt_gi_get_do_nl_policy,
		.maxattr	= GPUVIRT_A_GI_ID,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_GI_GET,
		.start		= gpuvirt_nl_dump_start,
		.dumpit		= gpuvirt_nl_gi_get_dumpit,
		.policy		= gpuvirt_gi_get_dump_nl_policy,
		.maxattr	= GPUVIRT_A_GI_ID,
		.flags		= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= GPUVIRT_CMD_GI_NEW,
		.pre_doit	= gpuvirt_nl_pre_doit_gpu,
		.doit		= gpuvirt_nl_gi_new_doit,
		.post_doit	= gpuvirt_nl_post_doit_gpu,
		.policy		= gpuvirt_gi_new_nl_policy,
		.maxattr	= GPUVIRT_A_GI_START,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_GI_DEL,
		.pre_doit	= gpuvirt_nl_pre_doit_gpu,
		.doit		= gpuvirt_nl_gi_del_doit,
		.post_doit	= gpuvirt_nl_post_doit_gpu,
		.policy		= gpuvirt_gi_del_nl_policy,
		.maxattr	= GPUVIRT_A_GI_ID,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= GPUVIRT_CMD_PT_GET,
		.pre_doit	= gpuvirt_nl_pre_doit,
		.doit		= gpuvirt_nl_pt_get_doit,
		.post_doit	= gpuvirt_nl_post_doit,
		.policy		= gpuvirt_pt_get_nl_policy,
		.maxattr	= GPUVIRT_A_PT_BDF,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group gpuvirt_nl_mcgrps[] = {
	[GPUVIRT_NLGRP_MONITOR] = { "monitor", },
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: multicast groups can require CAP_NET_ADMIN to join
 * (GENL_MCAST_CAP_NET_ADMIN, v6.6, backported to some stable kernels).
 */
#include <net/genetlink.h>

const struct genl_multicast_group probe_grp = {
	.name = "probe",
	.flags = GENL_MCAST_CAP_NET_ADMIN,
};

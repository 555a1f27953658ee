// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: NLA_POLICY_FULL_RANGE() takes a pointer to a const range, as the
 * YNL generator emits it. v6.1 declares the policy's range pointer
 * non-const.
 */
#include <net/netlink.h>

static const struct netlink_range_validation probe_range = { .max = 1 };

const struct nla_policy probe_policy[] = {
	[1] = NLA_POLICY_FULL_RANGE(NLA_U32, &probe_range),
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: extack messages can be formatted into a buffer of the extack
 * itself (NL_SET_ERR_MSG_FMT, v6.2).
 */
#include <linux/netlink.h>

void probe_fmt(struct netlink_ext_ack *extack, int n);
void probe_fmt(struct netlink_ext_ack *extack, int n)
{
	NL_SET_ERR_MSG_FMT(extack, "probe %d", n);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: a dump's parsed attributes are in genl_dumpit_info's embedded
 * genl_info (v6.2 on); v6.1 has them as genl_dumpit_info::attrs.
 */
#include <net/genetlink.h>

struct nlattr **probe_attrs(struct netlink_callback *cb);

struct nlattr **probe_attrs(struct netlink_callback *cb)
{
	return genl_dumpit_info(cb)->info.attrs;
}

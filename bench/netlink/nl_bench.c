// SPDX-License-Identifier: GPL-2.0-only
/*
 * nl_bench: the cost of a vGPU dump over the gpuvirt netlink family, next
 * to a trivial request (gpu-get of one GPU) timed in the same run.
 *
 * Usage: nl_bench [-r ROUNDS]
 *
 * Prints "bench:" lines: the mean time of one trivial round trip, the mean
 * time of a dump of every vGPU, the number of vGPUs it returned, and the
 * ratio of the two. Run as root (vgpu-get is for CAP_NET_ADMIN).
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "gv_nl.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(*(unsigned int *)data)++;
	return MNL_CB_OK;
}

int main(int argc, char **argv)
{
	unsigned int rounds = 20, i, n = 0, trivial = 500;
	uint64_t t0, rt, dump;
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;
	struct nl nl;
	int opt;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r' || !(rounds = strtoul(optarg, NULL, 0))) {
			fprintf(stderr, "usage: nl_bench [-r ROUNDS]\n");
			return 2;
		}
	}
	if (nl_open(&nl)) {
		perror("nl_bench: the gpuvirt family");
		return 1;
	}

	t0 = now_ns();
	for (i = 0; i < trivial; i++) {
		nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_GPU_GET, 0);
		mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, 0);
		if (nl_talk(&nl, nlh, count_cb, &n)) {
			fprintf(stderr, "nl_bench: gpu-get: %s\n", nl.ext_msg);
			return 1;
		}
	}
	rt = (now_ns() - t0) / trivial;

	t0 = now_ns();
	for (i = 0; i < rounds; i++) {
		n = 0;
		nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_VGPU_GET,
			       NLM_F_DUMP);
		if (nl_talk(&nl, nlh, count_cb, &n)) {
			fprintf(stderr, "nl_bench: vgpu-get dump: %s\n", nl.ext_msg);
			return 1;
		}
	}
	dump = (now_ns() - t0) / rounds;

	printf("bench: nl_roundtrip_us %.1f\n", rt / 1e3);
	printf("bench: nl_vgpu_dump vgpus %u ms %.2f ratio_vs_roundtrip %.1f\n",
	       n, dump / 1e6, (double)dump / rt);
	nl_close(&nl);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * nl_bench: the cost of a vGPU dump over the gpuvirt netlink family, next
 * to a trivial request (gpu-get of one GPU) timed in the same run.
 *
 * Usage: nl_bench [-r ROUNDS] [-t TRIVIAL] [-O MASK]
 *
 * Each round times TRIVIAL (25) gpu-get round trips and one vgpu-get dump
 * of every vGPU, in an order that alternates from one round to the next,
 * so that drift in the machine's speed hits both alike (bench/README.md,
 * Rules). Prints "bench:" lines: the mean time of one trivial round trip,
 * the mean time of a dump, the number of vGPUs it returned, the ratio of
 * the two means, and the median of the per-round ratios with their
 * min..max; and how many reads (one skb each) and bytes a dump took.
 * With -O, the dump asks to leave out the parts of each vGPU that MASK
 * names (GPUVIRT_VGPU_OMIT_*, the attribute omit), and its lines say so:
 * "nl_vgpu_dump omit MASK ...".
 * Run as root (vgpu-get is for CAP_NET_ADMIN).
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "gv_nl.h"

#define MAX_ROUNDS	1000

struct dump_count {
	unsigned int msgs;
	unsigned int reads;
	uint64_t bytes;
};

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

static int trivial_batch(struct nl *nl, unsigned int n, uint64_t *ns)
{
	unsigned int i, msgs = 0;
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;
	uint64_t t0 = now_ns();

	for (i = 0; i < n; i++) {
		nlh = genl_req(nl, buf, nl->family, GPUVIRT_CMD_GPU_GET, 0);
		mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, 0);
		if (nl_talk(nl, nlh, count_cb, &msgs)) {
			fprintf(stderr, "nl_bench: gpu-get: %s\n", nl->ext_msg);
			return -1;
		}
	}
	*ns += now_ns() - t0;
	return 0;
}

static int one_dump(struct nl *nl, struct dump_count *dc, uint32_t omit,
		    uint64_t *ns)
{
	unsigned int reads = nl->reads;
	uint64_t bytes = nl->bytes;
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;
	uint64_t t0 = now_ns();

	memset(dc, 0, sizeof(*dc));
	nlh = genl_req(nl, buf, nl->family, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP);
	if (omit)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_OMIT, omit);
	if (nl_talk(nl, nlh, count_cb, &dc->msgs)) {
		fprintf(stderr, "nl_bench: vgpu-get dump: %s\n", nl->ext_msg);
		return -1;
	}
	dc->reads = nl->reads - reads;
	dc->bytes = nl->bytes - bytes;
	*ns += now_ns() - t0;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned int rounds = 20, trivial = 25, i, reads_min = ~0u, reads_max = 0;
	uint64_t rt = 0, dump = 0, bytes = 0, r_rt, r_dump;
	static double ratio[MAX_ROUNDS];
	struct dump_count dc = { 0 };
	char what[32] = "";
	uint32_t omit = 0;
	struct nl nl;
	int opt;

	while ((opt = getopt(argc, argv, "r:t:O:")) != -1) {
		unsigned long v = optarg ? strtoul(optarg, NULL, 0) : 0;

		if ((opt != 'r' && opt != 't' && opt != 'O') || !v ||
		    (opt == 'r' && v > MAX_ROUNDS) ||
		    (opt == 'O' && v > UINT32_MAX)) {
			fprintf(stderr, "usage: nl_bench [-r ROUNDS] [-t TRIVIAL] [-O MASK]\n");
			return 2;
		}
		if (opt == 'r')
			rounds = v;
		else if (opt == 't')
			trivial = v;
		else
			omit = v;
	}
	if (omit)
		snprintf(what, sizeof(what), " omit %u", omit);
	if (nl_open(&nl)) {
		perror("nl_bench: the gpuvirt family");
		return 1;
	}
	/* one of each untimed: the socket learns its read size, caches warm */
	r_rt = r_dump = 0;
	if (trivial_batch(&nl, 1, &r_rt) || one_dump(&nl, &dc, omit, &r_dump))
		return 1;

	for (i = 0; i < rounds; i++) {
		r_rt = r_dump = 0;
		if (i & 1) {
			if (one_dump(&nl, &dc, omit, &r_dump) ||
			    trivial_batch(&nl, trivial, &r_rt))
				return 1;
		} else {
			if (trivial_batch(&nl, trivial, &r_rt) ||
			    one_dump(&nl, &dc, omit, &r_dump))
				return 1;
		}
		rt += r_rt;
		dump += r_dump;
		bytes += dc.bytes;
		if (dc.reads < reads_min)
			reads_min = dc.reads;
		if (dc.reads > reads_max)
			reads_max = dc.reads;
		ratio[i] = (double)r_dump * trivial / r_rt;
		printf("raw: nl_bench%s round %u rt_us %.1f dump_ms %.2f ratio %.1f reads %u bytes %llu\n",
		       what, i, r_rt / 1e3 / trivial, r_dump / 1e6, ratio[i], dc.reads,
		       (unsigned long long)dc.bytes);
	}
	rt /= (uint64_t)rounds * trivial;
	dump /= rounds;
	qsort(ratio, rounds, sizeof(ratio[0]), cmp_double);

	printf("bench: nl_roundtrip_us %.1f\n", rt / 1e3);
	printf("bench: nl_vgpu_dump%s vgpus %u ms %.2f ratio_vs_roundtrip %.1f median %.1f min..max %.1f..%.1f reads %u..%u bytes %llu\n",
	       what, dc.msgs, dump / 1e6, (double)dump / rt, ratio[rounds / 2],
	       ratio[0], ratio[rounds - 1], reads_min, reads_max,
	       (unsigned long long)(bytes / rounds));
	nl_close(&nl);
	return 0;
}

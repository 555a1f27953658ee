// SPDX-License-Identifier: GPL-2.0-only
/*
 * migration_bench: vGPU live migration through VFIO migration v2, between
 * two vGPUs of one type, as QEMU drives it (see bench/migration/README.md).
 *
 *  stream_ratio_<MiB>   stream bytes / VRAM bytes touched on the source
 *  stop_copy_<MiB>      time from STOP_COPY to the end of the stream, and
 *                       the same with the destination taking it (RESUMING
 *                       -> STOP), over a memcpy of the touched bytes (from
 *                       the source's BAR2 mapping) in the same round
 *  precopy_<rate>       pre-copy passes under a writer dirtying <rate>
 *                       pages/s of a 64 MiB working set: dirty bytes left
 *                       after each pass, and the stop-copy stream left at
 *                       the end over the touched bytes
 *  precopy_downtime_<rate>  the stop-copy time after those passes (the VM
 *                       stopped, from STOP_COPY to the destination's
 *                       RESUMING -> STOP) over a memcpy of the 64 MiB
 *                       working set in the same round
 *
 * Usage: migration_bench UUID_SRC UUID_DST [-r ROUNDS] [-s MIB,MIB...]
 *                        [-p RATE,RATE...]
 * Prints "bench:" and "raw:" lines; nothing passes or fails on time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vgpu_client.h"

#ifndef VFIO_MIGRATION_PRE_COPY
#define VFIO_MIGRATION_PRE_COPY		(1 << 2)
#define VFIO_DEVICE_STATE_PRE_COPY	6
#define VFIO_DEVICE_STATE_PRE_COPY_P2P	7
struct vfio_precopy_info {
	__u32 argsz;
	__u32 flags;
	__aligned_u64 initial_bytes;
	__aligned_u64 dirty_bytes;
};
#define VFIO_MIG_GET_PRECOPY_INFO	_IO(VFIO_TYPE, VFIO_BASE + 21)
#endif

#define CHUNK		(1u << 20)
#define MAX_ROUNDS	64
#define MAX_RATES	8
#define WSET_MIB	64	/* the pre-copy working set */

static uint8_t chunk[CHUNK];

static void die(const char *what)
{
	fprintf(stderr, "migration_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int mig_set(int fd, uint32_t state, int *data_fd)
{
	char buf[sizeof(struct vfio_device_feature) +
		 sizeof(struct vfio_device_feature_mig_state)];
	struct vfio_device_feature *f = (void *)buf;
	struct vfio_device_feature_mig_state *st = (void *)f->data;

	f->argsz = sizeof(buf);
	f->flags = VFIO_DEVICE_FEATURE_SET | VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE;
	st->device_state = state;
	st->data_fd = -1;
	if (ioctl(fd, VFIO_DEVICE_FEATURE, f))
		return -errno;
	if (data_fd)
		*data_fd = st->data_fd;
	else if (st->data_fd >= 0)
		close(st->data_fd);
	return 0;
}

static bool has_pre_copy(int fd)
{
	char buf[sizeof(struct vfio_device_feature) +
		 sizeof(struct vfio_device_feature_migration)];
	struct vfio_device_feature *f = (void *)buf;
	struct vfio_device_feature_migration *m = (void *)f->data;

	f->argsz = sizeof(buf);
	f->flags = VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_MIGRATION;
	if (ioctl(fd, VFIO_DEVICE_FEATURE, f))
		die("VFIO_DEVICE_FEATURE_MIGRATION");
	return m->flags & VFIO_MIGRATION_PRE_COPY;
}

/*
 * Move what @src has now, at most @max bytes, to @dst (-1: drop it), as
 * QEMU's migration channel would; returns the bytes moved. Stops at EOF,
 * ENOMSG or @max.
 */
static uint64_t pump(int src, int dst, uint64_t max)
{
	uint64_t total = 0;
	ssize_t n, w, off;

	while (total < max) {
		n = read(src, chunk, max - total < CHUNK ? max - total : CHUNK);
		if (n < 0 && errno == ENOMSG)
			return total;
		if (n < 0)
			die("read the save file");
		if (!n)
			return total;
		for (off = 0; dst >= 0 && off < n; off += w) {
			w = write(dst, chunk + off, n - off);
			if (w < 0)
				die("write the resume file");
		}
		total += n;
	}
	return total;
}

/* Touch @mib MiB of the slice (every page written) through @vram. */
static void touch(uint8_t *vram, unsigned int mib, uint8_t seed)
{
	size_t i;

	for (i = 0; i < (size_t)mib << 20; i += 4096)
		memset(vram + i, seed + (i >> 12), 4096);
}

/*
 * Fault in every page of @vram's first @len bytes (read), so that a timed
 * copy from it costs the copy: pre-copy revokes the CPU mappings.
 */
static void prefault(const uint8_t *vram, size_t len)
{
	volatile uint8_t sink = 0;
	size_t i;

	for (i = 0; i < len; i += 4096)
		sink ^= vram[i];
	(void)sink;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *name, double *r, int n, const char *what)
{
	double s[MAX_ROUNDS];

	memcpy(s, r, n * sizeof(*r));
	qsort(s, n, sizeof(*s), cmp_dbl);
	printf("bench: %s ratio=%.3f (median of %d rounds, %.3f..%.3f) [%s]\n",
	       name, s[n / 2], n, s[0], s[n - 1], what);
}

/* One save of @a (stopped) into @b (-1: none); returns the stream bytes. */
static uint64_t save(int a, int b, uint64_t *ns)
{
	int dfd = -1, rfd = -1;
	uint64_t t0, bytes;

	if (mig_set(a, VFIO_DEVICE_STATE_STOP, NULL))
		die("source to STOP");
	if (b >= 0 && mig_set(b, VFIO_DEVICE_STATE_RESUMING, &rfd))
		die("destination to RESUMING");
	t0 = now_ns();
	if (mig_set(a, VFIO_DEVICE_STATE_STOP_COPY, &dfd))
		die("source to STOP_COPY");
	bytes = pump(dfd, rfd, UINT64_MAX);
	if (b >= 0 && mig_set(b, VFIO_DEVICE_STATE_STOP, NULL))
		die("destination RESUMING -> STOP");
	*ns = now_ns() - t0;
	close(dfd);
	if (rfd >= 0)
		close(rfd);
	if (mig_set(a, VFIO_DEVICE_STATE_RUNNING, NULL) ||
	    (b >= 0 && mig_set(b, VFIO_DEVICE_STATE_RUNNING, NULL)))
		die("back to RUNNING");
	return bytes;
}

static void bench_stop_copy(int a, int b, uint8_t *va, unsigned int mib,
			    int rounds)
{
	double ratio[MAX_ROUNDS], sr[MAX_ROUNDS], rr[MAX_ROUNDS];
	size_t len = (size_t)mib << 20;
	uint8_t *y = malloc(len);
	uint64_t bytes = 0, t_save, t_both, t_mem, t0;
	char name[64];
	int i;

	if (!y)
		die("malloc");
	memset(y, 2, len);
	touch(va, mib, 0x10);
	for (i = 0; i < rounds; i++) {
		/* alternate the order so that slow drift cancels out */
		if (i & 1) {
			bytes = save(a, -1, &t_save);
			bytes = save(a, b, &t_both);
		}
		t0 = now_ns();
		memcpy(y, va, len);	/* the same bytes, through the mapping */
		t_mem = now_ns() - t0;
		if (!(i & 1)) {
			bytes = save(a, -1, &t_save);
			bytes = save(a, b, &t_both);
		}
		ratio[i] = (double)bytes / len;
		sr[i] = (double)t_save / t_mem;
		rr[i] = (double)t_both / t_mem;
		printf("raw: stop_copy_%u round %d bytes %llu save_ns %llu save_resume_ns %llu memcpy_ns %llu\n",
		       mib, i, (unsigned long long)bytes,
		       (unsigned long long)t_save, (unsigned long long)t_both,
		       (unsigned long long)t_mem);
	}
	snprintf(name, sizeof(name), "stream_ratio_%u", mib);
	report(name, ratio, rounds, "stream bytes / VRAM touched; goal <= 1.05");
	snprintf(name, sizeof(name), "stop_copy_%u", mib);
	report(name, sr, rounds, "STOP_COPY to EOF / memcpy of the touched bytes");
	snprintf(name, sizeof(name), "stop_copy_resume_%u", mib);
	report(name, rr, rounds, "STOP_COPY to EOF into RESUMING -> STOP / memcpy");
	touch(va, mib, 0);	/* leave it as it was: written, zero pattern */
	free(y);
}

/* A writer that dirties @rate random pages a second of a working set. */
struct writer {
	uint8_t *vram;
	unsigned int pages;
	unsigned int rate;
	volatile bool stop;
	uint64_t writes;
	uint64_t t0;
};

static void *writer_run(void *arg)
{
	struct writer *w = arg;
	uint64_t due;
	unsigned int seed = 1;

	while (!w->stop) {
		due = w->t0 + w->writes * 1000000000ull / w->rate;
		if (now_ns() < due) {
			usleep(200);
			continue;
		}
		w->vram[(size_t)(rand_r(&seed) % w->pages) * 4096] ^= 1;
		w->writes++;
	}
	return NULL;
}

/* What one migration with pre-copy did. */
struct precopy_run {
	int passes;
	uint64_t sent;		/* bytes in pre-copy */
	uint64_t stop_bytes;	/* bytes in stop-copy */
	uint64_t down_ns;	/* STOP_COPY to the destination's STOP */
	double write_rate;	/* pages/s the writer reached */
};

/*
 * One migration of the working set from @a into @b as QEMU runs it with
 * pre-copy, under a writer of @rate pages/s: PRE_COPY passes, each reading
 * what VFIO_MIG_GET_PRECOPY_INFO said was pending before it (initial and
 * dirty bytes; the read stops early at ENOMSG), until the initial data is
 * gone and at most 256 KiB is dirty, or 10 passes. A pass is bounded as
 * QEMU's reads are: a writer that dirties pages faster than they are read
 * never lets the save file run dry. Then the VM stops (the writer, its
 * vCPU, first), PRE_COPY_P2P, and the downtime: STOP_COPY, the rest of the
 * stream into the destination, and its RESUMING -> STOP.
 */
static void precopy_once(int a, int b, uint8_t *va, unsigned int rate,
			 int round, struct precopy_run *r)
{
	struct vfio_precopy_info pi = { .argsz = sizeof(pi) };
	struct writer w = { .vram = va, .pages = WSET_MIB * 256, .rate = rate };
	uint64_t t0, t_write = 0;
	pthread_t th;
	int dfd = -1, rfd = -1, pass;

	memset(r, 0, sizeof(*r));
	touch(va, WSET_MIB, 0x20);
	if (mig_set(b, VFIO_DEVICE_STATE_RESUMING, &rfd))
		die("destination to RESUMING");
	w.t0 = now_ns();
	if (rate && pthread_create(&th, NULL, writer_run, &w))
		die("writer");
	if (mig_set(a, VFIO_DEVICE_STATE_PRE_COPY, &dfd))
		die("source to PRE_COPY");
	for (pass = 0;; pass++) {
		if (ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi))
			die("VFIO_MIG_GET_PRECOPY_INFO");
		if (pass)
			printf("raw: precopy_%u round %d pass %d sent %llu initial %llu dirty %llu\n",
			       rate, round, pass - 1, (unsigned long long)r->sent,
			       (unsigned long long)pi.initial_bytes,
			       (unsigned long long)pi.dirty_bytes);
		if ((pass && !pi.initial_bytes && pi.dirty_bytes <= (256u << 10)) ||
		    pass == 10)
			break;
		if (pass)
			usleep(20000);	/* QEMU's channel is not instant either */
		r->sent += pump(dfd, rfd, pi.initial_bytes + pi.dirty_bytes);
	}
	r->passes = pass;
	w.stop = true;
	if (rate) {
		pthread_join(th, NULL);
		t_write = now_ns() - w.t0;
		r->write_rate = (double)w.writes * 1e9 / t_write;
	}
	if (mig_set(a, VFIO_DEVICE_STATE_PRE_COPY_P2P, NULL))
		die("source to PRE_COPY_P2P");
	t0 = now_ns();
	if (mig_set(a, VFIO_DEVICE_STATE_STOP_COPY, NULL))
		die("source to STOP_COPY");
	r->stop_bytes = pump(dfd, rfd, UINT64_MAX);
	if (mig_set(b, VFIO_DEVICE_STATE_STOP, NULL))
		die("destination RESUMING -> STOP");
	r->down_ns = now_ns() - t0;
	close(dfd);
	close(rfd);
	if (mig_set(a, VFIO_DEVICE_STATE_RUNNING, NULL) ||
	    mig_set(b, VFIO_DEVICE_STATE_RUNNING, NULL))
		die("back to RUNNING");
}

static void bench_precopy(int a, int b, uint8_t *va, unsigned int rate,
			  int rounds)
{
	double down[MAX_ROUNDS], bytes[MAX_ROUNDS], wr[MAX_ROUNDS],
	       passes[MAX_ROUNDS];
	size_t len = (size_t)WSET_MIB << 20;
	uint8_t *y = malloc(len);
	struct precopy_run r;
	uint64_t t0, t_mem;
	char name[64];
	int i;

	if (!y)
		die("malloc");
	memset(y, 2, len);
	for (i = 0; i < rounds; i++) {
		/* alternate the order so that slow drift cancels out */
		if (i & 1)
			precopy_once(a, b, va, rate, i, &r);
		prefault(va, len);
		t0 = now_ns();
		memcpy(y, va, len);	/* the working set, through the mapping */
		t_mem = now_ns() - t0;
		if (!(i & 1))
			precopy_once(a, b, va, rate, i, &r);
		down[i] = (double)r.down_ns / t_mem;
		bytes[i] = (double)r.stop_bytes / len;
		wr[i] = r.write_rate;
		passes[i] = r.passes;
		printf("raw: precopy_%u round %d passes %d precopy_bytes %llu stop_copy_bytes %llu downtime_ns %llu memcpy_ns %llu writes_per_s %.0f\n",
		       rate, i, r.passes, (unsigned long long)r.sent,
		       (unsigned long long)r.stop_bytes,
		       (unsigned long long)r.down_ns,
		       (unsigned long long)t_mem, r.write_rate);
	}
	snprintf(name, sizeof(name), "precopy_downtime_%u", rate);
	report(name, down, rounds,
	       "STOP_COPY to the destination's RESUMING -> STOP, after pre-copy / memcpy of the 64 MiB working set");
	snprintf(name, sizeof(name), "precopy_stop_bytes_%u", rate);
	report(name, bytes, rounds, "stop-copy bytes / 64 MiB touched");
	qsort(wr, rounds, sizeof(*wr), cmp_dbl);
	qsort(passes, rounds, sizeof(*passes), cmp_dbl);
	printf("bench: precopy_%u passes=%.0f writes_per_s=%.0f [medians of %d rounds: pre-copy passes, pages/s the writer reached]\n",
	       rate, passes[rounds / 2], wr[rounds / 2], rounds);
	free(y);
}

static int open_dev(struct vfio_user *u, const char *uuid)
{
	int err = vgpu_client_open(u, uuid);

	if (err) {
		errno = -err;
		die(uuid);
	}
	return u->device;
}

int main(int argc, char **argv)
{
	char sizes[128] = "64,1024", rlist[128] = "0,100,1000,10000,100000";
	unsigned int i, max_mib = 0, mib[8], nsz = 0, rates[MAX_RATES], nr = 0;
	char *tok, *save_ptr;
	struct vfio_user ua, ub;
	int a, b, opt, rounds = 5;
	uint8_t *va;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "r:s:p:")) != -1) {
		if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 's')
			snprintf(sizes, sizeof(sizes), "%s", optarg);
		else if (opt == 'p')
			snprintf(rlist, sizeof(rlist), "%s", optarg);
		else
			return 2;
	}
	if (argc - optind != 2 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: migration_bench UUID_SRC UUID_DST [-r ROUNDS] [-s MIB,...] [-p RATE,...]\n");
		return 2;
	}
	for (tok = strtok_r(rlist, ",", &save_ptr); tok && nr < MAX_RATES;
	     tok = strtok_r(NULL, ",", &save_ptr))
		rates[nr++] = atoi(tok);
	for (tok = strtok_r(sizes, ",", &save_ptr); tok && nsz < 8;
	     tok = strtok_r(NULL, ",", &save_ptr)) {
		mib[nsz] = atoi(tok);
		if (!mib[nsz] || mib[nsz] > 4096)
			return 2;
		if (mib[nsz] > max_mib)
			max_mib = mib[nsz];
		nsz++;
	}
	if (max_mib < WSET_MIB)
		max_mib = WSET_MIB;
	a = open_dev(&ua, argv[optind]);
	b = open_dev(&ub, argv[optind + 1]);
	va = mmap(NULL, (size_t)max_mib << 20, PROT_READ | PROT_WRITE,
		  MAP_SHARED, a, VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX));
	if (va == MAP_FAILED)
		die("map the source's BAR2");

	/*
	 * Pre-copy first, while only its 64 MiB working set is backed: pages
	 * once written stay backed (a reset zeroes them in place), and every
	 * backed page is part of the stream.
	 */
	if (has_pre_copy(a))
		for (i = 0; i < nr; i++)
			bench_precopy(a, b, va, rates[i], rounds);
	else
		printf("bench: precopy not run: this kernel has no VFIO pre-copy\n");
	for (i = 0; i < nsz; i++)
		bench_stop_copy(a, b, va, mib[i],
				mib[i] >= 512 ? (rounds + 1) / 2 : rounds);
	vgpu_client_close(&ub);
	vgpu_client_close(&ua);
	return 0;
}

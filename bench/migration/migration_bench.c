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
 *
 * Usage: migration_bench UUID_SRC UUID_DST [-r ROUNDS] [-s MIB,MIB...]
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
 * Move what @src has now to @dst (-1: drop it), as QEMU's migration
 * channel would; returns the bytes moved. Stops at EOF or ENOMSG.
 */
static uint64_t pump(int src, int dst)
{
	uint64_t total = 0;
	ssize_t n, w, off;

	for (;;) {
		n = read(src, chunk, CHUNK);
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
}

/* Touch @mib MiB of the slice (every page written) through @vram. */
static void touch(uint8_t *vram, unsigned int mib, uint8_t seed)
{
	size_t i;

	for (i = 0; i < (size_t)mib << 20; i += 4096)
		memset(vram + i, seed + (i >> 12), 4096);
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
	bytes = pump(dfd, rfd);
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
};

static void *writer_run(void *arg)
{
	struct writer *w = arg;
	uint64_t t0 = now_ns(), due;
	unsigned int seed = 1;

	while (!w->stop) {
		due = t0 + w->writes * 1000000000ull / w->rate;
		if (now_ns() < due) {
			usleep(200);
			continue;
		}
		w->vram[(size_t)(rand_r(&seed) % w->pages) * 4096] ^= 1;
		w->writes++;
	}
	return NULL;
}

static void bench_precopy(int a, int b, uint8_t *va, unsigned int rate)
{
	struct vfio_precopy_info pi = { .argsz = sizeof(pi) };
	struct writer w = { .vram = va, .pages = 64 * 256, .rate = rate };
	uint64_t sent = 0, stop_bytes, t0, t_stop;
	pthread_t th;
	int dfd = -1, rfd = -1, pass;

	touch(va, 64, 0x20);
	if (mig_set(b, VFIO_DEVICE_STATE_RESUMING, &rfd))
		die("destination to RESUMING");
	if (rate && pthread_create(&th, NULL, writer_run, &w))
		die("writer");
	if (mig_set(a, VFIO_DEVICE_STATE_PRE_COPY, &dfd))
		die("source to PRE_COPY");
	for (pass = 0; pass < 10; pass++) {
		sent += pump(dfd, rfd);
		if (ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi))
			die("VFIO_MIG_GET_PRECOPY_INFO");
		printf("raw: precopy_%u pass %d sent %llu initial %llu dirty %llu\n",
		       rate, pass, (unsigned long long)sent,
		       (unsigned long long)pi.initial_bytes,
		       (unsigned long long)pi.dirty_bytes);
		if (!pi.initial_bytes && pi.dirty_bytes <= (256u << 10))
			break;
		usleep(20000);	/* QEMU's channel is not instant either */
	}
	t0 = now_ns();
	if (mig_set(a, VFIO_DEVICE_STATE_PRE_COPY_P2P, NULL) ||
	    mig_set(a, VFIO_DEVICE_STATE_STOP_COPY, NULL))
		die("source to STOP_COPY");
	w.stop = true;
	stop_bytes = pump(dfd, rfd);
	if (mig_set(b, VFIO_DEVICE_STATE_STOP, NULL))
		die("destination RESUMING -> STOP");
	t_stop = now_ns() - t0;
	if (rate)
		pthread_join(th, NULL);
	close(dfd);
	close(rfd);
	if (mig_set(a, VFIO_DEVICE_STATE_RUNNING, NULL) ||
	    mig_set(b, VFIO_DEVICE_STATE_RUNNING, NULL))
		die("back to RUNNING");
	printf("bench: precopy_%u passes=%d precopy_bytes=%llu stop_copy_bytes=%llu stop_copy_ratio=%.4f stop_copy_ns=%llu writes=%llu [stop-copy bytes / 64 MiB touched]\n",
	       rate, pass + 1, (unsigned long long)sent,
	       (unsigned long long)stop_bytes,
	       (double)stop_bytes / (64u << 20), (unsigned long long)t_stop,
	       (unsigned long long)w.writes);
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
	static const unsigned int rates[] = { 0, 100, 1000, 10000 };
	char sizes[128] = "64,1024", *tok, *save_ptr;
	unsigned int i, max_mib = 0, mib[8], nsz = 0;
	struct vfio_user ua, ub;
	int a, b, opt, rounds = 5;
	uint8_t *va;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "r:s:")) != -1) {
		if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 's')
			snprintf(sizes, sizeof(sizes), "%s", optarg);
		else
			return 2;
	}
	if (argc - optind != 2 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: migration_bench UUID_SRC UUID_DST [-r ROUNDS] [-s MIB,...]\n");
		return 2;
	}
	for (tok = strtok_r(sizes, ",", &save_ptr); tok && nsz < 8;
	     tok = strtok_r(NULL, ",", &save_ptr)) {
		mib[nsz] = atoi(tok);
		if (!mib[nsz] || mib[nsz] > 4096)
			return 2;
		if (mib[nsz] > max_mib)
			max_mib = mib[nsz];
		nsz++;
	}
	if (max_mib < 64)
		max_mib = 64;	/* the pre-copy working set */
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
		for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
			bench_precopy(a, b, va, rates[i]);
	else
		printf("bench: precopy not run: this kernel has no VFIO pre-copy\n");
	for (i = 0; i < nsz; i++)
		bench_stop_copy(a, b, va, mib[i],
				mib[i] >= 512 ? (rounds + 1) / 2 : rounds);
	vgpu_client_close(&ub);
	vgpu_client_close(&ua);
	return 0;
}

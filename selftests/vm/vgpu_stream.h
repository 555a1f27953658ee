/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A vGPU migration stream in userspace: the format of
 * Documentation/vgpu/vgpu-abi.rst ("Migration"), a parser that splits a
 * stream into its records, field access to the device state (the STATE
 * record), the CRC the END record carries, and the VFIO migration v2 calls
 * that save a stream from a vGPU and resume one into another.
 *
 * For tests that capture a real stream, patch it and resume it: parse it
 * with gvs_parse(), find the STATE payload (gvs_view.state_off), patch a
 * field with gvs_put(buf, state_off + GVS_HEAD(0, active.base), 8, value),
 * then gvs_seal() the stream to recompute the CRC and gvs_resume() it.
 *
 * The STATE layout is that of struct gpuvirt_vgpu_saved (kernel/core/vgpu.c)
 * and struct gpuvirt_display_saved (kernel/core/display.h); the kernel
 * checks its size against the header's state_size, and so does
 * gvs_parse() against GVS_STATE_SIZE. Everything is little-endian on the
 * wire; these helpers read and write fields byte by byte, so they work on a
 * stream at any alignment.
 */
#ifndef GPUVIRT_VGPU_STREAM_H
#define GPUVIRT_VGPU_STREAM_H

#include <errno.h>
#include <linux/vfio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The stream header ("GVLM", format version 1). */
#define GVS_MAGIC		0x4d4c5647
#define GVS_VERSION		1
#define GVS_HDR_SIZE		64
#define GVS_REC_SIZE		16
#define GVS_PAGE_SIZE		4096
#define GVS_TYPE_MAX		32

/* Offsets of the header's fields. */
#define GVS_HDR_MAGIC		0	/* 4 */
#define GVS_HDR_VERSION		4	/* 2 */
#define GVS_HDR_HDR_SIZE	6	/* 2 */
#define GVS_HDR_FB_SIZE		8	/* 8 */
#define GVS_HDR_PAGE_SIZE	16	/* 4 */
#define GVS_HDR_STATE_SIZE	20	/* 4 */
#define GVS_HDR_TYPE		24	/* GVS_TYPE_MAX, NUL-padded */
#define GVS_HDR_RESERVED	56	/* 8 */

/* Record tags; a record is tag (4), payload length (4), argument (8). */
enum {
	GVS_REC_PAGE = 1,	/* arg: page index in the slice; payload: it */
	GVS_REC_ZERO,		/* arg: page index; no payload */
	GVS_REC_STATE,		/* payload: the device state */
	GVS_REC_END,		/* arg: CRC of every byte before the record */
};

/*
 * The device state. Byte offsets of its fields, relative to the STATE
 * payload; each head's block is GVS_HEAD_SIZE bytes from GVS_ST_HEADS on.
 */
#define GVS_CFG_SIZE		256
#define GVS_ST_CFG		0
#define GVS_ST_SCRATCH		256
#define GVS_ST_IRQ_STATUS	260
#define GVS_ST_RING_SIZE	264
#define GVS_ST_RING_HEAD	268
#define GVS_ST_RING_TAIL	272
#define GVS_ST_RING_FENCE	276
#define GVS_ST_RING_ERROR	280
#define GVS_ST_RING_ERROR_HEAD	284
#define GVS_ST_CMD_ACTIVE	288
#define GVS_ST_CMD_DWORDS	292
#define GVS_ST_CMD_HEADER	296
#define GVS_ST_CMD_SEQNO	300
#define GVS_ST_CMD_OP		304
#define GVS_ST_RESERVED		308
#define GVS_ST_RING_BASE	312	/* 8 bytes from here on */
#define GVS_ST_RING_DONE	320
#define GVS_ST_RING_BUSY_NS	328
#define GVS_ST_CMD_DST		336
#define GVS_ST_CMD_SRC		344
#define GVS_ST_CMD_LEN		352
#define GVS_ST_CMD_VALUE	360
#define GVS_ST_CMD_DONE		368
#define GVS_ST_CMD_STATE	376
#define GVS_ST_HEADS		384
#define GVS_HEADS		4

/* A mode: base (8), width, height, stride, format (4 each). */
#define GVS_MODE_BASE		0
#define GVS_MODE_WIDTH		8
#define GVS_MODE_HEIGHT		12
#define GVS_MODE_STRIDE		16
#define GVS_MODE_FORMAT		20
#define GVS_MODE_SIZE		24

/* A head: the staged, active and pending modes, then its registers. */
#define GVS_HD_STAGED		0
#define GVS_HD_ACTIVE		24
#define GVS_HD_PENDING		48
#define GVS_HD_CONTROL		72
#define GVS_HD_ERROR		76
#define GVS_HD_VBLANKS		80
#define GVS_HD_FLIP_PENDING	84
#define GVS_HD_FLIPS		88
#define GVS_HD_RESERVED		92
#define GVS_HD_COMMITS		96
#define GVS_HEAD_SIZE		104

#define GVS_STATE_SIZE		(GVS_ST_HEADS + GVS_HEADS * GVS_HEAD_SIZE)

/* Offset of head @h's field @f (GVS_HD_*), in the state. */
#define GVS_HEAD(h, f)		(GVS_ST_HEADS + (h) * GVS_HEAD_SIZE + (f))
/* Offset of field @mf (GVS_MODE_*) of head @h's mode @m (GVS_HD_STAGED...). */
#define GVS_HMODE(h, m, mf)	(GVS_HEAD(h, m) + (mf))

/* The engine's command of a packet in progress (GVS_ST_CMD_OP). */
enum { GVS_CMD_NOP, GVS_CMD_WRITE, GVS_CMD_FILL, GVS_CMD_COPY, GVS_CMD_COMPUTE };

/* A field of the state, for tools that walk all of them. */
struct gvs_field {
	const char *name;
	unsigned int off;
	unsigned int size;
};

/* The state's fields other than config space and the heads. */
static const struct gvs_field gvs_state_fields[] = {
	{ "scratch", GVS_ST_SCRATCH, 4 },
	{ "irq_status", GVS_ST_IRQ_STATUS, 4 },
	{ "ring_size", GVS_ST_RING_SIZE, 4 },
	{ "ring_head", GVS_ST_RING_HEAD, 4 },
	{ "ring_tail", GVS_ST_RING_TAIL, 4 },
	{ "ring_fence", GVS_ST_RING_FENCE, 4 },
	{ "ring_error", GVS_ST_RING_ERROR, 4 },
	{ "ring_error_head", GVS_ST_RING_ERROR_HEAD, 4 },
	{ "cmd_active", GVS_ST_CMD_ACTIVE, 4 },
	{ "cmd_dwords", GVS_ST_CMD_DWORDS, 4 },
	{ "cmd_header", GVS_ST_CMD_HEADER, 4 },
	{ "cmd_seqno", GVS_ST_CMD_SEQNO, 4 },
	{ "cmd_op", GVS_ST_CMD_OP, 4 },
	{ "reserved", GVS_ST_RESERVED, 4 },
	{ "ring_base", GVS_ST_RING_BASE, 8 },
	{ "ring_done", GVS_ST_RING_DONE, 8 },
	{ "ring_busy_ns", GVS_ST_RING_BUSY_NS, 8 },
	{ "cmd_dst", GVS_ST_CMD_DST, 8 },
	{ "cmd_src", GVS_ST_CMD_SRC, 8 },
	{ "cmd_len", GVS_ST_CMD_LEN, 8 },
	{ "cmd_value", GVS_ST_CMD_VALUE, 8 },
	{ "cmd_done", GVS_ST_CMD_DONE, 8 },
	{ "cmd_state", GVS_ST_CMD_STATE, 8 },
};

/* A head's fields, relative to its block. */
static const struct gvs_field gvs_head_fields[] = {
	{ "staged.base", GVS_HD_STAGED + GVS_MODE_BASE, 8 },
	{ "staged.width", GVS_HD_STAGED + GVS_MODE_WIDTH, 4 },
	{ "staged.height", GVS_HD_STAGED + GVS_MODE_HEIGHT, 4 },
	{ "staged.stride", GVS_HD_STAGED + GVS_MODE_STRIDE, 4 },
	{ "staged.format", GVS_HD_STAGED + GVS_MODE_FORMAT, 4 },
	{ "active.base", GVS_HD_ACTIVE + GVS_MODE_BASE, 8 },
	{ "active.width", GVS_HD_ACTIVE + GVS_MODE_WIDTH, 4 },
	{ "active.height", GVS_HD_ACTIVE + GVS_MODE_HEIGHT, 4 },
	{ "active.stride", GVS_HD_ACTIVE + GVS_MODE_STRIDE, 4 },
	{ "active.format", GVS_HD_ACTIVE + GVS_MODE_FORMAT, 4 },
	{ "pending.base", GVS_HD_PENDING + GVS_MODE_BASE, 8 },
	{ "pending.width", GVS_HD_PENDING + GVS_MODE_WIDTH, 4 },
	{ "pending.height", GVS_HD_PENDING + GVS_MODE_HEIGHT, 4 },
	{ "pending.stride", GVS_HD_PENDING + GVS_MODE_STRIDE, 4 },
	{ "pending.format", GVS_HD_PENDING + GVS_MODE_FORMAT, 4 },
	{ "control", GVS_HD_CONTROL, 4 },
	{ "error", GVS_HD_ERROR, 4 },
	{ "vblanks", GVS_HD_VBLANKS, 4 },
	{ "flip_pending", GVS_HD_FLIP_PENDING, 4 },
	{ "flips", GVS_HD_FLIPS, 4 },
	{ "reserved", GVS_HD_RESERVED, 4 },
	{ "commits", GVS_HD_COMMITS, 8 },
};

#define GVS_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Little-endian fields of 1 to 8 bytes at any address. */
static inline uint64_t gvs_get(const uint8_t *p, size_t off, unsigned int size)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < size; i++)
		v |= (uint64_t)p[off + i] << (8 * i);
	return v;
}

static inline void gvs_put(uint8_t *p, size_t off, unsigned int size, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < size; i++)
		p[off + i] = (uint8_t)(v >> (8 * i));
}

/*
 * The CRC the END record carries: CRC-32 (IEEE 802.3, reflected, the
 * kernel's crc32_le()) over every byte before the END record, started
 * from ~0 and not inverted at the end. Feed it pieces: crc =
 * gvs_crc32(crc, p, n), starting from GVS_CRC_INIT.
 */
#define GVS_CRC_INIT		0xffffffffu

static inline uint32_t gvs_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	unsigned int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return crc;
}

/* A stream in memory. */
struct gvs_stream {
	uint8_t *p;
	size_t len, cap;
};

static inline void gvs_stream_free(struct gvs_stream *s)
{
	free(s->p);
	memset(s, 0, sizeof(*s));
}

/* Make room for @more bytes; 0 or -ENOMEM. */
static inline int gvs_stream_reserve(struct gvs_stream *s, size_t more)
{
	size_t cap = s->cap ? s->cap : 65536;
	uint8_t *p;

	if (s->cap - s->len >= more)
		return 0;
	while (cap - s->len < more)
		cap *= 2;
	p = realloc(s->p, cap);
	if (!p)
		return -ENOMEM;
	s->p = p;
	s->cap = cap;
	return 0;
}

static inline int gvs_stream_append(struct gvs_stream *s, const void *p, size_t n)
{
	int err = gvs_stream_reserve(s, n);

	if (err)
		return err;
	if (n)
		memcpy(s->p + s->len, p, n);
	s->len += n;
	return 0;
}

/* Append a record header. */
static inline int gvs_stream_rec(struct gvs_stream *s, uint32_t tag, uint32_t len,
				 uint64_t arg)
{
	uint8_t r[GVS_REC_SIZE];

	gvs_put(r, 0, 4, tag);
	gvs_put(r, 4, 4, len);
	gvs_put(r, 8, 8, arg);
	return gvs_stream_append(s, r, sizeof(r));
}

/* One record of a parsed stream. */
struct gvs_rec {
	size_t off;		/* of its header in the stream */
	uint32_t tag, len;
	uint64_t arg;
};

/* A parsed stream. */
struct gvs_view {
	uint64_t fb_size;
	uint32_t state_size;
	char type[GVS_TYPE_MAX + 1];
	struct gvs_rec *recs;
	size_t nrecs;
	size_t state_off;	/* of the STATE payload; 0: none */
	size_t end_off;		/* of the END record; 0: none */
	uint32_t crc;		/* of the bytes before the END record */
};

static inline void gvs_view_free(struct gvs_view *v)
{
	free(v->recs);
	memset(v, 0, sizeof(*v));
}

/*
 * Split @p into its header and records and check the framing the way a
 * destination does: magic, version and layout, tags, payload lengths,
 * nothing after STATE but END, END last with the right CRC. Page indexes
 * are not checked (the header's fb_size gives the bound: gvs_view.fb_size).
 * 0, or -EINVAL with *@why set to what is wrong; the view holds what was
 * parsed up to there either way (free it with gvs_view_free()).
 */
static inline int gvs_parse(const uint8_t *p, size_t len, struct gvs_view *v,
			    const char **why)
{
	size_t off = GVS_HDR_SIZE, cap = 0;
	uint32_t crc;
	const char *dummy;

	if (!why)
		why = &dummy;
	memset(v, 0, sizeof(*v));
	*why = NULL;
	if (len < GVS_HDR_SIZE) {
		*why = "shorter than the header";
		return -EINVAL;
	}
	if (gvs_get(p, GVS_HDR_MAGIC, 4) != GVS_MAGIC ||
	    gvs_get(p, GVS_HDR_VERSION, 2) != GVS_VERSION ||
	    gvs_get(p, GVS_HDR_HDR_SIZE, 2) != GVS_HDR_SIZE ||
	    gvs_get(p, GVS_HDR_PAGE_SIZE, 4) != GVS_PAGE_SIZE ||
	    gvs_get(p, GVS_HDR_RESERVED, 8)) {
		*why = "header: magic, version or layout";
		return -EINVAL;
	}
	v->fb_size = gvs_get(p, GVS_HDR_FB_SIZE, 8);
	v->state_size = gvs_get(p, GVS_HDR_STATE_SIZE, 4);
	memcpy(v->type, p + GVS_HDR_TYPE, GVS_TYPE_MAX);
	v->type[GVS_TYPE_MAX] = '\0';
	crc = gvs_crc32(GVS_CRC_INIT, p, GVS_HDR_SIZE);
	while (off < len) {
		struct gvs_rec r;

		if (v->end_off) {
			*why = "bytes after the end record";
			return -EINVAL;
		}
		if (len - off < GVS_REC_SIZE) {
			*why = "a record header cut short";
			return -EINVAL;
		}
		r.off = off;
		r.tag = gvs_get(p, off, 4);
		r.len = gvs_get(p, off + 4, 4);
		r.arg = gvs_get(p, off + 8, 8);
		if (v->nrecs == cap) {
			struct gvs_rec *n;

			cap = cap ? 2 * cap : 64;
			n = realloc(v->recs, cap * sizeof(*n));
			if (!n) {
				*why = "out of memory";
				return -ENOMEM;
			}
			v->recs = n;
		}
		v->recs[v->nrecs++] = r;
		if (v->state_off && r.tag != GVS_REC_END) {
			*why = "a record after the device state";
			return -EINVAL;
		}
		switch (r.tag) {
		case GVS_REC_PAGE:
		case GVS_REC_ZERO:
			if (r.len != (r.tag == GVS_REC_PAGE ? GVS_PAGE_SIZE : 0)) {
				*why = "a page record of the wrong length";
				return -EINVAL;
			}
			break;
		case GVS_REC_STATE:
			if (r.len != v->state_size) {
				*why = "a state record of the wrong length";
				return -EINVAL;
			}
			v->state_off = off + GVS_REC_SIZE;
			break;
		case GVS_REC_END:
			if (r.len || !v->state_off) {
				*why = "a misplaced end record";
				return -EINVAL;
			}
			v->end_off = off;
			v->crc = crc;
			if (r.arg != crc) {
				*why = "checksum mismatch";
				return -EINVAL;
			}
			off += GVS_REC_SIZE;
			continue;
		default:
			*why = "an unknown record";
			return -EINVAL;
		}
		if (len - off - GVS_REC_SIZE < r.len) {
			*why = "a payload cut short";
			return -EINVAL;
		}
		crc = gvs_crc32(crc, p + off, GVS_REC_SIZE + r.len);
		off += GVS_REC_SIZE + r.len;
	}
	if (!v->end_off) {
		*why = "no end record";
		return -EINVAL;
	}
	if (v->state_size != GVS_STATE_SIZE) {
		*why = "a device state of another layout than vgpu_stream.h's";
		return -EINVAL;
	}
	return 0;
}

/*
 * Recompute the CRC of a stream that ends with an END record (as the last
 * GVS_REC_SIZE bytes) after patching it: 0, or -ENOENT when the stream
 * does not end with one.
 */
static inline int gvs_seal(uint8_t *p, size_t len)
{
	size_t end;

	if (len < GVS_HDR_SIZE + GVS_REC_SIZE)
		return -ENOENT;
	end = len - GVS_REC_SIZE;
	if (gvs_get(p, end, 4) != GVS_REC_END || gvs_get(p, end + 4, 4))
		return -ENOENT;
	gvs_put(p, end + 8, 8, gvs_crc32(GVS_CRC_INIT, p, end));
	return 0;
}

/* VFIO migration v2 ---------------------------------------------------- */

/* VFIO_DEVICE_FEATURE with @len bytes of data in and out; 0 or -errno. */
static inline int gvs_feature(int fd, uint32_t flags, void *data, size_t len)
{
	uint64_t buf[(sizeof(struct vfio_device_feature) + 64) / 8];
	struct vfio_device_feature *f = (void *)buf;

	if (len > 64)
		return -EINVAL;
	memset(buf, 0, sizeof(buf));
	f->argsz = sizeof(*f) + len;
	f->flags = flags;
	memcpy(f->data, data, len);
	if (ioctl(fd, VFIO_DEVICE_FEATURE, f))
		return -errno;
	memcpy(data, f->data, len);
	return 0;
}

/*
 * Move device @fd to migration state @state (the kernel walks the arcs);
 * *@data_fd gets the data file the last arc opened, or -1. 0 or -errno.
 */
static inline int gvs_mig_set(int fd, uint32_t state, int *data_fd)
{
	struct vfio_device_feature_mig_state st = {
		.device_state = state, .data_fd = -1,
	};
	int err = gvs_feature(fd, VFIO_DEVICE_FEATURE_SET |
			      VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE,
			      &st, sizeof(st));

	if (data_fd)
		*data_fd = err ? -1 : st.data_fd;
	else if (!err && st.data_fd >= 0)
		close(st.data_fd);
	return err;
}

/* The migration state, or -errno. */
static inline int gvs_mig_get(int fd)
{
	struct vfio_device_feature_mig_state st = { 0 };
	int err = gvs_feature(fd, VFIO_DEVICE_FEATURE_GET |
			      VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE,
			      &st, sizeof(st));

	return err ?: (int)st.device_state;
}

/* Read a data file to its end (0) into @s; -errno on an error. */
static inline int gvs_read_fd(int dfd, struct gvs_stream *s)
{
	ssize_t n;
	int err;

	for (;;) {
		err = gvs_stream_reserve(s, 1u << 20);
		if (err)
			return err;
		n = read(dfd, s->p + s->len, s->cap - s->len);
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		s->len += n;
	}
}

/*
 * Save device @fd: to STOP, then STOP_COPY, its stream read into @s, and
 * back to STOP, where it stays. 0 or -errno.
 */
static inline int gvs_save(int fd, struct gvs_stream *s)
{
	int dfd, err;

	err = gvs_mig_set(fd, VFIO_DEVICE_STATE_STOP, NULL) ?:
	      gvs_mig_set(fd, VFIO_DEVICE_STATE_STOP_COPY, &dfd);
	if (err)
		return err;
	err = dfd < 0 ? -EPROTO : gvs_read_fd(dfd, s);
	if (dfd >= 0)
		close(dfd);
	return err ?: gvs_mig_set(fd, VFIO_DEVICE_STATE_STOP, NULL);
}

/*
 * Write @len bytes to resume file @rfd in pieces of @piece bytes (0: in
 * one write). 0, or -errno of the write that failed; *@done (if not NULL)
 * gets the bytes the file took.
 */
static inline int gvs_write_fd(int rfd, const uint8_t *p, size_t len,
			       size_t piece, size_t *done)
{
	size_t off = 0;
	ssize_t n;
	int err = 0;

	while (off < len) {
		size_t want = len - off;

		if (piece && want > piece)
			want = piece;
		n = write(rfd, p + off, want);
		if (n < 0) {
			err = -errno;
			break;
		}
		if (!n) {
			err = -EIO;
			break;
		}
		off += n;
	}
	if (done)
		*done = off;
	return err;
}

/*
 * Resume device @fd from @p as a VMM does: to RESUMING, the stream
 * written, then to STOP, where it stays (the caller moves it to RUNNING).
 * 0 or -errno: of the write, or of RESUMING -> STOP. A refused device
 * stays in RESUMING; VFIO_DEVICE_RESET makes it RUNNING again.
 */
static inline int gvs_resume(int fd, const uint8_t *p, size_t len)
{
	int rfd, err;

	err = gvs_mig_set(fd, VFIO_DEVICE_STATE_RESUMING, &rfd);
	if (err)
		return err;
	if (rfd < 0)
		return -EPROTO;
	err = gvs_write_fd(rfd, p, len, 0, NULL) ?:
	      gvs_mig_set(fd, VFIO_DEVICE_STATE_STOP, NULL);
	close(rfd);
	return err;
}

#endif /* GPUVIRT_VGPU_STREAM_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpuvirtctl stats: every GPU's, scheduler's and vGPU's counters in the
 * Prometheus text format, for node_exporter's textfile collector.
 *
 *	gpuvirtctl stats --prometheus [ file PATH ]
 *
 * With a file, the metrics are written to PATH.tmp and renamed over PATH,
 * so that the collector never reads half a file. Times are in seconds and
 * sizes in bytes, as Prometheus names them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"

enum { STATS_PROMETHEUS, STATS_FILE };

struct stats_opts {
	bool prometheus;
	const char *file;
};

static const struct arg_spec stats_args[] = {
	[STATS_PROMETHEUS] = {
		.keyword = "--prometheus", .type = ARG_FLAG,
		.offset = offsetof(struct stats_opts, prometheus),
	},
	[STATS_FILE] = {
		.keyword = "file", .type = ARG_STRING, .meta = "PATH",
		.offset = offsetof(struct stats_opts, file),
	},
	{ .keyword = NULL }
};

/* One metric family: its HELP and TYPE lines come once, before samples. */
struct metric {
	const char *name;
	const char *type;	/* counter or gauge */
	const char *help;
};

static const struct metric m_gpu_info = {
	"gpuvirt_gpu_info", "gauge", "A GPU registered with gpuvirt (value 1)." };
static const struct metric m_gpu_vram = {
	"gpuvirt_gpu_vram_bytes", "gauge", "Framebuffer memory of a GPU." };
static const struct metric m_busy = {
	"gpuvirt_sched_busy_seconds_total", "counter",
	"Time some vGPU owned the GPU's engines." };
static const struct metric m_idle = {
	"gpuvirt_sched_idle_seconds_total", "counter",
	"Time no vGPU owned the GPU's engines, switches included." };
static const struct metric m_lag = {
	"gpuvirt_sched_lag_seconds", "gauge",
	"Time the GPU's engine fell behind its modelled rate for want of host CPU, net of what it made up." };
static const struct metric m_switches = {
	"gpuvirt_sched_switches_total", "counter",
	"Turns that went to another vGPU than the one before." };
static const struct metric m_run = {
	"gpuvirt_vgpu_run_seconds_total", "counter",
	"Time a vGPU owned its GPU's engines." };
static const struct metric m_work = {
	"gpuvirt_vgpu_work_seconds_total", "counter",
	"Modelled engine time of the work a vGPU ran." };
static const struct metric m_slices = {
	"gpuvirt_vgpu_slices_total", "counter", "Turns a vGPU got." };
static const struct metric m_preempt = {
	"gpuvirt_vgpu_preemptions_total", "counter",
	"Turns that ended with a vGPU's work unfinished." };
static const struct metric m_packets = {
	"gpuvirt_vgpu_packets_total", "counter", "Command packets a vGPU completed." };
static const struct metric m_weight = {
	"gpuvirt_vgpu_weight", "gauge", "A vGPU's scheduling weight." };
static const struct metric m_min = {
	"gpuvirt_vgpu_min_ratio", "gauge", "A vGPU's guaranteed share of its GPU." };
static const struct metric m_max = {
	"gpuvirt_vgpu_max_ratio", "gauge", "The largest share of its GPU a vGPU may use." };
static const struct metric m_open = {
	"gpuvirt_vgpu_open", "gauge", "1 while a VM has the vGPU open." };

/*
 * Samples are gathered per family and printed family by family, as the
 * text format wants all samples of a family together.
 */
#define STATS_LINE	256

struct family_buf {
	char *text;
	size_t len, cap;
};

static const struct metric *const families[] = {
	&m_gpu_info, &m_gpu_vram, &m_busy, &m_idle, &m_lag, &m_switches, &m_run,
	&m_work, &m_slices, &m_preempt, &m_packets, &m_weight, &m_min, &m_max,
	&m_open,
};

#define N_FAMILIES	(sizeof(families) / sizeof(families[0]))

struct stats_state {
	struct family_buf fam[N_FAMILIES];
	bool oom;
};

static void sample(struct stats_state *st, const struct metric *m,
		   const char *labels, double val)
{
	struct family_buf *f = NULL;
	char line[STATS_LINE * 2];
	size_t i, n;
	char *p;

	for (i = 0; i < N_FAMILIES; i++)
		if (families[i] == m)
			f = &st->fam[i];
	if (!f)
		return;
	n = snprintf(line, sizeof(line), "%s{%s} %.9g\n", m->name, labels, val);
	if (n >= sizeof(line))
		return;
	if (f->len + n + 1 > f->cap) {
		p = realloc(f->text, f->cap + 4096 + n);
		if (!p) {
			st->oom = true;
			return;
		}
		f->text = p;
		f->cap += 4096 + n;
	}
	memcpy(f->text + f->len, line, n + 1);
	f->len += n;
}

/* A label value, escaped as the text format wants. */
static void label_escape(char *out, size_t len, const char *in)
{
	size_t o = 0;

	for (; *in && o + 3 < len; in++) {
		if (*in == '\\' || *in == '"')
			out[o++] = '\\';
		if (*in == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
			continue;
		}
		out[o++] = *in;
	}
	out[o] = '\0';
}

static int gpu_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_GPU_MAX + 1];
	char labels[STATS_LINE], name[64], model[64];

	if (nl_parse(nlh, gpu_policy, GPUVIRT_A_GPU_MAX, tb) ||
	    !tb[GPUVIRT_A_GPU_ID] || !tb[GPUVIRT_A_GPU_NAME] ||
	    !tb[GPUVIRT_A_GPU_MODEL] || !tb[GPUVIRT_A_GPU_VRAM_SIZE])
		return -EINVAL;
	label_escape(name, sizeof(name), mnl_attr_get_str(tb[GPUVIRT_A_GPU_NAME]));
	label_escape(model, sizeof(model), mnl_attr_get_str(tb[GPUVIRT_A_GPU_MODEL]));
	snprintf(labels, sizeof(labels), "gpu=\"%u\",name=\"%s\",model=\"%s\"",
		 mnl_attr_get_u32(tb[GPUVIRT_A_GPU_ID]), name, model);
	sample(data, &m_gpu_info, labels, 1);
	snprintf(labels, sizeof(labels), "gpu=\"%u\"",
		 mnl_attr_get_u32(tb[GPUVIRT_A_GPU_ID]));
	sample(data, &m_gpu_vram, labels,
	       (double)mnl_attr_get_u64(tb[GPUVIRT_A_GPU_VRAM_SIZE]));
	return 0;
}

static double u64_or_0(const struct nlattr *a, double scale)
{
	return a ? (double)mnl_attr_get_u64(a) * scale : 0;
}

static int sched_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_SCHED_MAX + 1];
	char labels[STATS_LINE];

	if (nl_parse(nlh, sched_policy, GPUVIRT_A_SCHED_MAX, tb) ||
	    !tb[GPUVIRT_A_SCHED_GPU_ID])
		return -EINVAL;
	snprintf(labels, sizeof(labels), "gpu=\"%u\"",
		 mnl_attr_get_u32(tb[GPUVIRT_A_SCHED_GPU_ID]));
	sample(data, &m_busy, labels, u64_or_0(tb[GPUVIRT_A_SCHED_BUSY_NS], 1e-9));
	sample(data, &m_idle, labels, u64_or_0(tb[GPUVIRT_A_SCHED_IDLE_NS], 1e-9));
	sample(data, &m_switches, labels,
	       u64_or_0(tb[GPUVIRT_A_SCHED_SWITCHES], 1));
	sample(data, &m_lag, labels, u64_or_0(tb[GPUVIRT_A_SCHED_LAG_NS], 1e-9));
	return 0;
}

static int vgpu_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_VGPU_MAX + 1];
	const struct nlattr *st[GPUVIRT_A_VGPU_STATS_MAX + 1] = { NULL };
	char labels[STATS_LINE], uuid[64], type[64];
	int n;

	if (nl_parse(nlh, vgpu_policy, GPUVIRT_A_VGPU_MAX, tb) ||
	    !tb[GPUVIRT_A_VGPU_UUID] || !tb[GPUVIRT_A_VGPU_GPU_ID] ||
	    !tb[GPUVIRT_A_VGPU_TYPE])
		return -EINVAL;
	if (tb[GPUVIRT_A_VGPU_STATS] &&
	    nl_parse_nested(tb[GPUVIRT_A_VGPU_STATS], vgpu_stats_policy,
			    GPUVIRT_A_VGPU_STATS_MAX, st))
		return -EINVAL;
	label_escape(uuid, sizeof(uuid), mnl_attr_get_str(tb[GPUVIRT_A_VGPU_UUID]));
	label_escape(type, sizeof(type), mnl_attr_get_str(tb[GPUVIRT_A_VGPU_TYPE]));
	n = snprintf(labels, sizeof(labels), "gpu=\"%u\",uuid=\"%s\",type=\"%s\"",
		     mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_GPU_ID]), uuid, type);
	/* a VF vGPU's UUID changes at each typing; its VF does not */
	if (tb[GPUVIRT_A_VGPU_VF] && n > 0 && (size_t)n < sizeof(labels)) {
		char vf[64];

		label_escape(vf, sizeof(vf), mnl_attr_get_str(tb[GPUVIRT_A_VGPU_VF]));
		snprintf(labels + n, sizeof(labels) - (size_t)n, ",vf=\"%s\"", vf);
	}
	sample(data, &m_run, labels, u64_or_0(st[GPUVIRT_A_VGPU_STATS_RUN_NS], 1e-9));
	sample(data, &m_work, labels,
	       u64_or_0(st[GPUVIRT_A_VGPU_STATS_WORK_NS], 1e-9));
	sample(data, &m_slices, labels,
	       u64_or_0(st[GPUVIRT_A_VGPU_STATS_SLICES], 1));
	sample(data, &m_preempt, labels,
	       u64_or_0(st[GPUVIRT_A_VGPU_STATS_PREEMPTIONS], 1));
	sample(data, &m_packets, labels,
	       u64_or_0(st[GPUVIRT_A_VGPU_STATS_PACKETS], 1));
	if (tb[GPUVIRT_A_VGPU_WEIGHT])
		sample(data, &m_weight, labels,
		       mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_WEIGHT]));
	if (tb[GPUVIRT_A_VGPU_MIN_PCT])
		sample(data, &m_min, labels,
		       mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_MIN_PCT]) / 100.0);
	if (tb[GPUVIRT_A_VGPU_MAX_PCT])
		sample(data, &m_max, labels,
		       mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_MAX_PCT]) / 100.0);
	if (tb[GPUVIRT_A_VGPU_OPEN])
		sample(data, &m_open, labels,
		       mnl_attr_get_u8(tb[GPUVIRT_A_VGPU_OPEN]));
	return 0;
}

static int dump(struct ctx *ctx, uint8_t cmd, nl_msg_cb cb,
		struct stats_state *st)
{
	struct nlmsghdr *nlh;
	int ret;

	nlh = nl_msg_start(ctx->nl, cmd, NLM_F_DUMP);
	/* no metric comes from a vGPU's migration nest: spare the kernel it */
	if (cmd == GPUVIRT_CMD_VGPU_GET)
		nl_put_optional_u32(ctx->nl, nlh, GPUVIRT_A_VGPU_OMIT,
				    GPUVIRT_VGPU_OMIT_MIGRATION);
	ret = nl_exchange(ctx->nl, cb, st);
	if (ret && ctx->nl->error.err)
		nl_perror(ctx->nl, NULL);
	else if (ret)
		err_print("malformed reply from the kernel");
	return ret;
}

static int stats_write(FILE *out, const struct stats_state *st)
{
	size_t i;

	for (i = 0; i < N_FAMILIES; i++) {
		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", families[i]->name,
			families[i]->help, families[i]->name, families[i]->type);
		if (st->fam[i].len)
			fputs(st->fam[i].text, out);
	}
	return ferror(out) ? -EIO : 0;
}

static int stats_run(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct stats_opts *opts = o;
	struct stats_state st = { .oom = false };
	char tmp[4096];
	FILE *out = stdout;
	int ret, i;

	if (!opts->prometheus) {
		err_print("only the Prometheus format is offered: add --prometheus "
			  "(\"vgpu show\" and \"sched show\" print the counters too)");
		return EXIT_USAGE;
	}
	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	/* vgpu-get is for CAP_NET_ADMIN: its refusal is reported as such */
	if (dump(ctx, GPUVIRT_CMD_GPU_GET, gpu_cb, &st) ||
	    dump(ctx, GPUVIRT_CMD_SCHED_GET, sched_cb, &st) ||
	    dump(ctx, GPUVIRT_CMD_VGPU_GET, vgpu_cb, &st)) {
		ret = EXIT_RUNTIME;
		goto out_free;
	}
	if (st.oom) {
		err_print("%s", strerror(ENOMEM));
		ret = EXIT_RUNTIME;
		goto out_free;
	}

	if (given & ARG_BIT(STATS_FILE)) {
		if (snprintf(tmp, sizeof(tmp), "%s.tmp", opts->file) >=
		    (int)sizeof(tmp)) {
			err_print("file: path too long");
			ret = EXIT_USAGE;
			goto out_free;
		}
		out = fopen(tmp, "w");
		if (!out) {
			err_print("%s: %s", tmp, strerror(errno));
			ret = EXIT_RUNTIME;
			goto out_free;
		}
	}
	ret = stats_write(out, &st);
	if (out != stdout) {
		if (fclose(out) || ret || rename(tmp, opts->file)) {
			err_print("%s: %s", opts->file, strerror(errno ?: EIO));
			unlink(tmp);
			ret = EXIT_RUNTIME;
			goto out_free;
		}
	} else if (ret || fflush(stdout)) {
		err_print("writing the metrics: %s", strerror(errno ?: EIO));
		ret = EXIT_RUNTIME;
		goto out_free;
	}
	ret = EXIT_OK;
out_free:
	for (i = 0; i < (int)N_FAMILIES; i++)
		free(st.fam[i].text);
	return ret;
}

static const struct cmd stats_cmd = {
	"stats", stats_args, sizeof(struct stats_opts), stats_run
};

const struct object stats_object = {
	.name = "stats",
	.bare = &stats_cmd,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the configuration parser of "gpuvirtctl apply" (user/config.c).
 *
 * Every variant of the "bad" fixture is one file with the exact error it
 * gives, line and column included: unknown keys, values of the wrong kind,
 * values out of the ranges the command line and the kernel use, duplicates,
 * and what goes together. The TESTs parse valid files, YAML and JSON, and
 * check the model field by field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include <uapi/linux/gpuvirt.h>

#include "config.h"
#include "nl-gen.h"

#define U1	"5a3c0001-0000-4000-8000-000000000001"
#define U2	"5a3c0001-0000-4000-8000-000000000002"
#define U3	"5a3c0001-0000-4000-8000-000000000003"

static int parse(const char *text, struct config *cfg, char *err, size_t len)
{
	return config_parse("t.yaml", text, strlen(text), cfg, err, len);
}

/* Files that are refused, with their messages. ------------------------------ */

FIXTURE(bad) {
	struct config cfg;
	char err[512];
};

FIXTURE_VARIANT(bad) {
	const char *text;
	const char *err;
};

#define BAD(vname, t, e) \
	FIXTURE_VARIANT_ADD(bad, vname) { .text = t, .err = e }

/* A GPU with one vGPU, whose lines are given by V (indented 8). */
#define ONE_VGPU(V)							\
	"gpus:\n"							\
	"  - id: 0\n"							\
	"    vgpus:\n"							\
	"      - uuid: " U1 "\n"					\
	V

/* Unknown keys: what a later version may add fails loudly. */
BAD(unknown_top, "gpus: []\nmig-layout:\n  - gpu: 0\n",
    "t.yaml:2:1: unknown key \"mig-layout\" in the file (expected simulated-gpus, gpus, passthrough)");
BAD(unknown_top_pt, "passthrough: []\npci-passthrough: []\n",
    "t.yaml:2:1: unknown key \"pci-passthrough\" in the file (expected simulated-gpus, gpus, passthrough)");
BAD(unknown_gpu, "gpus:\n  - id: 0\n    numa: 1\n",
    "t.yaml:3:5: unknown key \"numa\" in a GPU (expected id, vgpu-mode, vgpu-model, vfs, sched, vgpus, mig)");
BAD(unknown_mig, "gpus:\n  - id: 0\n    mig:\n      enabled: true\n",
    "t.yaml:4:7: unknown key \"enabled\" in \"mig\" (expected mode, instances)");
BAD(unknown_sched, "gpus:\n  - id: 0\n    sched:\n      quantum: 5\n",
    "t.yaml:4:7: unknown key \"quantum\" in \"sched\" (expected policy, timeslice-us)");
BAD(unknown_vgpu, ONE_VGPU("        type: H200-35C\n        wieght: 5\n"),
    "t.yaml:6:9: unknown key \"wieght\" in a vGPU (expected uuid, vf, type, weight, min-pct, max-pct, gi)");
BAD(unknown_sim, "simulated-gpus:\n  - id: 0\n    model: h200-141gb\n    numa: 1\n",
    "t.yaml:4:5: unknown key \"numa\" in a simulated GPU (expected id, model, vram, engines)");
BAD(key_case, "GPUS: []\n",
    "t.yaml:1:1: unknown key \"GPUS\" in the file (expected simulated-gpus, gpus, passthrough)");
BAD(key_not_scalar, "gpus:\n  - id: 0\n    [a]: 1\n",
    "t.yaml:3:5: a key of a GPU must be a string");

/* Values of the wrong kind. */
BAD(top_list, "- id: 0\n",
    "t.yaml:1:1: the file must be a mapping, got a list");
BAD(top_scalar, "gpus\n",
    "t.yaml:1:1: the file must be a mapping, got a string (\"gpus\")");
BAD(gpus_mapping, "gpus:\n  id: 0\n",
    "t.yaml:2:3: \"gpus\" expects a list, got a mapping");
BAD(gpus_null, "gpus:\n",
    "t.yaml:1:6: \"gpus\" expects a list, got an empty value");
BAD(gpu_scalar, "gpus:\n  - 0\n",
    "t.yaml:2:5: a GPU must be a mapping, got a number (0)");
BAD(sched_list, "gpus:\n  - id: 0\n    sched: [equal-share]\n",
    "t.yaml:3:12: \"sched\" expects a mapping, got a list");
BAD(vgpus_scalar, "gpus:\n  - id: 0\n    vgpus: " U1 "\n",
    "t.yaml:3:12: \"vgpus\" expects a list, got a string (\"" U1 "\")");
BAD(type_number, ONE_VGPU("        type: 35\n"),
    "t.yaml:5:15: \"type\" expects a string, got a number (35)");
BAD(type_float, ONE_VGPU("        type: 3.5\n"),
    "t.yaml:5:15: \"type\" expects a string, got a number (3.5)");
BAD(type_bool, ONE_VGPU("        type: yes\n"),
    "t.yaml:5:15: \"type\" expects a string, got a boolean (yes)");
BAD(type_null, ONE_VGPU("        type: ~\n"),
    "t.yaml:5:15: \"type\" expects a string, got an empty value");
BAD(type_empty, ONE_VGPU("        type:\n"),
    "t.yaml:5:14: \"type\" expects a string, got an empty value");
BAD(type_list, ONE_VGPU("        type: [H200-35C]\n"),
    "t.yaml:5:15: \"type\" expects a string, got a list");
BAD(type_mapping, ONE_VGPU("        type: {name: H200-35C}\n"),
    "t.yaml:5:15: \"type\" expects a string, got a mapping");
BAD(type_hex, ONE_VGPU("        type: 0x35\n"),
    "t.yaml:5:15: \"type\" expects a string, got a number (0x35)");
BAD(model_number, "simulated-gpus:\n  - id: 0\n    model: 100\n",
    "t.yaml:3:12: \"model\" expects a string, got a number (100)");
BAD(id_string, "gpus:\n  - id: zero\n",
    "t.yaml:2:9: \"id\" expects a number from 0 to 4294967295, got \"zero\"");
BAD(id_quoted, "gpus:\n  - id: \"0\"\n",
    "t.yaml:2:9: \"id\" expects a number from 0 to 4294967295, got a string (\"0\")");
BAD(id_list, "gpus:\n  - id: [0]\n",
    "t.yaml:2:9: \"id\" expects a number from 0 to 4294967295, got a list");
BAD(weight_quoted, ONE_VGPU("        type: H200-35C\n        weight: '100'\n"),
    "t.yaml:6:17: \"weight\" expects a number from 1 to 10000, got a string (\"100\")");
BAD(weight_bool, ONE_VGPU("        type: H200-35C\n        weight: true\n"),
    "t.yaml:6:17: \"weight\" expects a number from 1 to 10000, got \"true\"");
BAD(weight_float, ONE_VGPU("        type: H200-35C\n        weight: 1.5\n"),
    "t.yaml:6:17: \"weight\" expects a number from 1 to 10000, got \"1.5\"");
BAD(uuid_list, "gpus:\n  - id: 0\n    vgpus:\n      - uuid: [1]\n",
    "t.yaml:4:15: \"uuid\" expects a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), got a list");
BAD(policy_number, "gpus:\n  - id: 0\n    sched:\n      policy: 1\n",
    "t.yaml:4:15: \"policy\" expects one of best-effort, equal-share, fixed-share, weighted, got a number (1)");

/* Values out of range: the command line's and the kernel's ranges. */
BAD(id_too_big, "gpus:\n  - id: 4294967296\n",
    "t.yaml:2:9: \"id\" expects a number from 0 to 4294967295, got \"4294967296\"");
BAD(id_negative, "gpus:\n  - id: -1\n",
    "t.yaml:2:9: \"id\" expects a number from 0 to 4294967295, got \"-1\"");
BAD(id_octal, "gpus:\n  - id: 010\n",
    "t.yaml:2:9: \"id\" expects a number from 0 to 4294967295, got \"010\"");
BAD(id_underscore, "gpus:\n  - id: 1_000\n",
    "t.yaml:2:9: \"id\" expects a number from 0 to 4294967295, got \"1_000\"");
BAD(weight_zero, ONE_VGPU("        type: H200-35C\n        weight: 0\n"),
    "t.yaml:6:17: \"weight\" expects a number from 1 to 10000, got \"0\"");
BAD(weight_high, ONE_VGPU("        type: H200-35C\n        weight: 10001\n"),
    "t.yaml:6:17: \"weight\" expects a number from 1 to 10000, got \"10001\"");
BAD(min_high, ONE_VGPU("        type: H200-35C\n        min-pct: 101\n"),
    "t.yaml:6:18: \"min-pct\" expects a number from 0 to 100, got \"101\"");
BAD(max_zero, ONE_VGPU("        type: H200-35C\n        max-pct: 0\n"),
    "t.yaml:6:18: \"max-pct\" expects a number from 1 to 100, got \"0\"");
BAD(max_high, ONE_VGPU("        type: H200-35C\n        max-pct: 101\n"),
    "t.yaml:6:18: \"max-pct\" expects a number from 1 to 100, got \"101\"");
BAD(timeslice_low, "gpus:\n  - id: 0\n    sched:\n      timeslice-us: 99\n",
    "t.yaml:4:21: \"timeslice-us\" expects 0 or a number from 100 to 100000, got \"99\"");
BAD(timeslice_high, "gpus:\n  - id: 0\n    sched:\n      timeslice-us: 100001\n",
    "t.yaml:4:21: \"timeslice-us\" expects 0 or a number from 100 to 100000, got \"100001\"");
BAD(policy_unknown, "gpus:\n  - id: 0\n    sched:\n      policy: fair\n",
    "t.yaml:4:15: \"policy\" expects one of best-effort, equal-share, fixed-share, weighted, got \"fair\"");
BAD(policy_case, "gpus:\n  - id: 0\n    sched:\n      policy: Weighted\n",
    "t.yaml:4:15: \"policy\" expects one of best-effort, equal-share, fixed-share, weighted, got \"Weighted\"");
BAD(mode_unknown, "gpus:\n  - id: 0\n    vgpu-mode: mig\n",
    "t.yaml:3:16: \"vgpu-mode\" expects one of homogeneous, mixed, got \"mig\"");
BAD(engines_high, "simulated-gpus:\n  - {id: 1, model: custom, vram: 24G, engines: 65}\n",
    "t.yaml:2:48: \"engines\" expects a number from 1 to 64, got \"65\"");
BAD(vram_low, "simulated-gpus:\n  - {id: 1, model: custom, vram: 512M, engines: 4}\n",
    "t.yaml:2:34: \"vram\" expects a size from 1G to 1T (suffixes K, M, G, T), got \"512M\"");
BAD(vram_high, "simulated-gpus:\n  - {id: 1, model: custom, vram: 2T, engines: 4}\n",
    "t.yaml:2:34: \"vram\" expects a size from 1G to 1T (suffixes K, M, G, T), got \"2T\"");
BAD(vram_unit, "simulated-gpus:\n  - {id: 1, model: custom, vram: 24GB, engines: 4}\n",
    "t.yaml:2:34: \"vram\" expects a size from 1G to 1T (suffixes K, M, G, T), got \"24GB\"");
BAD(model_upper, "simulated-gpus:\n  - id: 0\n    model: H200-141GB\n",
    "t.yaml:3:12: \"model\" expects a name of 1 to 23 characters of a-z, 0-9, '-' and '.', got \"H200-141GB\"");
BAD(type_blank, ONE_VGPU("        type: H200 35C\n"),
    "t.yaml:5:15: \"type\" expects a name of 1 to 23 characters of letters, digits, '-', '_' and '.', got \"H200 35C\"");
BAD(type_slash, ONE_VGPU("        type: ../H200-35C\n"),
    "t.yaml:5:15: \"type\" expects a name of 1 to 23 characters of letters, digits, '-', '_' and '.', got \"../H200-35C\"");
BAD(type_long, ONE_VGPU("        type: ABCDEFGHIJKLMNOPQRSTUVWX\n"),
    "t.yaml:5:15: \"type\" expects a name of 1 to 23 characters of letters, digits, '-', '_' and '.', got \"ABCDEFGHIJKLMNOPQRSTUVWX\"");
BAD(type_quoted_empty, ONE_VGPU("        type: \"\"\n"),
    "t.yaml:5:15: \"type\" expects a name of 1 to 23 characters of letters, digits, '-', '_' and '.', got \"\"");

/* UUIDs. */
#define UUID_ERR(got) \
	"\"uuid\" expects a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), got \"" got "\""
BAD(uuid_short, "gpus:\n  - id: 0\n    vgpus:\n      - uuid: 5a3c0001-0000-4000-8000-00000000001\n",
    "t.yaml:4:15: " UUID_ERR("5a3c0001-0000-4000-8000-00000000001"));
BAD(uuid_not_hex, "gpus:\n  - id: 0\n    vgpus:\n      - uuid: 5a3c0001-0000-4000-8000-00000000000g\n",
    "t.yaml:4:15: " UUID_ERR("5a3c0001-0000-4000-8000-00000000000g"));
BAD(uuid_no_dashes, "gpus:\n  - id: 0\n    vgpus:\n      - uuid: 5a3c00010000400080000000000000001\n",
    "t.yaml:4:15: " UUID_ERR("5a3c00010000400080000000000000001"));
BAD(uuid_number, "gpus:\n  - id: 0\n    vgpus:\n      - uuid: 12\n",
    "t.yaml:4:15: " UUID_ERR("12"));

/* What is required, and what goes together. */
BAD(gpu_no_id, "gpus:\n  - vgpu-mode: mixed\n",
    "t.yaml:2:5: a GPU needs \"id\"");
BAD(vgpu_no_type, ONE_VGPU("        weight: 3\n"),
    "t.yaml:4:9: a vGPU needs \"type\"");
BAD(vgpu_no_uuid, "gpus:\n  - id: 0\n    vgpus:\n      - type: H200-35C\n",
    "t.yaml:4:9: a vGPU needs \"uuid\" (an mdev vGPU) or \"vf\" (a VF vGPU, sriov model)");
/* The sriov vGPU model: VF vGPUs, by address. */
#define SRIOV(G, V)							\
	"gpus:\n  - id: 0\n" G "    vgpus:\n      - type: H200-35C\n" V
BAD(vgpu_uuid_and_vf, SRIOV("", "        uuid: " U1 "\n        vf: 8000:00:00.1\n"),
    "t.yaml:4:9: a vGPU takes \"uuid\" (an mdev vGPU) or \"vf\" (a VF vGPU, sriov model), not both");
BAD(vf_bad_address, SRIOV("", "        vf: 8000:00:20.1\n"),
    "t.yaml:5:13: \"vf\" expects a PCI address DDDD:BB:DD.F (as 0000:01:00.0; device 00 to 1f, function 0 to 7), got \"8000:00:20.1\"");
BAD(vf_gi, SRIOV("    vgpu-model: sriov\n", "        vf: 8000:00:00.1\n        gi: 0\n"),
    "t.yaml:7:13: \"gi\" is not for a VF vGPU: the kernel places it on the lowest GI of its type's profile with room");
BAD(vf_twice, "gpus:\n  - id: 0\n    vgpu-model: sriov\n    vgpus:\n"
    "      - {vf: 8000:00:00.1, type: H200-35C}\n"
    "      - {vf: \"8000:00:00.1\", type: H200-35C}\n",
    "t.yaml:6:9: vGPU 8000:00:00.1 is listed twice (first on line 5)");
BAD(sriov_by_uuid, SRIOV("    vgpu-model: sriov\n", "        uuid: " U1 "\n"),
    "t.yaml:5:9: GPU 0 has the sriov vGPU model: its vGPUs are VFs, listed by \"vf\" (the kernel gives each its UUID)");
BAD(mdev_by_vf, SRIOV("    vgpu-model: mdev\n", "        vf: 8000:00:00.1\n"),
    "t.yaml:5:9: GPU 0 has the mdev vGPU model: its vGPUs are mdev devices, listed by \"uuid\" (\"vf\" needs vgpu-model: sriov)");
BAD(model_unknown, "gpus:\n  - {id: 0, vgpu-model: vf}\n",
    "t.yaml:2:25: \"vgpu-model\" expects one of mdev, sriov, got \"vf\"");
BAD(vfs_mdev, "gpus:\n  - {id: 0, vgpu-model: mdev, vfs: 2}\n",
    "t.yaml:2:36: \"vfs\" needs vgpu-model: sriov (the kernel refuses VFs to a GPU whose vGPUs are mdev devices)");
BAD(vfs_range, "gpus:\n  - {id: 0, vgpu-model: sriov, vfs: 65536}\n",
    "t.yaml:2:37: \"vfs\" expects a number from 0 to 65535, got \"65536\"");
/* Another stack's devices ("device" instead of "id"). */
BAD(dev_and_id, "gpus:\n  - id: 0\n    device: mtty\n",
    "t.yaml:2:5: a GPU is named by \"id\" (gpuvirt) or by \"device\" (another stack), not both");
BAD(dev_unknown_key, "gpus:\n  - device: mtty\n    numa: 1\n",
    "t.yaml:3:5: unknown key \"numa\" in a device (expected device, vfs, vgpus, vgpu-mode, sched, mig)");
BAD(dev_vgpu_neither, "gpus:\n  - device: mtty\n    vgpus:\n      - type: mtty-2\n",
    "t.yaml:4:9: a vGPU of device mtty needs \"uuid\" (mdev) or \"vf\" (nvidia-vf)");
BAD(dev_vgpu_both, "gpus:\n  - device: 41:00.0\n    vgpus:\n"
    "      - {uuid: " U1 ", vf: 41:00.4, type: H100-4C}\n",
    "t.yaml:4:9: a vGPU of device 0000:41:00.0 takes \"uuid\" (mdev) or \"vf\" (nvidia-vf), not both");
BAD(dev_bad_name, "gpus:\n  - device: ../mtty\n",
    "t.yaml:2:13: \"device\" expects a PCI address or a device name of 1 to 63 characters of letters, digits and '-', '_', '.', ':', got \"../mtty\"");
BAD(dev_bad_bdf, "gpus:\n  - device: 0000:41:20.0\n",
    "t.yaml:2:13: \"device\" expects a PCI address DDDD:BB:DD.F (as 0000:01:00.0; device 00 to 1f, function 0 to 7), got \"0000:41:20.0\"");
BAD(dev_twice, "gpus:\n  - device: 41:00.0\n  - device: 0000:41:00.0\n",
    "t.yaml:3:5: device 0000:41:00.0 is listed twice (first on line 2)");
BAD(dev_vf_twice, "gpus:\n  - device: 41:00.0\n    vgpus:\n"
    "      - {vf: 41:00.4, type: H100-4C}\n      - {vf: 0000:41:00.4, type: H100-5C}\n",
    "t.yaml:5:9: vGPU 0000:41:00.4 is listed twice (first on line 4)");
BAD(sim_no_model, "simulated-gpus:\n  - id: 0\n",
    "t.yaml:2:5: a simulated GPU needs \"model\"");
BAD(custom_no_vram, "simulated-gpus:\n  - {id: 1, model: custom, engines: 4}\n",
    "t.yaml:2:5: a custom simulated GPU needs \"vram\"");
BAD(custom_no_engines, "simulated-gpus:\n  - {id: 1, model: custom, vram: 8G}\n",
    "t.yaml:2:5: a custom simulated GPU needs \"engines\"");
BAD(vram_not_custom, "simulated-gpus:\n  - id: 1\n    model: a100-40gb\n    vram: 8G\n",
    "t.yaml:4:11: \"vram\" is only for model custom");
BAD(engines_not_custom, "simulated-gpus:\n  - {id: 1, model: a100-40gb, engines: 2}\n",
    "t.yaml:2:40: \"engines\" is only for model custom");
BAD(min_above_max, ONE_VGPU("        type: H200-35C\n        max-pct: 50\n        min-pct: 60\n"),
    "t.yaml:7:18: \"min-pct\" (60) must not be above \"max-pct\" (50)");
BAD(min_sum, "gpus:\n  - id: 3\n    vgpus:\n"
	"      - {uuid: " U1 ", type: H200-35C, min-pct: 60}\n"
	"      - {uuid: " U2 ", type: H200-35C}\n"
	"      - {uuid: " U3 ", type: H200-35C, min-pct: 41}\n",
    "t.yaml:6:9: the \"min-pct\" of the vGPUs of GPU 3 add up to more than 100");
BAD(homogeneous_types, "gpus:\n  - id: 0\n    vgpus:\n"
	"      - {uuid: " U1 ", type: H200-35C}\n"
	"      - {uuid: " U2 ", type: H200-17C}\n"
	"    vgpu-mode: homogeneous\n",
    "t.yaml:5:9: GPU 0 is homogeneous, but its vGPUs are of types H200-35C and H200-17C");

/* Duplicates. */
BAD(dup_uuid, "gpus:\n  - id: 0\n    vgpus:\n"
	"      - {uuid: " U1 ", type: H200-35C}\n"
	"      - {uuid: " U1 ", type: H200-35C}\n",
    "t.yaml:5:9: vGPU " U1 " is listed twice (first on line 4)");
BAD(dup_uuid_case, "gpus:\n  - id: 0\n    vgpus:\n"
	"      - {uuid: " U1 ", type: H200-35C}\n"
	"      - {uuid: 5A3C0001-0000-4000-8000-000000000001, type: H200-35C}\n",
    "t.yaml:5:9: vGPU " U1 " is listed twice (first on line 4)");
BAD(dup_uuid_gpus, "gpus:\n"
	"  - id: 0\n    vgpus:\n      - {uuid: " U1 ", type: H200-35C}\n"
	"  - id: 1\n    vgpus:\n      - {uuid: " U2 ", type: H200-35C}\n"
	"      - {uuid: " U1 ", type: H200-35C}\n",
    "t.yaml:8:9: vGPU " U1 " is listed twice (first on line 4)");
BAD(dup_gpu, "gpus:\n  - id: 0\n  - id: 1\n  - id: 0\n",
    "t.yaml:4:5: GPU 0 is listed twice (first on line 2)");
BAD(dup_sim, "simulated-gpus:\n  - {id: 2, model: a100-40gb}\n  - {id: 2, model: h100-80gb}\n",
    "t.yaml:3:5: simulated GPU 2 is listed twice (first on line 2)");
BAD(dup_key, "gpus:\n  - id: 0\n    id: 1\n",
    "t.yaml:3:5: \"id\" is given twice (first on line 2)");
BAD(dup_top_key, "gpus: []\ngpus: []\n",
    "t.yaml:2:1: \"gpus\" is given twice (first on line 1)");

/* The document itself. */
BAD(empty, "", "t.yaml:1:1: the file holds no document (write {} for an empty configuration)");
BAD(comment_only, "# nothing yet\n",
    "t.yaml:1:1: the file holds no document (write {} for an empty configuration)");
BAD(two_documents, "gpus: []\n---\ngpus: []\n",
    "t.yaml:2:1: only one document is allowed");
BAD(syntax_flow, "gpus: [\n",
    "t.yaml:2:1: did not find expected node content while parsing a flow node at line 2, column 1");
BAD(syntax_indent, "gpus:\n  - id: 0\n   vgpus: []\n",
    "t.yaml:3:4: did not find expected '-' indicator while parsing a block collection at line 2, column 3");
BAD(syntax_tab, "gpus:\n\t- id: 0\n",
    "t.yaml:2:1: found character that cannot start any token while scanning for the next token at line 2, column 1");
BAD(tag_custom, "gpus:\n  - !gpu {id: 0}\n",
    "t.yaml:2:5: unsupported tag \"!gpu\"");
BAD(json_unknown, "{\"gpus\": [{\"id\": 0, \"mag\": {}}]}",
    "t.yaml:1:21: unknown key \"mag\" in a GPU (expected id, vgpu-mode, vgpu-model, vfs, sched, vgpus, mig)");

/* The mig section: the form of the profiles, counts, mode, GIs. */
#define MIG(M) "gpus:\n  - id: 0\n    mig:\n" M
BAD(mig_list, MIG("      - 3g.71gb\n"),
    "t.yaml:4:7: \"mig\" expects a mapping, got a list");
BAD(mig_mode_word, MIG("      mode: mig\n"),
    "t.yaml:4:13: \"mode\" expects on or off, got a string (\"mig\")");
BAD(mig_mode_number, MIG("      mode: 1\n"),
    "t.yaml:4:13: \"mode\" expects on or off, got a number (1)");
BAD(mig_instances_map, MIG("      instances: {a: 1}\n"),
    "t.yaml:4:18: \"instances\" expects a list, got a mapping");
BAD(mig_profile_form, MIG("      instances: [3g.71]\n"),
    "t.yaml:4:19: \"instances\" expects a GI profile, as 1g.18gb, 1g.18gb+me or 1g.18gbx2 (a count of 1 to 7), got \"3g.71\"");
BAD(mig_profile_number, MIG("      instances: [35]\n"),
    "t.yaml:4:19: \"instances\" expects a GI profile, as 1g.18gb, 1g.18gb+me or 1g.18gbx2 (a count of 1 to 7), got a number (35)");
BAD(mig_profile_suffix, MIG("      instances: [1g.18gb+mex]\n"),
    "t.yaml:4:19: \"instances\" expects a GI profile, as 1g.18gb, 1g.18gb+me or 1g.18gbx2 (a count of 1 to 7), got \"1g.18gb+mex\"");
BAD(mig_count_zero, MIG("      instances: [1g.18gbx0]\n"),
    "t.yaml:4:19: \"1g.18gbx0\": the count after \"x\" must be from 1 to 7");
BAD(mig_count_eight, MIG("      instances: [1g.18gbx8]\n"),
    "t.yaml:4:19: \"1g.18gbx8\": the count after \"x\" must be from 1 to 7");
BAD(mig_too_many, MIG("      instances: [3g.71gb, 1g.18gbx6, 1g.18gb+me]\n"),
    "t.yaml:4:39: \"instances\" holds more than 7 GIs, the most a GPU has");
BAD(mig_off_instances, MIG("      mode: off\n      instances: [7g.141gb]\n"),
    "t.yaml:5:18: \"instances\" needs MIG mode on, and \"mode\" is off");
BAD(vgpu_gi_range, ONE_VGPU("        type: H200-3-71C\n        gi: 7\n"),
    "t.yaml:6:13: \"gi\" expects a number from 0 to 6, got \"7\"");
BAD(vgpu_gi_mig_off,
    "gpus:\n  - id: 0\n    mig: {mode: off}\n    vgpus:\n"
    "      - {uuid: " U1 ", type: H200-1-18C, gi: 2}\n",
    "t.yaml:5:9: vGPU " U1 " is on GI 2, but GPU 0 has MIG mode off");
BAD(vgpu_gi_twice,
    "gpus:\n  - id: 0\n    vgpus:\n"
    "      - {uuid: " U1 ", type: H200-1-18C, gi: 2}\n"
    "      - {uuid: " U2 ", type: H200-1-18C, gi: 2}\n",
    "t.yaml:5:9: GI 2 of GPU 0 holds one vGPU, and " U1 " is there (line 4)");
BAD(json_type_number, "{\"gpus\": [{\"id\": 0, \"vgpus\": [{\"uuid\": \"" U1 "\", \"type\": 35}]}]}",
    "t.yaml:1:88: \"type\" expects a string, got a number (35)");

/* passthrough: each error names its field and where it is. */
#define ONE_PT(V) "passthrough:\n  - device: 0000:01:00.0\n" V
BAD(pt_unknown_key, ONE_PT("    only: true\n"),
    "t.yaml:3:5: unknown key \"only\" in a passthrough device (expected device, driver, force, persistent)");
BAD(pt_no_device, "passthrough:\n  - driver: vfio-pci\n",
    "t.yaml:2:5: a passthrough device needs \"device\"");
BAD(pt_not_list, "passthrough:\n  device: 0000:01:00.0\n",
    "t.yaml:2:3: \"passthrough\" expects a list, got a mapping");
BAD(pt_entry_scalar, "passthrough:\n  - 0000:01:00.0\n",
    "t.yaml:2:5: a passthrough device must be a mapping, got a number (0000:01:00.0)");
BAD(pt_bdf_word, "passthrough:\n  - device: gpu0\n",
    "t.yaml:2:13: \"device\" expects a PCI address DDDD:BB:DD.F (as 0000:01:00.0; device 00 to 1f, function 0 to 7), got \"gpu0\"");
BAD(pt_bdf_dev, "passthrough:\n  - device: 0000:01:20.0\n",
    "t.yaml:2:13: \"device\" expects a PCI address DDDD:BB:DD.F (as 0000:01:00.0; device 00 to 1f, function 0 to 7), got \"0000:01:20.0\"");
BAD(pt_bdf_fn, "passthrough:\n  - device: '01:00.8'\n",
    "t.yaml:2:13: \"device\" expects a PCI address DDDD:BB:DD.F (as 0000:01:00.0; device 00 to 1f, function 0 to 7), got \"01:00.8\"");
BAD(pt_bdf_domain, "passthrough:\n  - device: 00000:01:00.0\n",
    "t.yaml:2:13: \"device\" expects a PCI address DDDD:BB:DD.F (as 0000:01:00.0; device 00 to 1f, function 0 to 7), got \"00000:01:00.0\"");
BAD(pt_bdf_list, "passthrough:\n  - device: [0000:01:00.0]\n",
    "t.yaml:2:13: \"device\" expects a PCI address DDDD:BB:DD.F (as 0000:01:00.0; device 00 to 1f, function 0 to 7), got a list");
BAD(pt_driver, ONE_PT("    driver: nouveau\n"),
    "t.yaml:3:13: \"driver\" expects one of gpuvirt_vfio_pci, vfio-pci, got \"nouveau\"");
BAD(pt_driver_stub, ONE_PT("    driver: pci-stub\n"),
    "t.yaml:3:13: \"driver\" expects one of gpuvirt_vfio_pci, vfio-pci, got \"pci-stub\"");
BAD(pt_force_string, ONE_PT("    force: \"yes\"\n"),
    "t.yaml:3:12: \"force\" expects on or off, got a string (\"yes\")");
BAD(pt_persistent_number, ONE_PT("    persistent: 1\n"),
    "t.yaml:3:17: \"persistent\" expects on or off, got a number (1)");
BAD(pt_device_twice, ONE_PT("    device: 0000:01:00.1\n"),
    "t.yaml:3:5: \"device\" is given twice (first on line 2)");
/* The same device in another spelling is the same device. */
BAD(pt_duplicate, ONE_PT("  - device: 01:00.0\n    driver: vfio-pci\n"),
    "t.yaml:3:13: device 0000:01:00.0 is listed twice (first on line 2)");
BAD(pt_duplicate_case,
    "passthrough:\n  - {device: 0000:0a:1f.7}\n  - {device: 0000:0A:1F.7}\n",
    "t.yaml:3:14: device 0000:0a:1f.7 is listed twice (first on line 2)");

FIXTURE_SETUP(bad)
{
}

FIXTURE_TEARDOWN(bad)
{
	config_free(&self->cfg);
}

TEST_F(bad, refused)
{
	ASSERT_EQ(-1, parse(variant->text, &self->cfg, self->err,
			    sizeof(self->err)));
	EXPECT_STREQ(variant->err, self->err);
	/* Nothing is left in the model. */
	EXPECT_EQ(0U, self->cfg.n_gpus);
	EXPECT_EQ(0U, self->cfg.n_sims);
	EXPECT_EQ(0U, self->cfg.n_pts);
}

/* Valid files. ------------------------------------------------------------- */

static const char full_yaml_text[] =
	"# the example of the admin guide\n"
	"simulated-gpus:\n"
	"  - id: 0\n"
	"    model: h200-141gb\n"
	"  - id: 7\n"
	"    model: custom\n"
	"    vram: 24G\n"
	"    engines: 4\n"
	"gpus:\n"
	"  - id: 0\n"
	"    vgpu-mode: homogeneous\n"
	"    sched:\n"
	"      policy: equal-share\n"
	"      timeslice-us: 2000\n"
	"    vgpus:\n"
	"      - uuid: " U1 "\n"
	"        type: H200-35C\n"
	"        weight: 100\n"
	"        min-pct: 0\n"
	"        max-pct: 100\n"
	"      - uuid: " U2 "\n"
	"        type: H200-35C\n"
	"  - id: 7\n"
	"    vgpu-mode: mixed\n";

static const char full_json_text[] =
	"{\"simulated-gpus\": [{\"id\": 0, \"model\": \"h200-141gb\"},\n"
	" {\"id\": 7, \"model\": \"custom\", \"vram\": 25769803776, \"engines\": 4}],\n"
	" \"gpus\": [{\"id\": 0, \"vgpu-mode\": \"homogeneous\",\n"
	"   \"sched\": {\"policy\": \"equal-share\", \"timeslice-us\": 2000},\n"
	"   \"vgpus\": [{\"uuid\": \"" U1 "\", \"type\": \"H200-35C\",\n"
	"              \"weight\": 100, \"min-pct\": 0, \"max-pct\": 100},\n"
	"             {\"uuid\": \"" U2 "\", \"type\": \"H200-35C\"}]},\n"
	"  {\"id\": 7, \"vgpu-mode\": \"mixed\"}]}\n";

static void check_full(struct __test_metadata *_metadata,
		       const struct config *cfg)
{
	const struct config_gpu *g;
	const struct config_vgpu *v;

	ASSERT_EQ(2U, cfg->n_sims);
	EXPECT_EQ(0U, cfg->sims[0].id);
	EXPECT_STREQ("h200-141gb", cfg->sims[0].model);
	EXPECT_EQ(7U, cfg->sims[1].id);
	EXPECT_STREQ("custom", cfg->sims[1].model);
	EXPECT_EQ(24ULL << 30, cfg->sims[1].vram);
	EXPECT_EQ(4U, cfg->sims[1].engines);

	ASSERT_EQ(2U, cfg->n_gpus);
	g = &cfg->gpus[0];
	EXPECT_EQ(0U, g->id);
	EXPECT_EQ(CONFIG_VGPU_MODE_HOMOGENEOUS, (int)g->vgpu_mode);
	EXPECT_TRUE(g->has_policy);
	EXPECT_EQ((uint32_t)GPUVIRT_SCHED_POLICY_EQUAL_SHARE, g->policy);
	EXPECT_TRUE(g->has_timeslice);
	EXPECT_EQ(2000U, g->timeslice_us);
	ASSERT_EQ(2U, g->n_vgpus);
	v = &g->vgpus[0];
	EXPECT_STREQ(U1, v->uuid);
	EXPECT_STREQ("H200-35C", v->type);
	EXPECT_TRUE(v->has_weight && v->has_min && v->has_max);
	EXPECT_EQ(100U, v->weight);
	EXPECT_EQ(0U, v->min_pct);
	EXPECT_EQ(100U, v->max_pct);
	v = &g->vgpus[1];
	EXPECT_STREQ(U2, v->uuid);
	EXPECT_FALSE(v->has_weight || v->has_min || v->has_max);

	g = &cfg->gpus[1];
	EXPECT_EQ(7U, g->id);
	EXPECT_EQ(CONFIG_VGPU_MODE_MIXED, (int)g->vgpu_mode);
	EXPECT_FALSE(g->has_policy || g->has_timeslice);
	EXPECT_EQ(0U, g->n_vgpus);

	EXPECT_EQ(&cfg->gpus[1], config_find_gpu(cfg, 7));
	EXPECT_EQ(NULL, config_find_gpu(cfg, 1));
	EXPECT_EQ(&cfg->sims[1], config_find_sim(cfg, 7));
	EXPECT_EQ(&cfg->gpus[0].vgpus[1], config_find_vgpu(&cfg->gpus[0], U2));
	EXPECT_EQ(NULL, config_find_vgpu(&cfg->gpus[0], U3));
}

TEST(full_yaml)
{
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse(full_yaml_text, &cfg, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_STREQ("", err);
	check_full(_metadata, &cfg);
	/* Lines, for the messages of apply. */
	EXPECT_EQ(3U, cfg.sims[0].line);
	EXPECT_EQ(10U, cfg.gpus[0].line);
	EXPECT_EQ(16U, cfg.gpus[0].vgpus[0].line);
	EXPECT_EQ(21U, cfg.gpus[0].vgpus[1].line);
	config_free(&cfg);
	EXPECT_EQ(0U, cfg.n_gpus);
}

/* JSON is YAML's flow style: the same model. */
TEST(full_json)
{
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse(full_json_text, &cfg, err, sizeof(err)))
		TH_LOG("%s", err);
	check_full(_metadata, &cfg);
	config_free(&cfg);
}

TEST(empty_mapping)
{
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse("{}\n", &cfg, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0U, cfg.n_gpus);
	EXPECT_EQ(0U, cfg.n_sims);
	config_free(&cfg);

	ASSERT_EQ(0, parse("---\nsimulated-gpus: []\ngpus: []\n...\n", &cfg,
			   err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0U, cfg.n_gpus);
	config_free(&cfg);
}

/* A mig section: instances with counts, mode on by default; vGPUs on GIs. */
TEST(mig)
{
	static const char text[] =
		"gpus:\n"
		"  - id: 0\n"
		"    mig:\n"
		"      instances: [3g.71gb, 2g.35gb, 1g.18gbx2, 1g.18gb+me]\n"
		"    vgpus:\n"
		"      - {uuid: " U1 ", type: H200-3-71C, gi: 0}\n"
		"      - {uuid: " U2 ", type: H200-1-18C}\n"
		"  - id: 1\n"
		"    mig: {mode: off}\n"
		"  - id: 2\n"
		"    mig: {mode: yes, instances: []}\n"
		"  - id: 3\n";
	const struct config_gpu *g;
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse(text, &cfg, err, sizeof(err))) TH_LOG("%s", err);
	g = &cfg.gpus[0];
	ASSERT_TRUE(g->mig.set);
	EXPECT_TRUE(g->mig.on);
	EXPECT_EQ(4U, g->mig.line);
	ASSERT_EQ(4U, g->mig.n_gis);
	EXPECT_STREQ("3g.71gb", g->mig.gis[0].profile);
	EXPECT_EQ(1U, g->mig.gis[0].count);
	EXPECT_STREQ("1g.18gb", g->mig.gis[2].profile);
	EXPECT_EQ(2U, g->mig.gis[2].count);
	EXPECT_STREQ("1g.18gb+me", g->mig.gis[3].profile);
	EXPECT_EQ(4U, g->mig.gis[3].line);
	ASSERT_EQ(2U, g->n_vgpus);
	EXPECT_TRUE(g->vgpus[0].has_gi);
	EXPECT_EQ(0U, g->vgpus[0].gi);
	EXPECT_FALSE(g->vgpus[1].has_gi);
	EXPECT_TRUE(cfg.gpus[1].mig.set);
	EXPECT_FALSE(cfg.gpus[1].mig.on);
	EXPECT_TRUE(cfg.gpus[2].mig.on);
	EXPECT_EQ(0U, cfg.gpus[2].mig.n_gis);
	EXPECT_FALSE(cfg.gpus[3].mig.set);
	config_free(&cfg);
}

/* Edge values and spellings that are accepted. */
TEST(edges)
{
	static const char text[] =
		"gpus:\n"
		"  - id: 4294967295\n"
		"    sched: {timeslice-us: 0}\n"
		"    vgpus:\n"
		"      - uuid: '5A3C0001-0000-4000-8000-0000000000AB'\n"
		"        type: \"35\"\n"
		"        weight: 10000\n"
		"        min-pct: 100\n"
		"        max-pct: 100\n"
		"      - uuid: " U2 "\n"
		"        type: A_b.c-D\n"
		"        weight: 0x10\n"
		"        max-pct: 1\n"
		"  - id: 0x2a\n"
		"    sched: {policy: weighted, timeslice-us: 100000}\n"
		"  - id: 1\n"
		"    sched: {timeslice-us: 100}\n"
		"    vgpus: []\n";
	const struct config_vgpu *v;
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse(text, &cfg, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(3U, cfg.n_gpus);
	EXPECT_EQ(UINT32_MAX, cfg.gpus[0].id);
	EXPECT_TRUE(cfg.gpus[0].has_timeslice);
	EXPECT_EQ(0U, cfg.gpus[0].timeslice_us);
	EXPECT_FALSE(cfg.gpus[0].has_policy);
	EXPECT_EQ(CONFIG_VGPU_MODE_UNSET, (int)cfg.gpus[0].vgpu_mode);
	ASSERT_EQ(2U, cfg.gpus[0].n_vgpus);
	v = &cfg.gpus[0].vgpus[0];
	/* Canonical lower case, as the kernel names it. */
	EXPECT_STREQ("5a3c0001-0000-4000-8000-0000000000ab", v->uuid);
	EXPECT_STREQ("35", v->type);
	EXPECT_EQ(10000U, v->weight);
	EXPECT_EQ(100U, v->min_pct);
	EXPECT_EQ(100U, v->max_pct);
	v = &cfg.gpus[0].vgpus[1];
	EXPECT_STREQ("A_b.c-D", v->type);
	EXPECT_EQ(16U, v->weight);
	EXPECT_FALSE(v->has_min);
	EXPECT_EQ(1U, v->max_pct);
	EXPECT_EQ(42U, cfg.gpus[1].id);
	EXPECT_EQ((uint32_t)GPUVIRT_SCHED_POLICY_WEIGHTED, cfg.gpus[1].policy);
	EXPECT_EQ(100000U, cfg.gpus[1].timeslice_us);
	EXPECT_EQ(100U, cfg.gpus[2].timeslice_us);
	EXPECT_EQ(0U, cfg.gpus[2].n_vgpus);
	config_free(&cfg);
}

/* Anchors and aliases: one scheduler block for several GPUs. */
TEST(aliases)
{
	static const char text[] =
		"gpus:\n"
		"  - id: 0\n"
		"    sched: &s\n"
		"      policy: fixed-share\n"
		"  - id: 1\n"
		"    sched: *s\n";
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse(text, &cfg, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(2U, cfg.n_gpus);
	EXPECT_EQ((uint32_t)GPUVIRT_SCHED_POLICY_FIXED_SHARE, cfg.gpus[1].policy);
	EXPECT_TRUE(cfg.gpus[1].has_policy);
	config_free(&cfg);
}

/* Mixed mode, or no mode, lets types differ; minimums may reach 100. */
TEST(mixed_types)
{
	static const char text[] =
		"gpus:\n"
		"  - id: 0\n"
		"    vgpu-mode: mixed\n"
		"    vgpus:\n"
		"      - {uuid: " U1 ", type: H200-35C, min-pct: 60}\n"
		"      - {uuid: " U2 ", type: H200-17C, min-pct: 40}\n"
		"  - id: 1\n"
		"    vgpus:\n"
		"      - {uuid: " U3 ", type: H200-35C}\n";
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse(text, &cfg, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(2U, cfg.gpus[0].n_vgpus);
	config_free(&cfg);
}

/* passthrough: defaults, canonical addresses, YAML and JSON. */
/* Devices of other stacks next to a GPU of ours, in one file. */
TEST(devices)
{
	static const char text[] =
		"gpus:\n"
		"  - id: 0\n"
		"    vgpus:\n"
		"      - {uuid: " U1 ", type: H200-35C}\n"
		"  - device: \"41:00.0\"\n"
		"    sched: {policy: weighted}\n"
		"    vgpus:\n"
		"      - vf: 0000:41:00.4\n"
		"        type: NVIDIA H100-4C\n"
		"  - device: mtty\n"
		"    vgpus:\n"
		"      - uuid: 7d2f0001-0000-4000-8000-000000000001\n"
		"        type: mtty-2\n"
		"        weight: 3\n";
	const struct config_dev *d;
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse(text, &cfg, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(1U, cfg.n_gpus);
	ASSERT_EQ(2U, cfg.n_devs);
	d = &cfg.devs[0];
	EXPECT_STREQ("0000:41:00.0", d->device);
	EXPECT_STREQ("sched", d->ours_only);
	EXPECT_EQ(5U, d->line);
	ASSERT_EQ(1U, d->n_vgpus);
	EXPECT_TRUE(d->vgpus[0].has_vf);
	EXPECT_FALSE(d->vgpus[0].has_uuid);
	EXPECT_STREQ("0000:41:00.4", d->vgpus[0].vf);
	EXPECT_STREQ("NVIDIA H100-4C", d->vgpus[0].type);
	EXPECT_EQ(NULL, d->vgpus[0].ours_only);
	d = &cfg.devs[1];
	EXPECT_STREQ("mtty", d->device);
	EXPECT_EQ(NULL, d->ours_only);
	ASSERT_EQ(1U, d->n_vgpus);
	EXPECT_TRUE(d->vgpus[0].has_uuid);
	EXPECT_STREQ("7d2f0001-0000-4000-8000-000000000001", d->vgpus[0].uuid);
	EXPECT_STREQ("weight", d->vgpus[0].ours_only);
	EXPECT_EQ(12U, d->vgpus[0].line);
	config_free(&cfg);
}

/* The sriov vGPU model: its keys, and VF vGPUs beside mdev ones. */
TEST(sriov)
{
	static const char text[] =
		"gpus:\n"
		"  - id: 0\n"
		"    vgpu-model: sriov\n"
		"    vfs: 4\n"
		"    vgpus:\n"
		"      - {vf: \"8000:00:00.1\", type: H200-35C, weight: 200}\n"
		"      - {vf: 8000:00:00.2, type: H200-35C, min-pct: 20}\n"
		"  - id: 1\n"
		"    vgpu-model: mdev\n"
		"    vgpus:\n"
		"      - {uuid: " U1 ", type: H200-35C}\n"
		"  - id: 2\n"
		"    vgpus:\n"
		"      - {vf: 8002:00:00.1, type: H200-35C}\n";
	const struct config_gpu *g;
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse(text, &cfg, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(3U, cfg.n_gpus);
	g = &cfg.gpus[0];
	EXPECT_EQ((unsigned int)CONFIG_VGPU_MODEL_SRIOV, (unsigned int)g->vgpu_model);
	EXPECT_TRUE(g->has_vfs);
	EXPECT_EQ(4U, g->vfs);
	ASSERT_EQ(2U, g->n_vgpus);
	EXPECT_STREQ("8000:00:00.1", g->vgpus[0].vf);
	EXPECT_STREQ("", g->vgpus[0].uuid);
	EXPECT_STREQ("8000:00:00.1", config_vgpu_name(&g->vgpus[0]));
	EXPECT_EQ(200U, g->vgpus[0].weight);
	EXPECT_EQ(&g->vgpus[1], config_find_vf(g, "8000:00:00.2"));
	EXPECT_EQ(NULL, config_find_vf(g, "8000:00:00.3"));
	g = &cfg.gpus[1];
	EXPECT_EQ((unsigned int)CONFIG_VGPU_MODEL_MDEV, (unsigned int)g->vgpu_model);
	EXPECT_FALSE(g->has_vfs);
	EXPECT_STREQ(U1, config_vgpu_name(&g->vgpus[0]));
	EXPECT_EQ(NULL, config_find_vf(g, ""));
	/* no model given: the GPU's own decides, at plan time */
	g = &cfg.gpus[2];
	EXPECT_EQ((unsigned int)CONFIG_VGPU_MODEL_UNSET, (unsigned int)g->vgpu_model);
	EXPECT_STREQ("8002:00:00.1", g->vgpus[0].vf);
	config_free(&cfg);
}

TEST(passthrough)
{
	static const char text[] =
		"passthrough:\n"
		"  - device: 0000:01:00.0\n"
		"  - device: \"0000:00:05.0\"\n"
		"    driver: vfio-pci\n"
		"    force: yes\n"
		"    persistent: true\n"
		"  - {device: 'AB:1F.7', driver: gpuvirt_vfio_pci, force: off}\n"
		"gpus: []\n";
	static const char json[] =
		"{\"passthrough\": [{\"device\": \"0000:01:00.0\", "
		"\"persistent\": true}]}";
	const struct config_pt *pt;
	struct config cfg;
	char err[512];

	ASSERT_EQ(0, parse(text, &cfg, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(3U, cfg.n_pts);
	pt = &cfg.pts[0];
	EXPECT_STREQ("0000:01:00.0", pt->device);
	EXPECT_EQ(CONFIG_PT_GPUVIRT, (int)pt->driver);
	EXPECT_FALSE(pt->force);
	EXPECT_FALSE(pt->persistent);
	EXPECT_EQ(2U, pt->line);
	pt = &cfg.pts[1];
	EXPECT_STREQ("0000:00:05.0", pt->device);
	EXPECT_EQ(CONFIG_PT_VFIO_PCI, (int)pt->driver);
	EXPECT_TRUE(pt->force);
	EXPECT_TRUE(pt->persistent);
	EXPECT_EQ(3U, pt->line);
	pt = &cfg.pts[2];
	EXPECT_STREQ("0000:ab:1f.7", pt->device);
	EXPECT_EQ(CONFIG_PT_GPUVIRT, (int)pt->driver);
	EXPECT_FALSE(pt->force);
	EXPECT_EQ(&cfg.pts[2], config_find_pt(&cfg, "0000:ab:1f.7"));
	EXPECT_EQ(NULL, config_find_pt(&cfg, "0000:01:00.1"));
	EXPECT_STREQ("vfio-pci", config_enum_name(config_pt_drivers,
						  CONFIG_PT_VFIO_PCI));
	config_free(&cfg);
	EXPECT_EQ(0U, cfg.n_pts);

	ASSERT_EQ(0, parse(json, &cfg, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(1U, cfg.n_pts);
	EXPECT_STREQ("0000:01:00.0", cfg.pts[0].device);
	EXPECT_TRUE(cfg.pts[0].persistent);
	config_free(&cfg);

	ASSERT_EQ(0, parse("passthrough: []\n", &cfg, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(0U, cfg.n_pts);
	config_free(&cfg);
}

/* A list longer than the limit, and one at it. */
TEST(list_limit)
{
	size_t n, len = 0, size = 64 * (CONFIG_MAX_GPUS + 2);
	char *text = malloc(size), err[512];
	struct config cfg;

	ASSERT_NE(NULL, text);
	len += (size_t)snprintf(text + len, size - len, "gpus:\n");
	for (n = 0; n < CONFIG_MAX_GPUS; n++)
		len += (size_t)snprintf(text + len, size - len, "  - id: %zu\n", n);
	ASSERT_EQ(0, config_parse("t.yaml", text, len, &cfg, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ((size_t)CONFIG_MAX_GPUS, cfg.n_gpus);
	config_free(&cfg);

	len += (size_t)snprintf(text + len, size - len, "  - id: %zu\n", n);
	ASSERT_EQ(-1, config_parse("t.yaml", text, len, &cfg, err, sizeof(err)));
	EXPECT_STREQ("t.yaml:2:3: \"gpus\" has more than 256 entries", err);
	config_free(&cfg);
	free(text);
}

/* A short buffer truncates the message but keeps it terminated. */
TEST(err_truncated)
{
	struct config cfg;
	char err[12];

	memset(err, 'x', sizeof(err));
	ASSERT_EQ(-1, parse("gpus: 1\n", &cfg, err, sizeof(err)));
	EXPECT_STREQ("t.yaml:1:7:", err);
	config_free(&cfg);
}

TEST(enum_names)
{
	EXPECT_STREQ("weighted", config_enum_name(sched_policy_names,
						  GPUVIRT_SCHED_POLICY_WEIGHTED));
	EXPECT_STREQ("mixed", config_enum_name(config_vgpu_modes,
					       CONFIG_VGPU_MODE_MIXED));
	EXPECT_EQ(NULL, config_enum_name(config_vgpu_modes, 99));
}

TEST_HARNESS_MAIN

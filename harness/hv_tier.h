/* hv_tier: the device tiers a program can be run on (CUDA, Intel XPU, Apple MPS, CPU), finding which are
 * present, and the environment that pins a run to one: the others hidden (CUDA_VISIBLE_DEVICES="",
 * ZE_AFFINITY_MASK="", HIP_VISIBLE_DEVICES="") and XPUIFY_DEVICE set for the compat helper. */
#ifndef HV_TIER_H
#define HV_TIER_H
#include "harness/hv_proc.h"
#include <stdbool.h>

/* HV_TIER_OPENCL is the C tier of a CUDA program fixed onto the portable layer: its patched copy built with the
 * layer's OpenCL backend (kernels translated to OpenCL C, docs/c-kernels.md) and run on the first OpenCL platform
 * (or XPUIFY_OPENCL_PLATFORM's); only when asked for by name (`--devices cuda,opencl`), never by `auto`. */
typedef enum { HV_TIER_CUDA, HV_TIER_XPU, HV_TIER_MPS, HV_TIER_CPU, HV_TIER_OPENCL, HV_TIER__COUNT } hv_tier;

typedef struct {
    bool present;
    char *how; /* how it was found ("nvidia-smi: 1 GPU: NVIDIA H100 80GB HBM3"), or why not (heap) */
} hv_tier_info;

const char *hv_tier_name(hv_tier t);
bool hv_tier_parse(const char *name, hv_tier *t);
bool hv_tier_is_accelerator(hv_tier t);
/* Probes the tiers marked in wanted (the CPU is always present). scratch: a directory for probe output.
 * python: the interpreter for the torch.xpu / MPS probes. */
void hv_tier_detect(const bool wanted[HV_TIER__COUNT], const char *scratch, const char *python,
                    hv_tier_info out[HV_TIER__COUNT]);
void hv_tier_info_free(hv_tier_info *t);
/* Adds the variables that pin a run to tier t. */
void hv_tier_env(hv_tier t, hv_proc_spec *s);
/* The C tier's build environment for tier t: XPUIFY_GPU_BACKEND (cuda, or opencl on the OpenCL tier), XPUIFY_CC
 * (`nvcc`, or `c++ -x c++ -DXPU_BACKEND_OPENCL`) and XPUIFY_LIBS (`-lOpenCL` on the OpenCL tier), so that one
 * build command `$XPUIFY_CC -O2 -o p p.cu $XPUIFY_LIBS` builds the program for each backend. */
void hv_tier_c_build_env(hv_tier t, hv_proc_spec *s);
#endif

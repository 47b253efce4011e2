#include "model/host_weights.h"

#include <stdio.h>
#include <string.h>

#include "model/sched.h"

/* The architectures whose blk.N.ssm_a is a selective scan's A (LLM_TENSOR_SSM_A, not _NOSCAN). */
static const char *const scan_archs[] = {"falcon-h1",  "granitehybrid",  "jamba", "mamba",
                                         "mamba2",     "nemotron_h",     "plamo2", "nemotron_h_moe"};

static bool ends_with(ggp_str name, const char *suffix)
{
    const size_t n = strlen(suffix);
    return name.len >= n && memcmp(name.ptr + name.len - n, suffix, n) == 0;
}

static bool is_scan_arch(ggp_str arch)
{
    for (size_t i = 0; i < sizeof scan_archs / sizeof scan_archs[0]; i++) {
        if (arch.len == strlen(scan_archs[i]) && memcmp(arch.ptr, scan_archs[i], arch.len) == 0)
            return true;
    }
    return false;
}

/* ARCH.suffix as an unsigned 32-bit number, 0 when not given. */
static uint64_t arch_u32(const ggp_file *keys, ggp_str arch, const char *suffix)
{
    char name[128];
    const int n = snprintf(name, sizeof name, "%.*s.%s", (int)arch.len, arch.ptr, suffix);
    const ggp_kv *kv = n > 0 && (size_t)n < sizeof name ? ggp_kv_find(keys, name, (size_t)n) : NULL;
    return kv && kv->value.type == GGP_V_U32 ? ggp_value_u64(keys, &kv->value) : 0;
}

/* Whether a scan's A (t) stays on the host: the loader probes a scan of
 * its model's shape. */
static bool scan_a_on_host(const ggp_file *keys, ggp_str arch, const ggp_tensor *t)
{
    if (!is_scan_arch(arch))
        return false;
    const bool per_head = t->ne[0] == 1;
    const uint64_t d_state = per_head ? arch_u32(keys, arch, "ssm.state_size") : (uint64_t)t->ne[0];
    const uint64_t heads = (uint64_t)t->ne[1], inner = arch_u32(keys, arch, "ssm.inner_size");
    return !ggfs_sched_gpu_runs_scan(per_head, (int64_t)d_state, heads ? (int64_t)(inner / heads) : 0);
}

bool ggfs_weight_host_only(const ggp_file *keys, ggp_str arch, const ggp_tensor *t)
{
    // (rwkv6's time_mix_first: the loader probes its op, wkv6, with a state of 123^4 floats, 0.9 GB, more than
    // the reference device's storage buffers take: llvmpipe's 128 MiB; a GPU whose buffers take a GiB keeps it
    // there, n_embd floats a layer)
    return (ends_with(t->name, ".ssm_a") && scan_a_on_host(keys, arch, t)) ||
           ends_with(t->name, ".time_mix_first.weight");
}

/*
 * The weights llama.cpp's loader keeps on the host whatever -ngl says:
 * those whose op the GPU does not run (llama_model_loader's
 * weight_buft_supported probes each weight's op on the device; the answers
 * are Vulkan's, as llvmpipe gives them). offload/'s placement of the
 * model's bytes and its graphs share this one answer.
 */
#ifndef GGFS_MODEL_HOST_WEIGHTS_H
#define GGFS_MODEL_HOST_WEIGHTS_H

#include <stdbool.h>

#include "ggp.h"

/* Whether layer tensor t of a model of architecture arch, with keys, stays
 * on the host. */
bool ggfs_weight_host_only(const ggp_file *keys, ggp_str arch, const ggp_tensor *t);

#endif

/*
 * Opening the model an `ollama://` name names (source/ollama_name.h): the
 * tag's manifest from the registry, the model layer's blob as a URL of the
 * mount's remote engine (header only, validated, cached, as any URL), and
 * the small layers read whole for the Modelfile and layers/
 * (model/ollama_layers.h).
 */
#ifndef GGFS_DAEMON_OLLAMA_MOUNT_H
#define GGFS_DAEMON_OLLAMA_MOUNT_H

#include "model/model.h"
#include "model/ollama_layers.h"
#include "source/remote_engine.h"

/* The model and its layers, with the models of its projector and adapter
 * layers in trees (NULL when it has none), or NULL after one line on
 * stderr naming the model and why it is refused (the status, the digest,
 * the layer, the offset). */
ggfs_model *ggfs_ollama_mount_open(const char *name, ggfs_remote_engine *remote, ggfs_ollama_layers **layers,
                                   ggfs_model *trees[GGFS_OLLAMA_TREES]);

#endif

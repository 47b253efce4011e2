/*
 * Hugging Face Hub names: hf://ORG/REPO/PATH[@REVISION] is the file PATH of
 * the model repository ORG/REPO at REVISION (after the name's last '@') (a branch, tag or commit;
 * default main), served at $HF_ENDPOINT/ORG/REPO/resolve/REVISION/PATH
 * (HF_ENDPOINT defaults to https://huggingface.co). The token for the Hub
 * comes from HF_TOKEN, else $HF_HOME/token, else
 * ~/.cache/huggingface/token.
 */
#ifndef GGFS_SOURCE_HF_NAME_H
#define GGFS_SOURCE_HF_NAME_H

#include <stdbool.h>
#include <stddef.h>

#define GGFS_HF_SCHEME "hf://"
#define GGFS_HF_DEFAULT_ENDPOINT "https://huggingface.co"

/* Fills *url (malloc'ed) with the name's resolve URL and *token (malloc'ed,
 * NULL when there is none) with the Hub token. False, with why filled,
 * when the name is not ORG/REPO/PATH with non-empty parts. */
bool ggfs_hf_resolve(const char *name, char **url, char **token, char *why, size_t why_size);

/* $HF_ENDPOINT without trailing slashes (or the default), malloc'ed; NULL
 * when out of memory. */
char *ggfs_hf_endpoint(void);
/* The Hub token (HF_TOKEN, $HF_HOME/token, ~/.cache/huggingface/token),
 * malloc'ed; NULL when there is none. */
char *ggfs_hf_token(void);

/* Where the file path of an hf:// name ends: before its last '@' (a path
 * may hold '@', a revision may not: hf://ORG/REPO/dir@x/m.gguf@main is
 * dir@x/m.gguf at main), else at its end. A path holding '@' so needs its
 * @REVISION written. */
size_t ggfs_hf_name_end(const char *name);

/* Whether the name's @REVISION is a commit (40 hex digits): the resolve
 * URL then names bytes that never change. */
bool ggfs_hf_names_commit(const char *name);

/* Whether HF_HUB_OFFLINE asks hf:// sources to make no request, as it
 * asks the Hub's own client: 1, ON, YES or TRUE, in any case. */
bool ggfs_hf_offline_asked(void);

#endif

/*
 * The Hub's JSON answers (fs/catalog/hf_api.c, store_hf_repo.c,
 * store_hf_author.c): the input is one answer's body, parsed whole as
 * every answer is (ggfs_hf_parse); a revision's object has its sha read
 * as the revision's is; a page's array has each entry added to a repo's
 * listing (under the repo's top and under a folder) and to an author's,
 * as a tree page's and an author page's entries are. The listing built
 * is freed (LeakSanitizer checks it all goes).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/hf_api.h"
#include "catalog/scan.h"
#include "catalog/store_hf_repo.h"
#include "util/log.h"
#include "quiet_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ggfs_log_set_sink(quiet);
    ggfs_api_reply reply;
    memset(&reply, 0, sizeof reply);
    reply.body = malloc(size + 1); // as api_get.c keeps a body: NUL-terminated
    if (!reply.body)
        return 0;
    memcpy(reply.body, data, size);
    reply.body[size] = '\0';
    reply.len = size;
    reply.status = 200;
    char why[256];
    json_object *o = ggfs_hf_parse(&reply, "hf://org/repo", why, sizeof why);
    free(reply.body);
    if (!o) {
        if (!memchr(why, '\0', sizeof why))
            abort();
        return 0;
    }
    json_object *sha;
    if (json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "sha", &sha)) {
        const char *s = json_object_get_string(sha);
        if (s && strlen(s) > (size_t)json_object_get_string_len(sha))
            abort();
    }
    if (json_object_is_type(o, json_type_array)) {
        ggfs_hf_repo *top = ggfs_hf_repo_new("org/repo", "hf://org/repo", NULL);
        ggfs_hf_repo *sub = ggfs_hf_repo_new("org/repo", "hf://org/repo/sub", NULL);
        ggfs_scan scan;
        memset(&scan, 0, sizeof scan);
        const size_t n = json_object_array_length(o);
        for (size_t i = 0; i < n && top && sub; i++) {
            json_object *e = json_object_array_get_idx(o, i);
            if (!ggfs_hf_repo_add_entry(top, "", e) || !ggfs_hf_repo_add_entry(sub, "sub", e) ||
                !ggfs_hf_author_add_entry("org", e, &scan))
                break;
        }
        ggfs_scan_finish(&scan);
        ggfs_scan_free(&scan);
        ggfs_hf_repo_free(top);
        ggfs_hf_repo_free(sub);
    }
    json_object_put(o);
    return 0;
}

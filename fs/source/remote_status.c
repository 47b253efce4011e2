/*
 * Rendering the `remote` file.
 */
#define _GNU_SOURCE // open_memstream
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "source/remote_status.h"

/* The last error on one line: line breaks would start a line of their own. */
static void put_error(FILE *out, const char *e)
{
    if (!*e) {
        fputs("none", out);
        return;
    }
    for (; *e; e++)
        fputc(*e == '\n' || *e == '\r' ? ' ' : *e, out);
}

char *ggfs_remote_status_text(ggfs_source *const *sources, size_t n, size_t *len)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, len);
    if (!out)
        return NULL;
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (!sources[i]->ops->status)
            continue;
        ggfs_source_status st = {0};
        sources[i]->ops->status(sources[i], &st);
        const ggfs_transfer_snapshot *t = &st.transfers;
        fprintf(out,
                "%sshard: %zu of %zu\nurl: %s\nsize: %" PRIu64 "\nin_memory: %" PRIu64 "\non_disk: %" PRIu64
                "\nfetched: %" PRIu64 "\nin_flight: %u\nmb_per_s_now: %.1f\nmb_per_s_average: %.1f\n"
                "retries: %" PRIu64 "\nlast_error: ",
                first ? "" : "\n", i + 1, n, st.url, st.size, st.in_memory, st.on_disk, t->received,
                t->in_flight, t->mb_per_s_now, t->mb_per_s_average, t->failures);
        put_error(out, t->last_error);
        fputc('\n', out);
        first = false;
    }
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/*
 * A text being written to metadata/KEY checked as it grows (edits.h,
 * ggfs_edits_check_start): refused as soon as no ending can make it a
 * value of the key's type, so the write itself fails where the writer
 * sees it; the close still parses the whole text (edits.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/edits_private.h"

/* The type a text written to `id` is read as, and the file's name (copied
 * into name, NAME_MAX + 1 bytes); false for a scratch file, whose text is
 * kept as it is, and for an id that is gone. */
static bool text_type(ggfs_edits *e, uint64_t id, ggp_value_type *type, char *name, size_t *name_len)
{
    pthread_mutex_lock(&e->lock);
    uint64_t slot, pos;
    ggp_str n = {NULL, 0};
    if (ggfs_ed_find_id(e, &e->st, id, &slot)) {
        *type = ggfs_ed_slot_entry(e, &e->st, slot)->type;
        n = ggfs_ed_slot_name(e, &e->st, slot);
    } else if (ggfs_ed_find_scratch_id(&e->st, id, &pos) && e->st.scratch[pos].pending) {
        *type = e->st.scratch[pos].type;
        n = (ggp_str){(const char *)e->st.scratch[pos].name->bytes, e->st.scratch[pos].name->len};
    }
    *name_len = n.len < 255 ? (size_t)n.len : 255;
    if (n.ptr)
        memcpy(name, n.ptr, *name_len);
    pthread_mutex_unlock(&e->lock);
    return n.ptr != NULL;
}

int ggfs_edits_check_start(ggfs_edits *e, uint64_t id, const char *text, size_t len, ggp_prefix_state *state)
{
    ggp_value_type type;
    char name[256];
    size_t name_len;
    if (!text_type(e, id, &type, name, &name_len))
        return 0;
    ggp_error err;
    if (ggp_parse_prefix(text, len, type, state, &err) == GGP_OK)
        return 0;
    char type_name[GGP_TYPE_TEXT_SIZE];
    ggp_value_type_format(type, type_name);
    ggfs_ed_log_key(name, name_len, "offset %" PRIu64 ": not a %s value: %s; the write "
                    "is refused and the value stays as it was", err.offset, type_name, err.msg);
    return EINVAL;
}

/*
 * An open text file: its text, rendered at open for reading; or, for a
 * file of an edited metadata/ open for writing, the text being written,
 * which becomes the key's value when the file is closed (edit_ops.h).
 *
 * The kernel may send RELEASE as soon as it has a read's reply, while the
 * replying thread is still in writev: each read holds a reference so the
 * text outlives the reply.
 */
#ifndef GGFS_TREE_OPEN_TEXT_H
#define GGFS_TREE_OPEN_TEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tree/mount.h"
#include "tree/text.h"
#include "util/dlist.h"

/* The open texts of a mount that are not freed yet. An unmount drops the
 * RELEASEs the kernel had queued and not yet sent (close returns before
 * its RELEASE is served), so a mount frees what is left of them when its
 * loop has ended (ggfs_open_texts_drain). */
typedef struct ggfs_open_texts {
    pthread_mutex_t lock;
    ggfs_dlink all;
} ggfs_open_texts;

typedef struct ggfs_open_text {
    atomic_int refs;
    ggfs_open_texts *set;           // where it is listed, or NULL
    ggfs_dlink link;
    ggfs_buffer text;
    // Files open for writing only:
    bool writable;
    pthread_mutex_t lock;           // the text, dirty and reserved
    ggfs_model_mount *mount;
    uint64_t id;                    // the key or scratch file (model/edits.h)
    uint64_t ino;                   // the inode opened: a write's pages land there
    bool dirty;                     // written since opened or last set
    bool truncated;                 // opened with O_TRUNC, not set since
    bool created;                   // the open made the file: a key once its text takes
    bool failed;                    // a text of this open was refused
    bool growing;                   // written only at its end since it was empty:
                                    // each write is checked (ggfs_edits_check_start)
    bool refused;                   // a write was: the rest are, and the close sets nothing
    ggp_prefix_state checked;       // what those checks have seen
    uint64_t reserved;              // bytes reserved with ggfs_edits_reserve
} ggfs_open_text;

void ggfs_open_texts_init(ggfs_open_texts *set);
/* Frees every open text still listed in set, once no request can use
 * them (the session's loop has ended), and set itself. */
void ggfs_open_texts_drain(ggfs_open_texts *set);

/* A new open text with one reference (for the open file), listed in set
 * (NULL: none); NULL when out of memory. Writable ones hold a lock. */
ggfs_open_text *ggfs_open_text_new(ggfs_open_texts *set, bool writable);

void ggfs_open_text_ref(ggfs_open_text *o);
/* Drops a reference; the last frees the text (and gives back what a
 * writable one reserved). */
void ggfs_open_text_put(ggfs_open_text *o);

#endif

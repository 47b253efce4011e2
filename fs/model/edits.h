/*
 * Edits over a model's header: keys set, added, typed and deleted while
 * the model is mounted, without writing the model. The edits are kept in
 * memory and, when the mount names a file for them, in that file too
 * (edits_file.h), rewritten after every change before the change is
 * answered. Each change makes a new view (view.h) of the keys and of
 * model.gguf's header, rebuilt as ggml's writer lays it out; the tensors'
 * descriptors and data never change, only where the data section starts.
 *
 * The keys, in order, are the first shard's own (each kept, replaced or
 * deleted where it is) and then the keys added, in the order they were
 * made. A deleted key of the model made again comes back where it was.
 *
 * Files in metadata/ whose names tools use for temporary files (see
 * ggfs_edits_is_scratch_name) are scratch files: they hold text and a
 * type but are no keys, are never saved, and are gone at unmount; renamed
 * over a key they set it, as `sed -i` and editors that save by renaming
 * expect. Keys whose change would move the data or break a split set
 * (general.alignment, split.*) are refused with EPERM.
 *
 * Everything is bounded (the limits below): past them a change fails with
 * EFBIG (one value) or ENOSPC (all of them) and a log line. All calls are
 * thread-safe; changes are made one at a time.
 */
#ifndef GGFS_MODEL_EDITS_H
#define GGFS_MODEL_EDITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggp.h"
#include "model/model.h"
#include "model/view.h"

#define GGFS_EDIT_VALUE_MAX (UINT64_C(16) << 20) // one value: its text as written and its encoding
#define GGFS_EDIT_TOTAL_MAX (UINT64_C(64) << 20) // edited and added keys and scratch texts, together;
                                                  // and, apart, the text of files open for writing
#define GGFS_EDIT_FILES_MAX 16384                 // keys added plus scratch files
#define GGFS_EDIT_ELEMENTS_MAX (UINT64_C(1) << 22) // array elements over all edited values
                                                  // (a file of edits is read whole by json-c)

typedef struct ggfs_edits ggfs_edits;

/* Starts editing model, whose views it then makes: from nothing, or from
 * the edits kept in `path` (NULL: kept in memory only; a path that does
 * not exist yet is made at the first change). Returns NULL when the file
 * cannot be read, is not an edits file, or does not fit the model, with
 * one line in why naming path, the key and the problem. */
ggfs_edits *ggfs_edits_open(ggfs_model *model, const char *path, char *why, size_t why_size);
void ggfs_edits_close(ggfs_edits *e);

/* The current view, with a reference for the caller (ggfs_view_put). */
ggfs_view *ggfs_edits_view(ggfs_edits *e);

/* Whether a file name (the key's full name) is one tools give temporary
 * files: starting with '.', ending in '~', ".swp", ".swx" or ".tmp",
 * vim's "4913", GNU sed -i's "sed" and six letters or digits, mktemp's
 * "tmp." and Python's "tmp" and eight letters, digits or '_'. */
bool ggfs_edits_is_scratch_name(const char *name, size_t len);

/* Whether a key may not change (general.alignment, split.*). */
bool ggfs_edits_is_protected(const char *name, size_t len);

/* ==== Changes: each returns 0 or an errno, and logs why it failed ==== */

/* Sets the key or scratch file `id` from text (parsed as the key's type;
 * kept as it is for a scratch file). EINVAL when the text is no value of
 * the type, EFBIG past GGFS_EDIT_VALUE_MAX, ENOSPC past the totals, EPERM
 * for a protected key, or the errno of saving. A text equal to the key's
 * own changes nothing. An id that is gone (deleted while open) is ignored.
 * *changed says whether the keys changed (a new view). */
int ggfs_edits_write(ggfs_edits *e, uint64_t id, const char *text, size_t len, bool *changed);

/* Checks the text being written to the key (or pending file) `id` so far:
 * 0 while some ending can still make it a value of the key's type (and
 * always for a scratch file), EINVAL with a log line naming the key, the
 * offset in the text and the problem as soon as none can
 * (ggp_parse_prefix). The text must have grown only at its end since the
 * last call with the same state. Changes nothing. */
int ggfs_edits_check_start(ggfs_edits *e, uint64_t id, const char *text, size_t len, ggp_prefix_state *state);

/* Makes a file called name in metadata/: a scratch file, a deleted key of
 * the model back where it was (its value as the model has it), or a new
 * string key "" at the end. *id is its id. EEXIST, EPERM (protected),
 * ENOSPC (GGFS_EDIT_FILES_MAX), EINVAL (a name no key may have).
 *
 * With pending (an open that creates the file), a key is not made yet:
 * the file is listed, holds no text and belongs to no view until the
 * first text written to it takes (ggfs_edits_write: a new key of the
 * file's type, or the deleted key of the model back with that value), or
 * until ggfs_edits_settle ends it. So a copy onto a new key that fails
 * leaves no key behind. */
int ggfs_edits_create(ggfs_edits *e, const char *name, size_t len, bool pending, uint64_t *id);

/* Ends the open that made the pending file `id` (its release): if it is
 * still pending, it becomes a key of this text (empty: its type's zero, as
 * a key touch made and typed has), or, when failed (a text of that open
 * was refused) or the text does not take, it goes. A file no longer
 * pending is left alone. Returns 0 or the errno of the text; *changed
 * says whether the keys changed. */
int ggfs_edits_settle(ggfs_edits *e, uint64_t id, const char *text, size_t len, bool failed, bool *changed);

/* Deletes the key or scratch file called name; *id was its id. ENOENT,
 * EPERM. */
int ggfs_edits_unlink(ggfs_edits *e, const char *name, size_t len, uint64_t *id);

/* Renames a key or scratch file. Onto a key (or a deleted key of the
 * model), the moved file's text sets it, read as that key's type, and the
 * file takes that place with its own id; onto a scratch name, a key
 * becomes a scratch file; onto a new name, a key moves to the end. The
 * source is gone afterwards. EINVAL when the text does not fit, EEXIST
 * with no_replace, EPERM, ENOENT. *ids: the moved file's id and the id
 * the target had (UINT64_MAX when none). */
int ggfs_edits_rename(ggfs_edits *e, const char *from, size_t from_len, const char *to, size_t to_len,
                      bool no_replace, uint64_t ids[2], bool *changed);

/* Gives the key or scratch file `id` the type named type_name (as
 * ggp_value_type_parse reads it). A key's value is read again as the new
 * type (EINVAL when it does not fit); an empty string or array, as `touch`
 * makes, becomes the new type's 0, false, "" or empty array. */
int ggfs_edits_set_type(ggfs_edits *e, uint64_t id, const char *type_name, size_t len, bool *changed);

/* ==== Scratch files ==== */

typedef struct ggfs_scratch_info {
    uint64_t id;
    char name[256];          // the full name, NUL-terminated
    size_t name_len;
    uint64_t size;           // bytes of text
    ggp_value_type type;
} ggfs_scratch_info;

/* The scratch file called name, or with this id, or the pos-th (from 0,
 * in the order they were made); false when there is none. */
bool ggfs_edits_scratch_named(ggfs_edits *e, const char *name, size_t len, ggfs_scratch_info *out);
bool ggfs_edits_scratch_of(ggfs_edits *e, uint64_t id, ggfs_scratch_info *out);
bool ggfs_edits_scratch_at(ggfs_edits *e, uint64_t pos, ggfs_scratch_info *out);

/* A copy of a scratch file's text, appended to out (free out->data). */
int ggfs_edits_scratch_text(ggfs_edits *e, uint64_t id, ggp_bytes *out);

/* How many changes to the keys there have been (edits read from a file
 * count as one): a file whose text comes from the keys changed when this
 * did. */
uint64_t ggfs_edits_generation(ggfs_edits *e);

/* The first id past the model's own keys: ids from it on are made by
 * edits (the tree numbers their inodes apart). */
uint64_t ggfs_edits_first_new_id(const ggfs_edits *e);

/* Reserves (delta > 0) or gives back (delta < 0) bytes of text held by
 * files open for writing; false when GGFS_EDIT_TOTAL_MAX would be passed. */
bool ggfs_edits_reserve(ggfs_edits *e, int64_t delta);

#endif

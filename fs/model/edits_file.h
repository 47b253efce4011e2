/*
 * The file -o edits=PATH keeps a mount's edits in: JSON, one edit a line,
 * so that it reads and diffs well and can be written by hand:
 *
 *   {
 *     "format": "gguf-fs edits 1",
 *     "keys": [
 *       {"key": "general.name", "type": "str", "value": "Fixed"},
 *       {"key": "tokenizer.ggml.eos_token_id", "type": "u32", "value": 2},
 *       {"key": "general.tags", "type": "arr[str]", "value": ["a", "b"]},
 *       {"key": "x.count", "type": "u64", "was": "u32", "value": 7}
 *     ],
 *     "deleted": [
 *       "general.url"
 *     ]
 *   }
 *
 * "keys" are the keys set, in the model's order (those of the model, each
 * where it is) and then the keys added, in order; each with its type (as
 * user.gguf.type names it), "was" when a key of the model was given
 * another type, and its value as metadata.json writes it. A value holding
 * bytes that are not UTF-8, which JSON parsers do not keep, is written as
 * "escaped": its metadata/KEY text with the escapes of an array's lines
 * (\\, \n, \r, \t, \xHH); a name that is not UTF-8 as "key_escaped" the same
 * way. "deleted" are the model's keys taken out.
 *
 * Saving writes a temporary file beside PATH, syncs it, renames it over
 * PATH and syncs the directory, so PATH is always either the old or the
 * new edits, whatever happens. Reading parses with json-c (strict) and
 * turns each value into its metadata/KEY text, which the caller parses as
 * the type, as any write is.
 */
#ifndef GGFS_MODEL_EDITS_FILE_H
#define GGFS_MODEL_EDITS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggp.h"

/* The most a file of edits may hold: json-c reads it whole, into an
 * object per value and element. The limits of edits.h keep what the
 * daemon writes well below it. */
#define GGFS_EDITS_FILE_MAX (UINT64_C(256) << 20)

/* One key set, as read from the file. */
typedef struct ggfs_edit_record {
    char *name;              // malloc'ed, name_len bytes (and a NUL)
    size_t name_len;
    ggp_value_type type;
    bool retyped;            // a key of the model given another type:
    ggp_value_type was;      // the type it has in the model
    char *text;              // malloc'ed: the value as metadata/KEY's text
    size_t text_len;
    bool wrong_kind;         // the JSON value is not of the type's kind (no text)
} ggfs_edit_record;

/* A name deleted, as read from the file. */
typedef struct ggfs_edit_deleted {
    char *name;              // malloc'ed
    size_t name_len;
} ggfs_edit_deleted;

typedef struct ggfs_edits_loaded {
    ggfs_edit_record *keys;
    uint64_t n_keys;
    ggfs_edit_deleted *deleted;
    uint64_t n_deleted;
} ggfs_edits_loaded;

/* Reads path. Returns 0, ENOENT when there is no such file or it is empty
 * (no edits yet), or another errno with one line in why naming path, where and what
 * is wrong. Free the result with ggfs_edits_loaded_free. */
int ggfs_edits_file_load(const char *path, ggfs_edits_loaded *out, char *why, size_t why_size);
void ggfs_edits_loaded_free(ggfs_edits_loaded *loaded);

/* One key to save: key `index` of `keys` (the edited keys' index). */
typedef struct ggfs_edit_save {
    uint64_t index;
    bool retyped;
    ggp_value_type was;
} ggfs_edit_save;

/* Writes the edits to path as above (atomically, synced; an existing
 * file keeps its mode, a new one is 0600). Returns 0 or an errno, with one
 * line in why. */
int ggfs_edits_file_save(const char *path, const ggp_file *keys, const ggfs_edit_save *set, uint64_t n_set,
                         const ggp_str *deleted, uint64_t n_deleted, char *why, size_t why_size);

#endif

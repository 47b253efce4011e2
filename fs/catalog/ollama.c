/*
 * The ollama/ view of an Ollama store: manifests (read as every store's
 * are, model/ollama_layers.h), each naming the blob of its model layer.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/ollama.h"
#include "model/ollama_layers.h"
#include "util/text.h"

/* ==== Manifests ==== */

bool ggfs_ollama_manifest_blob(const ggfs_folder *f, const char *store, const char *manifest,
                               char *blob, size_t cap, char *msg, size_t msgcap)
{
    char real[PATH_MAX];
    struct stat st;
    char *data = NULL;
    size_t len = 0;
    int err = ggfs_resolve_beneath(f, manifest, real, sizeof real, &st);
    if (!err && !S_ISREG(st.st_mode))
        err = EINVAL;
    if (!err)
        err = ggfs_folder_read_small(f, real, GGFS_OLLAMA_MAX_MANIFEST, &data, &len);
    if (err) {
        snprintf(msg, msgcap, "%s: %s", manifest,
                 err == EXDEV   ? "leads out of the folder"
                 : err == EFBIG ? "larger than 1 MiB, not a manifest"
                 : err == EINVAL ? "not a regular file"
                                 : strerror(err));
        return false;
    }
    // One reader of manifests for every store (model/ollama_layers.h):
    // every digest checked before it is part of a path.
    ggfs_ollama_manifest m;
    const bool parsed = ggfs_ollama_manifest_parse(data, len, manifest, &m, msg, msgcap);
    free(data);
    if (!parsed)
        return false;
    char name[sizeof "blobs/sha256-" + GGFS_OLLAMA_HEX];
    snprintf(name, sizeof name, "blobs/sha256-%s", m.layers[m.model].hex);
    ggfs_ollama_manifest_free(&m);
    if (!ggfs_path_join(blob, cap, store, name)) {
        snprintf(msg, msgcap, "%s: the blob's path is too long", manifest);
        return false;
    }
    return true;
}

/* ==== The view ==== */

typedef bool (*name_fn)(void *ctx, const char *name, const char *path, const char *real,
                        const struct stat *st);

/* One directory of manifests being walked by each_entry. */
typedef struct entry_walk {
    const ggfs_folder *f;
    const char *dir;
    bool want_dir;
    name_fn fn;
    void *ctx;
} entry_walk;

static bool resolve_entry(void *p, const char *name, unsigned char type)
{
    (void)type;
    const entry_walk *w = p;
    char path[PATH_MAX], real[PATH_MAX];
    struct stat st;
    if (!ggfs_path_join(path, sizeof path, w->dir, name) ||
        ggfs_resolve_beneath(w->f, path, real, sizeof real, &st) != 0)
        return true;
    if (w->want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
        return true;
    return w->fn(w->ctx, name, path, real, &st);
}

/* Calls fn for each entry of directory dir (relative to the folder) that
 * resolves inside the folder to a directory (want_dir) or a regular file,
 * leaving out names that start with a dot (the partial files of a pull);
 * a readdir that fails part-way gives what came before it. Returns ENOENT
 * when dir is not there, ENOMEM when fn returned false. */
static int each_entry(const ggfs_folder *f, const char *dir, bool want_dir, name_fn fn, void *ctx)
{
    char real_dir[PATH_MAX];
    struct stat st;
    int err = ggfs_resolve_beneath(f, dir, real_dir, sizeof real_dir, &st);
    if (err)
        return err;
    if (!S_ISDIR(st.st_mode))
        return ENOTDIR;
    entry_walk w = {.f = f, .dir = dir, .want_dir = want_dir, .fn = fn, .ctx = ctx};
    return ggfs_folder_each(f, real_dir, GGFS_EACH_SKIP_HIDDEN | GGFS_EACH_KEEP_PARTIAL, resolve_entry, &w);
}

typedef struct view_ctx {
    const ggfs_folder *f;
    const char *store;
    const char *place;   // of the directory being listed
    const char *skip;    // a subdirectory name not shown as a directory
    const char *name;    // NAME while listing its tags
    ggfs_scan *out;
} view_ctx;

static bool add_subdir(void *p, const char *name, const char *path, const char *real,
                       const struct stat *st)
{
    (void)path, (void)real;
    view_ctx *c = p;
    if (c->skip && strcmp(name, c->skip) == 0)
        return true;
    char place[PATH_MAX];
    if (!ggfs_path_join(place, sizeof place, c->place, name))
        return true;
    return ggfs_scan_add(c->out, GGFS_SCAN_OLLAMA, name, c->store, place, NULL, st, 0);
}

static bool add_tag(void *p, const char *tag, const char *path, const char *real,
                    const struct stat *st)
{
    view_ctx *c = p;
    char name[NAME_MAX + 1], blob[PATH_MAX], blob_real[PATH_MAX], msg[3 * PATH_MAX];
    if ((size_t)snprintf(name, sizeof name, "%s:%s", c->name, tag) >= sizeof name)
        return true;
    if (!ggfs_ollama_manifest_blob(c->f, c->store, path, blob, sizeof blob, msg, sizeof msg))
        return ggfs_scan_add(c->out, GGFS_SCAN_MODEL, name, path, real, msg, st, 0);
    struct stat bst;
    const int err = ggfs_resolve_beneath(c->f, blob, blob_real, sizeof blob_real, &bst);
    if (err || !S_ISREG(bst.st_mode)) {
        snprintf(msg, sizeof msg, "%s: model layer %s: %s", path, blob,
                 err == EXDEV ? "leads out of the folder"
                 : err        ? strerror(err)
                              : "not a regular file");
        return ggfs_scan_add(c->out, GGFS_SCAN_MODEL, name, path, real, msg, st, 0);
    }
    return ggfs_scan_add(c->out, GGFS_SCAN_MODEL, name, blob, blob_real, NULL, &bst, 0);
}

static bool add_name(void *p, const char *name, const char *path, const char *real,
                     const struct stat *st)
{
    (void)real, (void)st;
    view_ctx *c = p;
    c->name = name;
    const int err = each_entry(c->f, path, false, add_tag, c);
    return err != ENOMEM;
}

/* Adds NAME:TAG for every manifest under manifests/REGISTRY/NAMESPACE.
 * Returns 0, ENOENT when that directory is not there, or ENOMEM. */
static int add_models(view_ctx *c, const char *registry, const char *namespace)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s%smanifests/%s/%s", c->store, c->store[0] ? "/" : "",
                         registry, namespace) >= sizeof dir)
        return ENOENT;
    const int err = each_entry(c->f, dir, true, add_name, c);
    return err == ENOMEM ? ENOMEM : err ? ENOENT : 0;
}

/* Adds a directory for every subdirectory of manifests/SUB but `skip`. */
static int add_dirs(view_ctx *c, const char *sub, const char *skip)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s%smanifests%s%s", c->store, c->store[0] ? "/" : "",
                         sub[0] ? "/" : "", sub) >= sizeof dir)
        return ENOENT;
    c->skip = skip;
    const int err = each_entry(c->f, dir, true, add_subdir, c);
    c->skip = NULL;
    return err == ENOMEM ? ENOMEM : err ? ENOENT : 0;
}

int ggfs_ollama_list(const ggfs_folder *f, const char *store, const char *place, ggfs_scan *out)
{
    memset(out, 0, sizeof *out);
    view_ctx c = {.f = f, .store = store, .place = place, .out = out};
    char first[NAME_MAX + 1] = "";
    const char *second = NULL;
    const size_t n1 = strcspn(place, "/");
    if (n1 > NAME_MAX)
        return ENOENT;
    memcpy(first, place, n1);
    first[n1] = '\0';
    if (place[n1] == '/') {
        second = place + n1 + 1;
        if (!second[0] || strchr(second, '/'))
            return ENOENT;
    }
    // Each place gathers what `ollama list` names start with it; a place
    // nothing is under does not exist.
    int results[3] = {ENOENT, ENOENT, ENOENT};
    if (!place[0]) {
        results[0] = add_models(&c, GGFS_OLLAMA_REGISTRY, GGFS_OLLAMA_NAMESPACE);
        results[1] = add_dirs(&c, GGFS_OLLAMA_REGISTRY, GGFS_OLLAMA_NAMESPACE);
        results[2] = add_dirs(&c, "", GGFS_OLLAMA_REGISTRY);
        if (results[2] == ENOENT)
            results[2] = 0; // an empty store still has ollama/
    } else if (!second) {
        if (strcmp(first, GGFS_OLLAMA_NAMESPACE) != 0)
            results[0] = add_models(&c, GGFS_OLLAMA_REGISTRY, first);
        if (strcmp(first, GGFS_OLLAMA_REGISTRY) != 0)
            results[1] = add_dirs(&c, first, NULL);
    } else if (strcmp(first, GGFS_OLLAMA_REGISTRY) != 0) {
        results[0] = add_models(&c, first, second);
    }
    int err = ENOENT;
    for (int i = 0; i < 3; i++) {
        if (results[i] == ENOMEM) {
            err = ENOMEM;
            break;
        }
        if (results[i] == 0)
            err = 0;
    }
    if (err) {
        ggfs_scan_free(out);
        return err;
    }
    ggfs_scan_finish(out);
    return 0;
}

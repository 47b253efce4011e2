/*
 * The store of a Hugging Face repo at one commit (SPEC "Remote
 * collections"): hf://ORG/REPO[/DIR][@REVISION]. At mount the revision
 * is resolved to its commit (api/models/ORG/REPO/revision/REV, field
 * sha) and the repo's tree read whole (api/models/ORG/REPO/tree/COMMIT
 * [/DIR]?recursive=true, page after page by Link rel="next"); the GGUF
 * files found are kept, and every directory of the mount is listed from
 * them, for the mount's life (a commit never changes). A model is opened
 * as the URL mount of hf://ORG/REPO/PATH@COMMIT would be, through the
 * mount's remote engine.
 *
 * A hostile listing never escapes the mount nor takes the daemon down:
 * paths with empty, `.` or `..` components or NUL are left out with a
 * log line (util/store_name.h, every store's one check), components over
 * 255 bytes cut as file names are, a path listed twice kept once, at most
 * GGFS_HF_MAX_ENTRIES entries read (a longer listing is cut, with a log
 * line), and JSON that does not parse or is cut short, or a loop (a Link
 * back, pages adding nothing: util/page_guard.h) refuse the mount. Every
 * field is read by its type: one missing, null or of another type counts
 * as absent.
 */
#include <errno.h>
#include <json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog/store.h"
#include "catalog/hf_api.h"
#include "catalog/store_hf_repo.h"
#include "model/split_name.h"
#include "source/hf_name.h"
#include "source/published.h"
#include "util/log.h"
#include "util/store_name.h"
#include "util/text.h"
#include "util/url_text.h"

#define NAME_CUT 255         // bytes of a name component, at most
#define URL_CAP GGFS_API_URL_MAX

typedef struct hf_file {
    char *shown;          // its path in the mount (components cut)
    char *path;           // its path in the repo
    uint64_t size;
    ggfs_cat_ident ident; // its oid's first 16 bytes
    bool lfs;             // sha256 holds its LFS oid
    uint8_t sha256[32];   // what the Hub publishes of its bytes
} hf_file;

struct ggfs_hf_repo {
    ggfs_hf_root root;  // GGFS_HF_ROOT_REPO; an author's repo counts into the author's
    ggfs_hf_stats *stats; // where its requests count: its own root's, or its author's
    char *org_repo;   // ORG/REPO
    char *commit;
    char *source;     // as the user named it, for messages
    hf_file *files;   // sorted by shown path
    size_t n, cap;
    int64_t mounted;  // seconds: the entries' times
};

/* ==== Building the list of files ==== */

void ggfs_hf_repo_free(ggfs_hf_repo *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->files[i].shown);
        free(r->files[i].path);
    }
    free(r->files);
    free(r->org_repo);
    free(r->commit);
    free(r->source);
    ggfs_hf_root_destroy(&r->root);
    free(r);
}

/* The first 16 bytes of a hex oid (git's sha1, LFS's sha256); zeros for
 * what is not hex. */
static void ident_of_oid(const char *oid, ggfs_cat_ident *id)
{
    uint8_t b[16] = {0};
    for (size_t i = 0; i < 32 && oid && oid[i]; i++) {
        const char c = oid[i];
        const int v = ggfs_hex_value(c) < 0 ? 0 : ggfs_hex_value(c);
        b[i / 2] |= (uint8_t)(i % 2 ? v : v << 4);
    }
    memcpy(id->w, b, sizeof b);
}

static bool ends_gguf(const char *p, size_t n)
{
    return n > 5 && strcmp(p + n - 5, ".gguf") == 0;
}

/* Adds the file of one entry of a tree page when it is a GGUF file under
 * dir. Returns false when out of memory. */
typedef struct tree_ctx {
    ggfs_hf_repo *r;
    const char *dir;
} tree_ctx;

/* The string field key of o, or NULL when o is no object or the field is
 * missing, null or of another type. */
static const char *string_field(json_object *o, const char *key, size_t *len)
{
    json_object *v;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
        !json_object_is_type(v, json_type_string))
        return NULL;
    if (len)
        *len = (size_t)json_object_get_string_len(v);
    return json_object_get_string(v);
}

/* The byte count field key of o: an integer, 0 to 2^62 (SPEC: no number
 * over 2^62 is believed); false when missing, of another type or out of
 * that range. */
static bool size_field(json_object *o, const char *key, uint64_t *out)
{
    json_object *v;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
        !json_object_is_type(v, json_type_int))
        return false;
    const int64_t n = json_object_get_int64(v);
    if (n < 0 || (uint64_t)n > (UINT64_C(1) << 62))
        return false;
    *out = (uint64_t)n;
    return true;
}

static bool add_entry(void *ctx, json_object *e)
{
    ggfs_hf_repo *r = ((tree_ctx *)ctx)->r;
    const char *dir = ((tree_ctx *)ctx)->dir;
    size_t len = 0;
    const char *type = string_field(e, "type", NULL), *p = string_field(e, "path", &len);
    if (!type || strcmp(type, "file") != 0 || !p)
        return true;
    const size_t dlen = strlen(dir);
    if (!ends_gguf(p, len) || (dlen && (len <= dlen || strncmp(p, dir, dlen) != 0 || p[dlen] != '/')))
        return true;
    const char *rel = dlen ? p + dlen + 1 : p;
    const size_t rel_len = len - (size_t)(rel - p);
    const char *unfit = ggfs_store_path_unfit(p, len);
    char *shown = unfit ? NULL : ggfs_store_path_shown(rel, rel_len);
    if (!shown) {
        if (!unfit)
            return false;
        // Quoted as one line of at most 300 bytes: a hostile name
        // cannot make log lines of its own.
        char quoted[301];
        snprintf(quoted, sizeof quoted, "%s", p);
        ggfs_one_line(quoted);
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: listed path '%s' left out: %s\n", r->source, quoted, unfit);
        return true;
    }
    // lfs.size when there is an lfs object, else size; a size that is no
    // count leaves 0 (the model's own header says its size at open).
    uint64_t bytes = 0;
    json_object *lfs;
    const bool has_lfs = json_object_object_get_ex(e, "lfs", &lfs) && json_object_is_type(lfs, json_type_object);
    if (!(has_lfs && size_field(lfs, "size", &bytes)))
        size_field(e, "size", &bytes);
    const char *oid_hex = has_lfs ? string_field(lfs, "oid", NULL) : NULL;
    if (!oid_hex)
        oid_hex = string_field(e, "oid", NULL);
    if (r->n == r->cap) {
        const size_t cap = r->cap ? r->cap * 2 : 64;
        hf_file *grown = realloc(r->files, cap * sizeof *grown);
        if (!grown) {
            free(shown);
            return false;
        }
        r->files = grown;
        r->cap = cap;
    }
    hf_file *f = &r->files[r->n];
    f->shown = shown;
    f->path = strdup(p);
    f->size = bytes;
    ident_of_oid(oid_hex, &f->ident);
    // An LFS file's oid is the SHA-256 of its bytes (64 hex digits); a
    // file kept in git has only its blob's SHA-1, which is no digest of
    // the bytes alone.
    size_t lfs_len = 0;
    const char *lfs_oid = has_lfs ? string_field(lfs, "oid", &lfs_len) : NULL;
    ggfs_published published;
    f->lfs = lfs_oid && ggfs_published_set_hex(&published, GGFS_PUBLISHED_SHA256, lfs_oid, lfs_len, "lfs.oid");
    if (f->lfs)
        memcpy(f->sha256, published.digest, sizeof f->sha256);
    if (!f->path) {
        free(shown);
        return false;
    }
    r->n++;
    return true;
}

bool ggfs_hf_repo_add_entry(ggfs_hf_repo *r, const char *dir, json_object *e)
{
    tree_ctx c = {.r = r, .dir = dir};
    return add_entry(&c, e);
}

static int by_shown(const void *a, const void *b)
{
    return strcmp(((const hf_file *)a)->shown, ((const hf_file *)b)->shown);
}

/* $endpoint/api/models/ORG/REPO/ into url (cap bytes), each of ORG and
 * REPO escaped as one path segment; false when it does not fit. */
static bool api_repo_url(const char *endpoint, const char *org_repo, char *url, size_t cap)
{
    const size_t org_len = strcspn(org_repo, "/");
    snprintf(url, cap, "%s/api/models/", endpoint);
    return ggfs_url_append_escaped(url, cap, org_repo, org_len, false) && strlen(url) + 1 < cap &&
           strcat(url, "/") && ggfs_url_append_escaped(url, cap, org_repo + org_len + 1, strlen(org_repo + org_len + 1), false) &&
           strlen(url) + 1 < cap && strcat(url, "/");
}

/* Resolves rev to its commit into r->commit. */
static int resolve_revision(ggfs_hf_repo *r, ggfs_hf_get *get, void *get_ctx, const char *endpoint, const char *rev,
                            char *why, size_t cap)
{
    char url[URL_CAP], what[URL_CAP];
    snprintf(what, sizeof what, "hf://%s@%s", r->org_repo, rev);
    if (!api_repo_url(endpoint, r->org_repo, url, sizeof url) || strlen(url) + sizeof "revision/" > sizeof url ||
        !strcat(url, "revision/") || !ggfs_url_append_escaped(url, sizeof url, rev, strlen(rev), false)) {
        ggfs_hf_say(why, cap, "%s: the revision is too long", what);
        return -1;
    }
    ggfs_api_reply reply;
    int err = get(get_ctx, url, &reply, what, why, cap);
    json_object *o = err ? NULL : ggfs_hf_parse(&reply, what, why, cap), *sha;
    free(reply.body);
    if (!o)
        return -1;
    const char *s = json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "sha", &sha) &&
                            json_object_is_type(sha, json_type_string)
                        ? json_object_get_string(sha)
                        : NULL;
    if (!s || strlen(s) < 7 || strlen(s) > 64 || strspn(s, "0123456789abcdef") != strlen(s)) {
        ggfs_hf_say(why, cap, "%s: the answer names no commit (field sha)", what);
        err = -1;
    } else if (!(r->commit = strdup(s))) {
        ggfs_hf_say(why, cap, "%s: out of memory", what);
        err = -1;
    }
    json_object_put(o);
    return err;
}

/* Reads the tree at the commit, page after page, into r->files. */
static int read_tree(ggfs_hf_repo *r, ggfs_hf_get *get, void *get_ctx, const char *endpoint, const char *dir,
                     char *why, size_t cap)
{
    char url[URL_CAP], what[URL_CAP];
    snprintf(what, sizeof what, "hf://%s%s%s@%s: listing", r->org_repo, dir[0] ? "/" : "", dir, r->commit);
    const size_t base = api_repo_url(endpoint, r->org_repo, url, sizeof url) ? strlen(url) : sizeof url;
    if (base + strlen(r->commit) + 7 >= sizeof url) {
        ggfs_hf_say(why, cap, "%s: the repo's name is too long", what);
        return -1;
    }
    snprintf(url + base, sizeof url - base, "tree/%s%s", r->commit, dir[0] ? "/" : "");
    if (!ggfs_url_append_escaped(url, sizeof url, dir, strlen(dir), true) ||
        strlen(url) + sizeof "?recursive=true" > sizeof url) {
        ggfs_hf_say(why, cap, "%s: the folder's name is too long", what);
        return -1;
    }
    strcat(url, "?recursive=true");
    tree_ctx c = {.r = r, .dir = dir};
    if (ggfs_hf_pages_from(get, get_ctx, url, what, "path", add_entry, &c, why, cap) != 0)
        return -1;
    if (r->n > 1)
        qsort(r->files, r->n, sizeof *r->files, by_shown);
    // Paths are listed once (ggfs_hf_pages drops a path seen before); two
    // paths shown alike (a cut name's hash) keep the first.
    size_t kept = r->n ? 1 : 0;
    for (size_t i = 1; i < r->n; i++) {
        if (strcmp(r->files[kept - 1].shown, r->files[i].shown) == 0) {
            ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: '%s' is shown as another path is: left out\n", what,
                     r->files[i].shown);
            free(r->files[i].shown);
            free(r->files[i].path);
        } else {
            r->files[kept++] = r->files[i];
        }
    }
    r->n = kept;
    return 0;
}

bool ggfs_hf_is_collection(const char *name)
{
    if (strncmp(name, GGFS_HF_SCHEME, strlen(GGFS_HF_SCHEME)) != 0)
        return false;
    const size_t end = ggfs_hf_name_end(name);
    return !(end >= 5 && strncmp(name + end - 5, ".gguf", 5) == 0);
}

ggfs_hf_repo *ggfs_hf_repo_open(ggfs_remote_engine *remote, const char *name, char *why, size_t cap)
{
    const char *p = name + strlen(GGFS_HF_SCHEME);
    const size_t end = ggfs_hf_name_end(name) - strlen(GGFS_HF_SCHEME);
    const char *rev = p[end] == '@' ? p + end + 1 : "main";
    const char *slash = memchr(p, '/', end);
    if (!slash || slash == p || slash + 1 == p + end || !rev[0]) {
        ggfs_hf_say(why, cap, "%s: not an hf://ORG/REPO[/DIR][@REVISION] name", name);
        return NULL;
    }
    const char *slash2 = memchr(slash + 1, '/', (size_t)(p + end - slash - 1));
    const size_t or_len = slash2 ? (size_t)(slash2 - p) : end;
    char *dir = slash2 ? strndup(slash2 + 1, (size_t)(p + end - slash2 - 1)) : strdup("");
    ggfs_hf_repo *r = calloc(1, sizeof *r);
    if (r) {
        ggfs_hf_root_init(&r->root, GGFS_HF_ROOT_REPO);
        r->stats = &r->root.stats;
    }
    char *endpoint = ggfs_hf_endpoint(), *token = ggfs_hf_token();
    if (!r || !dir || !endpoint || !(r->org_repo = strndup(p, or_len)) || !(r->source = strdup(name))) {
        ggfs_hf_say(why, cap, "%s: out of memory", name);
        goto fail;
    }
    while (dir[0] && dir[strlen(dir) - 1] == '/')
        dir[strlen(dir) - 1] = '\0';
    char *check = dir[0] ? ggfs_store_path_shown(dir, strlen(dir)) : strdup("");
    char *repo_check = ggfs_store_path_shown(r->org_repo, strlen(r->org_repo));
    const bool plain = repo_check && strcmp(repo_check, r->org_repo) == 0;
    free(repo_check);
    if (!check || strcmp(check, dir) != 0 || strchr(r->org_repo + (slash - p) + 1, '/') || !plain) {
        ggfs_hf_say(why, cap, "%s: not an hf://ORG/REPO[/DIR][@REVISION] name (empty or dot segment)", name);
        free(check);
        goto fail;
    }
    free(check);
    if (ggfs_hf_repo_read(r, remote, endpoint, token, rev, dir, why, cap) != 0)
        goto fail;
    free(dir);
    free(endpoint);
    free(token);
    return r;
fail:
    free(dir);
    free(endpoint);
    free(token);
    ggfs_hf_repo_free(r);
    return NULL;
}

ggfs_hf_repo *ggfs_hf_repo_new(const char *org_repo, const char *source, ggfs_hf_stats *stats)
{
    ggfs_hf_repo *r = calloc(1, sizeof *r);
    if (r) {
        ggfs_hf_root_init(&r->root, GGFS_HF_ROOT_REPO);
        r->stats = stats;
    }
    if (r && (!(r->org_repo = strdup(org_repo)) || !(r->source = strdup(source)))) {
        ggfs_hf_repo_free(r);
        return NULL;
    }
    return r;
}

int ggfs_hf_repo_read(ggfs_hf_repo *r, ggfs_remote_engine *remote, const char *endpoint, const char *token,
                      const char *rev, const char *dir, char *why, size_t cap)
{
    ggfs_hf_getter g = {remote, r->stats, token};
    return ggfs_hf_repo_read_from(r, ggfs_hf_engine_get, &g, endpoint, rev, dir, why, cap);
}

int ggfs_hf_repo_read_from(ggfs_hf_repo *r, ggfs_hf_get *get, void *get_ctx, const char *endpoint, const char *rev,
                           const char *dir, char *why, size_t cap)
{
    r->mounted = (int64_t)time(NULL);
    return resolve_revision(r, get, get_ctx, endpoint, rev, why, cap) != 0 ||
                   read_tree(r, get, get_ctx, endpoint, dir, why, cap) != 0
               ? -1
               : 0;
}

/* ==== The store ==== */

/* hf://ORG/REPO/PATH@COMMIT, malloc'ed; NULL when out of memory. */
static char *model_name(const ggfs_hf_repo *r, const char *path)
{
    const size_t len = strlen(GGFS_HF_SCHEME) + strlen(r->org_repo) + strlen(path) + strlen(r->commit) + 3;
    char *url = malloc(len);
    if (url)
        snprintf(url, len, "%s%s/%s@%s", GGFS_HF_SCHEME, r->org_repo, path, r->commit);
    return url;
}

static void attrs_of(const ggfs_hf_repo *r, bool dir, uint64_t size, const ggfs_cat_ident *id,
                     ggfs_cat_attrs *a)
{
    *a = (ggfs_cat_attrs){
        .atime = r->mounted,
        .mtime = r->mounted,
        .ctime = r->mounted,
        .mode = dir ? S_IFDIR | 0555 : S_IFREG | 0444,
        .uid = (uint32_t)getuid(),
        .gid = (uint32_t)getgid(),
        .size = (int64_t)size,
    };
    if (id)
        a->ident = *id;
}

/* An author's repo that cannot be listed: one entry, `error`, a
 * directory holding the file error that says why. */
static int list_error(const char *why, ggfs_scan *out)
{
    ggfs_cat_attrs a;
    memset(&a, 0, sizeof a);
    a.mode = S_IFREG | 0444;
    a.atime = a.mtime = a.ctime = (int64_t)time(NULL);
    a.uid = (uint32_t)getuid();
    a.gid = (uint32_t)getgid();
    if (!ggfs_scan_add_attrs(out, GGFS_CAT_MODEL, "error", "", "", why, &a, 0)) {
        ggfs_scan_free(out);
        return ENOMEM;
    }
    return 0;
}

static int list_repo(const ggfs_store_env *env, const ggfs_store_dir *dir, ggfs_scan *out)
{
    memset(out, 0, sizeof *out);
    // A repo mount's one repo; an author mount's repo named by the path
    // of the directory (ORG/REPO), read when first looked into.
    const ggfs_hf_repo *r = env->root;
    if (((const ggfs_hf_root *)env->root)->type == GGFS_HF_ROOT_AUTHOR) {
        char why[2048]; // the error file holds a URL and a message
        r = ggfs_hf_author_repo(env->root, env->remote, dir->path, why, sizeof why);
        if (!r)
            return errno == ENOMEM ? ENOMEM : list_error(why, out);
    }
    const size_t plen = strlen(dir->real);
    char sub[4096];
    // The files are sorted by path: a folder's files, and a split set's
    // shards, come one after another, so each is added once, at its first.
    char last[NAME_CUT + 1] = "";
    for (size_t i = 0; i < r->n; i++) {
        const hf_file *f = &r->files[i];
        if (plen && (strncmp(f->shown, dir->real, plen) != 0 || f->shown[plen] != '/'))
            continue;
        const char *rest = f->shown + (plen ? plen + 1 : 0);
        const char *slash = strchr(rest, '/');
        ggfs_cat_attrs a;
        bool ok;
        if (slash) {
            // A folder holding GGUF files: its own place.
            const int n = snprintf(sub, sizeof sub, "%.*s", (int)(slash - f->shown), f->shown);
            if (n < 0 || (size_t)n >= sizeof sub)
                continue;
            char name[NAME_CUT + 1];
            snprintf(name, sizeof name, "%.*s", (int)(slash - rest), rest);
            if (strcmp(name, last) == 0)
                continue;
            memcpy(last, name, sizeof name);
            attrs_of(r, true, 0, NULL, &a);
            ok = ggfs_scan_add_attrs(out, GGFS_CAT_HF_REPO, name, dir->path, sub, NULL, &a, 0);
        } else {
            size_t prefix_len;
            unsigned k, n;
            char name[NAME_CUT + 1];
            uint32_t shards = 0;
            if (ggfs_split_name_parse(rest, &prefix_len, &k, &n) && prefix_len + 5 <= NAME_CUT) {
                // A split set once, under its name, at its lowest shard.
                snprintf(name, sizeof name, "%.*s.gguf", (int)prefix_len, rest);
                shards = n;
            } else {
                snprintf(name, sizeof name, "%s", rest);
            }
            if (shards && strcmp(name, last) == 0)
                continue;
            memcpy(last, name, sizeof name);
            attrs_of(r, false, f->size, &f->ident, &a);
            // Its path is its name as a URL mount's: the repo's file at the commit.
            char *url = model_name(r, f->path);
            ok = url && ggfs_scan_add_attrs(out, GGFS_CAT_MODEL, name, url, f->shown, NULL, &a, shards);
            free(url);
        }
        if (!ok) {
            ggfs_scan_free(out);
            return ENOMEM;
        }
    }
    ggfs_scan_finish(out);
    // A directory the listing showed has files under it; one that has
    // none (nothing the mount shows) is listed empty, never ENOENT.
    return 0;
}

static ggfs_model *open_repo_model(const ggfs_store_env *env, const ggfs_store_model *m, char *msg, size_t cap,
                                   int *err)
{
    if (!m->path[0]) { // an author's repo that could not be listed
        *err = EIO;
        return NULL;
    }
    ggfs_model_error merr;
    ggfs_model *model = ggfs_model_open(m->path, env->remote, &merr);
    ggfs_hf_stats *stats = &((ggfs_hf_root *)env->root)->stats;
    if (model) {
        atomic_fetch_add(&stats->models_opened, 1);
        for (uint32_t k = 0; k < model->n_shards; k++)
            atomic_fetch_add(&stats->header_bytes, ggp_header_end(model->shards[k].file));
    }
    if (!model) {
        const ggp_error *e = &merr.error;
        if (e->code == GGP_ERR_NOMEM) {
            *err = ENOMEM;
        } else {
            ggfs_store_model_error(merr.where, e, msg, cap);
            *err = EIO;
        }
    }
    return model;
}

/* The repo the model of path (hf://ORG/REPO/PATH@COMMIT) was listed in:
 * the mount's, or the author's repo ORG/REPO (read when it was listed). */
static const ggfs_hf_repo *repo_of(const ggfs_store_env *env, const char *path)
{
    if (((const ggfs_hf_root *)env->root)->type != GGFS_HF_ROOT_AUTHOR)
        return env->root;
    const char *org = path + strlen(GGFS_HF_SCHEME), *slash = strchr(org, '/');
    const char *slash2 = slash ? strchr(slash + 1, '/') : NULL;
    char key[512], why[256];
    if (strncmp(path, GGFS_HF_SCHEME, strlen(GGFS_HF_SCHEME)) != 0 || !slash2 ||
        (size_t)(slash2 - org) >= sizeof key)
        return NULL;
    snprintf(key, sizeof key, "%.*s", (int)(slash2 - org), org);
    return ggfs_hf_author_repo(env->root, env->remote, key, why, sizeof why);
}

/* The file of r a source named name (model_name's form) was opened from,
 * or NULL. */
static const hf_file *listed_file(const ggfs_hf_repo *r, const char *name)
{
    const size_t scheme = strlen(GGFS_HF_SCHEME), repo = strlen(r->org_repo), commit = strlen(r->commit);
    const size_t len = strlen(name);
    if (len <= scheme + repo + 1 + 1 + commit || strncmp(name, GGFS_HF_SCHEME, scheme) != 0 ||
        strncmp(name + scheme, r->org_repo, repo) != 0 || name[scheme + repo] != '/' ||
        name[len - commit - 1] != '@' || strcmp(name + len - commit, r->commit) != 0)
        return NULL;
    const char *path = name + scheme + repo + 1;
    const size_t path_len = len - commit - 1 - (scheme + repo + 1);
    for (size_t i = 0; i < r->n; i++)
        if (strlen(r->files[i].path) == path_len && memcmp(r->files[i].path, path, path_len) == 0)
            return &r->files[i];
    return NULL;
}

/* What the tree listing says of a file: its lfs.oid, and its size
 * (lfs.size, else size). */
static bool published_of(const ggfs_store_env *env, const ggfs_store_model *m, const char *name, ggfs_published *out)
{
    const ggfs_hf_repo *r = repo_of(env, m->path);
    const hf_file *f = r && r->commit ? listed_file(r, name) : NULL;
    if (!f)
        return false;
    memset(out, 0, sizeof *out);
    if (f->lfs) {
        out->kind = GGFS_PUBLISHED_SHA256;
        memcpy(out->digest, f->sha256, sizeof f->sha256);
        snprintf(out->where, sizeof out->where, "lfs.oid");
    }
    out->size = f->size;
    return true;
}

static char *status_text(const ggfs_store_env *env, size_t *len)
{
    return ggfs_hf_status_text(env->root, env->remote, len);
}

static void free_root(void *root)
{
    if (((const ggfs_hf_root *)root)->type == GGFS_HF_ROOT_AUTHOR)
        ggfs_hf_author_free(root);
    else
        ggfs_hf_repo_free(root);
}

const ggfs_store ggfs_store_hf_repo = {
    .name = "hf repo",
    .life = GGFS_LIFE_MOUNT,
    .relist_on_opendir = false,
    .ident_by_place = false,
    .read_ahead = true,
    .list = list_repo,
    .open_model = open_repo_model,
    .published = published_of,
    .root_free = free_root,
    .status = status_text,
};

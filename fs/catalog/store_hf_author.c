/*
 * The store of a Hugging Face author (SPEC "Remote collections"): hf://ORG
 * mounts one directory per repo of ORG that holds GGUF files, listed by
 * api/models?author=ORG&filter=gguf (paged by Link rel="next") and listed
 * again when older than -o listing_ttl_s (300 s by default for an
 * author). A repo is resolved (at main) and its listing read when first
 * looked into, then kept for the mount's life as a repo mount's is; its
 * directories are the repo store's (store_hf_repo.c). A repo that cannot
 * be read lists as one entry, `error`, saying why, for the mount's life.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog/hf_api.h"
#include "catalog/store.h"
#include "catalog/store_hf_repo.h"
#include "source/hf_name.h"
#include "util/log.h"
#include "util/store_name.h"
#include "util/text.h"
#include "util/url_text.h"

typedef struct author_repo {
    char *key;          // ORG/REPO
    ggfs_hf_repo *repo; // read once
} author_repo;

struct ggfs_hf_author {
    ggfs_hf_root root;  // GGFS_HF_ROOT_AUTHOR, and the counts of every repo's requests
    char *org, *source, *endpoint, *token;
    pthread_mutex_t lock; // the repos read so far (never held across a request)
    author_repo *repos;
    size_t n, cap;
};

bool ggfs_hf_is_author(const char *name)
{
    const char *p = name + strlen(GGFS_HF_SCHEME);
    return strncmp(name, GGFS_HF_SCHEME, strlen(GGFS_HF_SCHEME)) == 0 && p[0] && !strchr(p, '/') && !strchr(p, '@');
}

void ggfs_hf_author_free(ggfs_hf_author *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++) {
        free(a->repos[i].key);
        ggfs_hf_repo_free(a->repos[i].repo);
    }
    free(a->repos);
    pthread_mutex_destroy(&a->lock);
    free(a->org);
    free(a->source);
    free(a->endpoint);
    free(a->token);
    ggfs_hf_root_destroy(&a->root);
    free(a);
}

/* The first page's URL of the author's GGUF repos. */
static bool first_url(const ggfs_hf_author *a, char *url, size_t cap)
{
    snprintf(url, cap, "%s/api/models?author=", a->endpoint);
    return ggfs_url_append_escaped(url, cap, a->org, strlen(a->org), false) &&
           strlen(url) + sizeof "&filter=gguf" <= cap && strcat(url, "&filter=gguf");
}

/* What one listing of the author's repos gathers. */
typedef struct repos_ctx {
    const ggfs_hf_author *a;
    ggfs_scan *out;
    bool oom;
} repos_ctx;

/* Adds the repo of one entry (its id ORG/NAME): a directory NAME. An id
 * of another author, or whose NAME is no plain file name, is left out
 * with a log line. */
static bool add_repo(void *ctx, json_object *e)
{
    repos_ctx *c = ctx;
    json_object *id;
    if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "id", &id) ||
        !json_object_is_type(id, json_type_string))
        return true;
    const char *s = json_object_get_string(id);
    const size_t len = (size_t)json_object_get_string_len(id), olen = strlen(c->a->org);
    // ORG/NAME, NAME one component by the stores' one check, at most 255
    // bytes (the Hub allows 96: a longer one is no repo of its).
    const bool of_org = len > olen + 1 && strncmp(s, c->a->org, olen) == 0 && s[olen] == '/';
    const char *name = of_org ? s + olen + 1 : s;
    const size_t name_len = of_org ? len - olen - 1 : len;
    if (!of_org || ggfs_store_path_unfit(name, name_len) || memchr(name, '/', name_len) ||
        name_len > GGFS_STORE_NAME_MAX) {
        char quoted[301]; // one line: a hostile id makes no log line of its own
        snprintf(quoted, sizeof quoted, "%s", s);
        ggfs_one_line(quoted);
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: listed repo '%s' is not %s/NAME: left out\n", c->a->source, quoted,
                 c->a->org);
        return true;
    }
    ggfs_cat_attrs a;
    memset(&a, 0, sizeof a);
    a.mode = S_IFDIR | 0555;
    a.atime = a.mtime = a.ctime = (int64_t)time(NULL);
    a.uid = (uint32_t)getuid();
    a.gid = (uint32_t)getgid();
    // The directory's path is the repo (its key here); its place in the
    // repo, its root.
    if (!ggfs_scan_add_attrs(c->out, GGFS_CAT_HF_REPO, name, s, "", NULL, &a, 0))
        c->oom = true;
    return !c->oom;
}

bool ggfs_hf_author_add_entry(const char *org, json_object *e, ggfs_scan *out)
{
    ggfs_hf_author a = {.org = (char *)org, .source = (char *)org};
    repos_ctx c = {.a = &a, .out = out};
    return add_repo(&c, e);
}

/* Lists the author's repos into out; -1 with why when refused. */
static int read_repos(ggfs_hf_author *a, ggfs_remote_engine *remote, ggfs_scan *out, char *why, size_t cap)
{
    char url[GGFS_API_URL_MAX], what[512];
    snprintf(what, sizeof what, "hf://%s: listing", a->org);
    memset(out, 0, sizeof *out);
    if (!first_url(a, url, sizeof url)) {
        ggfs_hf_say(why, cap, "%s: the author's name is too long", what);
        return -1;
    }
    repos_ctx c = {.a = a, .out = out};
    if (ggfs_hf_pages(remote, &a->root.stats, url, a->token, what, "id", add_repo, &c, why, cap) != 0) {
        ggfs_scan_free(out);
        return -1;
    }
    ggfs_scan_finish(out);
    return 0;
}

ggfs_hf_author *ggfs_hf_author_new(const char *name, char *why, size_t cap)
{
    ggfs_hf_author *a = calloc(1, sizeof *a);
    if (!a || pthread_mutex_init(&a->lock, NULL) != 0) {
        free(a);
        ggfs_hf_say(why, cap, "%s: out of memory", name);
        return NULL;
    }
    ggfs_hf_root_init(&a->root, GGFS_HF_ROOT_AUTHOR);
    a->token = ggfs_hf_token();
    if (!(a->org = strdup(name + strlen(GGFS_HF_SCHEME))) || !(a->source = strdup(name)) ||
        !(a->endpoint = ggfs_hf_endpoint())) {
        ggfs_hf_author_free(a);
        ggfs_hf_say(why, cap, "%s: out of memory", name);
        return NULL;
    }
    if (strcmp(a->org, ".") == 0 || strcmp(a->org, "..") == 0) {
        ggfs_hf_author_free(a);
        ggfs_hf_say(why, cap, "%s: not an hf://ORG name (a dot segment)", name);
        return NULL;
    }
    return a;
}

ggfs_hf_author *ggfs_hf_author_open(ggfs_remote_engine *remote, const char *name, char *why, size_t cap)
{
    ggfs_hf_author *a = ggfs_hf_author_new(name, why, cap);
    if (!a)
        return NULL;
    // The mount is refused now when the author's listing is.
    ggfs_scan first;
    if (read_repos(a, remote, &first, why, cap) != 0) {
        ggfs_hf_author_free(a);
        return NULL;
    }
    ggfs_scan_free(&first);
    return a;
}

/* The repo of key read so far, or NULL (a->lock held). */
static ggfs_hf_repo *kept_repo(const ggfs_hf_author *a, const char *key)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->repos[i].key, key) == 0)
            return a->repos[i].repo;
    return NULL;
}

const ggfs_hf_repo *ggfs_hf_author_repo(ggfs_hf_author *a, ggfs_remote_engine *remote, const char *key, char *why,
                                        size_t cap)
{
    ggfs_hf_getter g = {remote, &a->root.stats, a->token};
    return ggfs_hf_author_repo_from(a, ggfs_hf_engine_get, &g, key, why, cap);
}

const ggfs_hf_repo *ggfs_hf_author_repo_from(ggfs_hf_author *a, ggfs_hf_get *get, void *get_ctx, const char *key,
                                             char *why, size_t cap)
{
    errno = 0;
    // The lock guards the list of repos read, never a request: a repo is
    // read with it released, so a lookup of another repo (or of one read
    // already) never waits on the Hub. Two lookups of the same repo not
    // yet read both read it (it is rare: the kernel looks a directory up
    // once), and the first to finish is kept; the other's is dropped.
    pthread_mutex_lock(&a->lock);
    ggfs_hf_repo *r = kept_repo(a, key);
    pthread_mutex_unlock(&a->lock);
    if (r)
        return r;
    char source[GGFS_API_URL_MAX];
    snprintf(source, sizeof source, "%s%s", GGFS_HF_SCHEME, key);
    if (!(r = ggfs_hf_repo_new(key, source, &a->root.stats))) {
        ggfs_hf_say(why, cap, "%s: out of memory", source);
        errno = ENOMEM;
        return NULL;
    }
    // Not kept when it fails (the catalog keeps the error entry it lists
    // as long as any listing of the repo's directory).
    if (ggfs_hf_repo_read_from(r, get, get_ctx, a->endpoint, "main", "", why, cap) != 0) {
        ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s\n", why);
        ggfs_hf_repo_free(r);
        return NULL;
    }
    pthread_mutex_lock(&a->lock);
    ggfs_hf_repo *first = kept_repo(a, key);
    if (first) { // another lookup read it meanwhile: theirs stands
        pthread_mutex_unlock(&a->lock);
        ggfs_hf_repo_free(r);
        return first;
    }
    if (a->n == a->cap) {
        const size_t grown_cap = a->cap ? a->cap * 2 : 16;
        author_repo *grown = realloc(a->repos, grown_cap * sizeof *grown);
        if (grown) {
            a->repos = grown;
            a->cap = grown_cap;
        }
    }
    char *key_copy = a->n < a->cap ? strdup(key) : NULL;
    if (!key_copy) {
        pthread_mutex_unlock(&a->lock);
        ggfs_hf_repo_free(r);
        ggfs_hf_say(why, cap, "%s: out of memory", source);
        errno = ENOMEM;
        return NULL;
    }
    a->repos[a->n++] = (author_repo){key_copy, r};
    pthread_mutex_unlock(&a->lock);
    return r;
}

static void free_author(void *root)
{
    ggfs_hf_author_free(root);
}

static char *status_text(const ggfs_store_env *env, size_t *len)
{
    return ggfs_hf_status_text(env->root, env->remote, len);
}

static int list_author(const ggfs_store_env *env, const ggfs_store_dir *dir, ggfs_scan *out)
{
    (void)dir; // the root, its one directory
    char why[2048]; // the error file holds a URL and a message
    if (read_repos(env->root, env->remote, out, why, sizeof why) == 0)
        return 0;
    ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s\n", why);
    return EIO;
}

static ggfs_model *no_models(const ggfs_store_env *env, const ggfs_store_model *m, char *msg, size_t cap, int *err)
{
    (void)env, (void)m, (void)msg, (void)cap;
    *err = ENOENT; // an author's root holds repos only
    return NULL;
}

const ggfs_store ggfs_store_hf_author = {
    .name = "hf author",
    .life = GGFS_LIFE_TTL,
    .relist_on_opendir = false,
    .ident_by_place = true,
    .list = list_author,
    .open_model = no_models,
    .root_free = free_author,
    .status = status_text,
};

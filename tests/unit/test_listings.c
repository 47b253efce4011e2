/*
 * Listings from hostile servers, without a server: the bounds of every
 * paged listing (util/page_guard.h), the one check of store names
 * (util/store_name.h), and a Hub repo read from scripted answers
 * (catalog/store_hf_repo.h): fields of the wrong type, pages that loop
 * or add nothing, a path listed twice, a path holding '@', what the
 * listing publishes of each file (its lfs.oid and size) taken by the
 * model's shards, a size that differs refusing the model.
 */
#define _DEFAULT_SOURCE // setenv
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog/hf_api.h"
#include "catalog/store.h"
#include "catalog/store_hf_repo.h"
#include "check.h"
#include "source/hf_name.h"
#include "util/page_guard.h"
#include "util/store_name.h"

#define COMMIT "0123456789abcdef0123456789abcdef01234567"

/* ==== The guard ==== */

static int test_guard_refuses_a_cursor_seen_before(void)
{
    ggfs_page_guard g;
    char why[200];
    ggfs_page_guard_init(&g, "Link");
    EXPECT(ggfs_page_guard_page(&g, "u1", 2, "L", why, sizeof why));
    EXPECT(ggfs_page_guard_page(&g, "u2", 2, "L", why, sizeof why));
    EXPECT(!ggfs_page_guard_page(&g, "u1", 2, "L", why, sizeof why));
    EXPECT(strstr(why, "page 3 leads back to page 1 (a Link loop)") != NULL);
    ggfs_page_guard_destroy(&g);
    return 1;
}

static int test_guard_refuses_pages_that_add_nothing(void)
{
    ggfs_page_guard g;
    char why[200], cursor[32];
    ggfs_page_guard_init(&g, "Link");
    unsigned pages = 0;
    bool ok = true;
    for (; ok && pages < 100; pages++) {
        snprintf(cursor, sizeof cursor, "c%u", pages);
        EXPECT(ggfs_page_guard_page(&g, cursor, strlen(cursor), "L", why, sizeof why));
        // Each page repeats the first page's one entry.
        const ggfs_page_entry e = ggfs_page_guard_entry(&g, "same", 4);
        EXPECT(e == (pages == 0 ? GGFS_PAGE_NEW : GGFS_PAGE_SEEN));
        ok = ggfs_page_guard_page_done(&g, "L", why, sizeof why);
    }
    EXPECT_EQ(pages, 1 + GGFS_PAGE_STALL_MAX);
    EXPECT(strstr(why, "added no entry (a loop)") != NULL);
    EXPECT_EQ(ggfs_page_guard_count(&g), 1);
    ggfs_page_guard_destroy(&g);
    return 1;
}

static int test_guard_caps_entries_and_pages(void)
{
    ggfs_page_guard g;
    char why[200], key[32];
    ggfs_page_guard_init(&g, "Link");
    EXPECT(ggfs_page_guard_page(&g, "", 0, "L", why, sizeof why));
    for (unsigned i = 0; i < GGFS_PAGE_ENTRIES_MAX; i++) {
        snprintf(key, sizeof key, "k%u", i);
        EXPECT(ggfs_page_guard_entry(&g, key, strlen(key)) == GGFS_PAGE_NEW);
    }
    EXPECT(ggfs_page_guard_entry(&g, "k0", 2) == GGFS_PAGE_SEEN);
    EXPECT(ggfs_page_guard_entry(&g, "one more", 8) == GGFS_PAGE_FULL);
    for (unsigned i = 1; i < GGFS_PAGE_MAX; i++) {
        snprintf(key, sizeof key, "p%u", i);
        EXPECT(ggfs_page_guard_page(&g, key, strlen(key), "L", why, sizeof why));
    }
    EXPECT(!ggfs_page_guard_page(&g, "last", 4, "L", why, sizeof why));
    EXPECT(strstr(why, "more than 10000 pages") != NULL);
    ggfs_page_guard_destroy(&g);
    return 1;
}

/* ==== Names ==== */

static int test_one_check_for_every_store(void)
{
    EXPECT(!ggfs_store_path_unfit("a/b.gguf", 8));
    EXPECT(ggfs_store_path_unfit("a/./b", 5) != NULL);
    EXPECT(ggfs_store_path_unfit("a/../b", 6) != NULL);
    EXPECT(ggfs_store_path_unfit("a//b", 4) != NULL);
    EXPECT(ggfs_store_path_unfit("a/", 2) != NULL);
    EXPECT(ggfs_store_path_unfit("", 0) != NULL);
    EXPECT(strcmp(ggfs_store_path_unfit("a\0b", 3), "it holds NUL") == 0);
    // A long component is cut as file names are: 246 bytes, never half a
    // UTF-8 sequence, then '~' and the hash.
    char long_name[600];
    memset(long_name, 'x', 245);
    for (size_t i = 245; i < 500; i += 2)
        memcpy(long_name + i, "\xc3\xa9", 2);
    long_name[500] = '\0';
    char path[700];
    snprintf(path, sizeof path, "d/%s", long_name);
    char *shown = ggfs_store_path_shown(path, strlen(path));
    EXPECT(shown != NULL);
    EXPECT(strncmp(shown, "d/", 2) == 0);
    EXPECT_EQ(strlen(shown + 2), 245 + 9); // the é at 245 would pass 246
    char want[16];
    snprintf(want, sizeof want, "~%08x", ggfs_name_cut_hash(long_name, 500));
    EXPECT_STR(shown + 2 + 245, want);
    free(shown);
    return 1;
}

static int test_hf_names_split_at_the_last_at(void)
{
    setenv("HF_ENDPOINT", "http://hub.test", 1);
    char *url, *token, why[200];
    EXPECT(ggfs_hf_resolve("hf://o/r/dir@x/m.gguf@" COMMIT, &url, &token, why, sizeof why));
    EXPECT_STR(url, "http://hub.test/o/r/resolve/" COMMIT "/dir%40x/m.gguf");
    free(url);
    free(token);
    EXPECT(ggfs_hf_names_commit("hf://o/r/dir@x/m.gguf@" COMMIT));
    EXPECT_EQ(ggfs_hf_name_end("hf://o/r/a@b/m.gguf@main"), strlen("hf://o/r/a@b/m.gguf"));
    return 1;
}

/* ==== A scripted Hub ==== */

/* Answers: the revision first, then the tree pages made by page(). */
typedef struct hub {
    const char *revision; // the revision's body
    // Page n's body and next link ("" at the last).
    void (*page)(unsigned n, char *body, size_t cap, char *next, size_t next_cap);
    const char *const *pages; // or fixed pages, NULL-ended, each linking to the next
    unsigned calls;
} hub;

static int hub_get(void *ctx, const char *url, ggfs_api_reply *reply, const char *what, char *why, size_t cap)
{
    (void)url, (void)what, (void)why, (void)cap;
    hub *h = ctx;
    memset(reply, 0, sizeof *reply);
    reply->status = 200;
    char body[4096] = "";
    if (h->calls == 0) {
        snprintf(body, sizeof body, "%s", h->revision);
    } else if (h->pages) {
        const unsigned n = h->calls - 1;
        snprintf(body, sizeof body, "%s", h->pages[n]);
        if (h->pages[n + 1])
            snprintf(reply->next, sizeof reply->next, "http://hub.test/next/%u", n + 1);
    } else {
        h->page(h->calls - 1, body, sizeof body, reply->next, sizeof reply->next);
    }
    h->calls++;
    reply->body = strdup(body);
    reply->len = strlen(body);
    return 0;
}

static const char *const sha_ok = "{\"sha\": \"" COMMIT "\"}";

/* Reads a repo from h; the repo, or NULL with why. */
static ggfs_hf_repo *read_repo(hub *h, char *why, size_t cap)
{
    ggfs_hf_stats stats;
    memset(&stats, 0, sizeof stats);
    ggfs_hf_repo *r = ggfs_hf_repo_new("o/r", "hf://o/r", &stats);
    if (r && ggfs_hf_repo_read_from(r, hub_get, h, "http://hub.test", "main", "", why, cap) != 0) {
        ggfs_hf_repo_free(r);
        return NULL;
    }
    return r;
}

/* Lists directory real of r into out. */
static int list_dir(ggfs_hf_repo *r, const char *path, const char *real, ggfs_scan *out)
{
    const ggfs_store_env env = {.root = r};
    const ggfs_store_dir dir = {.path = path, .real = real};
    return ggfs_store_hf_repo.list(&env, &dir, out);
}

static int test_hub_fields_of_the_wrong_type_are_absent(void)
{
    const char *const pages[] = {
        "[{\"type\": null, \"path\": \"a.gguf\"}, {\"type\": \"file\", \"path\": null},"
        " {\"type\": 5, \"path\": \"b.gguf\"}, 7, null, \"x\", {\"path\": \"c.gguf\"},"
        " {\"type\": \"file\", \"path\": \"m.gguf\", \"size\": \"12\", \"lfs\": null, \"oid\": 3},"
        " {\"type\": \"file\", \"path\": \"n.gguf\", \"lfs\": {\"size\": -5, \"oid\": [1]}, \"size\": 9}]",
        NULL};
    hub h = {.revision = sha_ok, .pages = pages};
    char why[300];
    ggfs_hf_repo *r = read_repo(&h, why, sizeof why);
    EXPECT(r != NULL);
    ggfs_scan scan;
    EXPECT_EQ(list_dir(r, "", "", &scan), 0);
    EXPECT_EQ(scan.count, 2);
    EXPECT_STR(scan.entries[0].name, "m.gguf");
    EXPECT_EQ(scan.entries[0].a.size, 0);
    EXPECT_STR(scan.entries[1].name, "n.gguf");
    EXPECT_EQ(scan.entries[1].a.size, 9); // lfs.size is no count: size
    ggfs_scan_free(&scan);
    ggfs_hf_repo_free(r);
    // A revision whose sha is a number names no commit.
    hub bad = {.revision = "{\"sha\": 1234567}", .pages = pages};
    EXPECT(read_repo(&bad, why, sizeof why) == NULL);
    EXPECT(strstr(why, "names no commit") != NULL);
    hub null_sha = {.revision = "{\"sha\": null}", .pages = pages};
    EXPECT(read_repo(&null_sha, why, sizeof why) == NULL);
    return 1;
}

static void empty_pages(unsigned n, char *body, size_t cap, char *next, size_t next_cap)
{
    snprintf(body, cap, "[]");
    snprintf(next, next_cap, "http://hub.test/tree?cursor=%u", n + 1);
}

static void one_entry_pages(unsigned n, char *body, size_t cap, char *next, size_t next_cap)
{
    snprintf(body, cap, "[{\"type\": \"file\", \"path\": \"m.gguf\", \"size\": 1}]");
    snprintf(next, next_cap, "http://hub.test/tree?cursor=%u", n + 1);
}

static void same_link_pages(unsigned n, char *body, size_t cap, char *next, size_t next_cap)
{
    snprintf(body, cap, "[{\"type\": \"file\", \"path\": \"m%u.gguf\", \"size\": 1}]", n);
    snprintf(next, next_cap, "http://hub.test/tree?cursor=1");
}

static int test_hub_pages_that_loop_refuse_the_listing(void)
{
    char why[300];
    hub empty = {.revision = sha_ok, .page = empty_pages};
    EXPECT(read_repo(&empty, why, sizeof why) == NULL);
    EXPECT(strstr(why, "added no entry (a loop)") != NULL);
    EXPECT_EQ(empty.calls, 1 + GGFS_PAGE_STALL_MAX);
    hub same = {.revision = sha_ok, .page = one_entry_pages};
    EXPECT(read_repo(&same, why, sizeof why) == NULL);
    EXPECT(strstr(why, "(a loop)") != NULL);
    EXPECT_EQ(same.calls, 1 + 1 + GGFS_PAGE_STALL_MAX);
    hub link = {.revision = sha_ok, .page = same_link_pages};
    EXPECT(read_repo(&link, why, sizeof why) == NULL);
    EXPECT(strstr(why, "(a Link loop)") != NULL);
    EXPECT_EQ(link.calls, 1 + 2);
    return 1;
}

static int test_hub_path_listed_twice_is_kept_once(void)
{
    const char *const pages[] = {
        "[{\"type\": \"file\", \"path\": \"a.gguf\", \"size\": 1}, {\"type\": \"file\", \"path\": \"a.gguf\", \"size\": 1}]",
        "[{\"type\": \"file\", \"path\": \"a.gguf\", \"size\": 1}, {\"type\": \"file\", \"path\": \"b.gguf\", \"size\": 2}]",
        NULL};
    hub h = {.revision = sha_ok, .pages = pages};
    char why[300];
    ggfs_hf_repo *r = read_repo(&h, why, sizeof why);
    EXPECT(r != NULL);
    ggfs_scan scan;
    EXPECT_EQ(list_dir(r, "", "", &scan), 0);
    EXPECT_EQ(scan.count, 2);
    EXPECT_STR(scan.entries[0].name, "a.gguf");
    EXPECT_STR(scan.entries[1].name, "b.gguf");
    ggfs_scan_free(&scan);
    ggfs_hf_repo_free(r);
    return 1;
}

/* A file under a folder holding '@' opens as itself: its path is the
 * hf:// name of the file at the commit, which resolves to that file. */
static int test_hub_path_holding_at_opens_its_file(void)
{
    setenv("HF_ENDPOINT", "http://hub.test", 1);
    const char *const pages[] = {
        "[{\"type\": \"directory\", \"path\": \"dir@x\"}, {\"type\": \"file\", \"path\": \"dir@x/m.gguf\", \"size\": 1},"
        " {\"type\": \"file\", \"path\": \"e/./n.gguf\", \"size\": 1}]",
        NULL};
    hub h = {.revision = sha_ok, .pages = pages};
    char why[300];
    ggfs_hf_repo *r = read_repo(&h, why, sizeof why);
    EXPECT(r != NULL);
    ggfs_scan top, sub;
    EXPECT_EQ(list_dir(r, "", "", &top), 0);
    EXPECT_EQ(top.count, 1); // e/./n.gguf left out: no e/
    EXPECT_STR(top.entries[0].name, "dir@x");
    EXPECT_EQ(list_dir(r, top.entries[0].path, top.entries[0].real, &sub), 0);
    EXPECT_EQ(sub.count, 1);
    EXPECT_STR(sub.entries[0].path, "hf://o/r/dir@x/m.gguf@" COMMIT);
    char *url, *token;
    EXPECT(ggfs_hf_resolve(sub.entries[0].path, &url, &token, why, sizeof why));
    EXPECT_STR(url, "http://hub.test/o/r/resolve/" COMMIT "/dir%40x/m.gguf");
    free(url);
    free(token);
    ggfs_scan_free(&top);
    ggfs_scan_free(&sub);
    ggfs_hf_repo_free(r);
    return 1;
}

/* A source of a given name and size, for the shards of a model a store
 * opened (nothing is read from it). */
static ggfs_source named_source(const char *name, uint64_t size)
{
    ggfs_source src;
    memset(&src, 0, sizeof src);
    src.name = name;
    src.size = size;
    return src;
}

#define OID_1 "1111111111111111111111111111111111111111111111111111111111111111"
#define OID_2 "2222222222222222222222222222222222222222222222222222222222222222"

static int test_hub_listing_publishes_each_shards_oid_and_size(void)
{
    const char *const pages[] = {
        "[{\"type\": \"file\", \"path\": \"s/q-00001-of-00002.gguf\", \"size\": 134,"
        "  \"lfs\": {\"oid\": \"" OID_1 "\", \"size\": 1000}},"
        " {\"type\": \"file\", \"path\": \"s/q-00002-of-00002.gguf\", \"size\": 134,"
        "  \"lfs\": {\"oid\": \"" OID_2 "\", \"size\": 2000}},"
        " {\"type\": \"file\", \"path\": \"git.gguf\", \"size\": 300, \"oid\": \"a94a8fe5ccb19ba61c4c0873d391e987982fbbd3\"},"
        " {\"type\": \"file\", \"path\": \"odd.gguf\", \"size\": 50, \"lfs\": {\"oid\": \"" OID_1 "0\", \"size\": 50}}]",
        NULL};
    hub h = {.revision = sha_ok, .pages = pages};
    char why[300], msg[512];
    ggfs_hf_repo *r = read_repo(&h, why, sizeof why);
    EXPECT(r != NULL);
    const ggfs_store_env env = {.root = r};
    const ggfs_store_model m = {.path = "hf://o/r/s/q-00001-of-00002.gguf@" COMMIT, .real = "s/q-00001-of-00002.gguf",
                                .size = 1000, .shards = 2};
    ggfs_source s1 = named_source("hf://o/r/s/q-00001-of-00002.gguf@" COMMIT, 1000);
    ggfs_source s2 = named_source("hf://o/r/s/q-00002-of-00002.gguf@" COMMIT, 2000);
    ggfs_shard shards[2] = {{.source = &s1}, {.source = &s2}};
    ggfs_model model = {.shards = shards, .n_shards = 2};
    EXPECT(ggfs_store_take_published(&ggfs_store_hf_repo, &env, &m, &model, msg, sizeof msg));
    EXPECT_EQ(s1.published.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_EQ(s1.published.digest[0], 0x11);
    EXPECT_STR(s1.published.where, "lfs.oid");
    EXPECT_EQ(s1.published.size, 1000);
    EXPECT_EQ(s2.published.digest[31], 0x22); // each shard its own oid
    EXPECT_EQ(s2.published.size, 2000);
    // A file kept in git publishes its size, no digest; an oid that is no
    // SHA-256 none either.
    ggfs_source g = named_source("hf://o/r/git.gguf@" COMMIT, 300), o = named_source("hf://o/r/odd.gguf@" COMMIT, 50);
    ggfs_shard one = {.source = &g};
    ggfs_model gm = {.shards = &one, .n_shards = 1};
    EXPECT(ggfs_store_take_published(&ggfs_store_hf_repo, &env, &m, &gm, msg, sizeof msg));
    EXPECT_EQ(g.published.kind, GGFS_PUBLISHED_NONE);
    EXPECT_EQ(g.published.size, 300);
    one.source = &o;
    EXPECT(ggfs_store_take_published(&ggfs_store_hf_repo, &env, &m, &gm, msg, sizeof msg));
    EXPECT_EQ(o.published.kind, GGFS_PUBLISHED_NONE);
    // A file of another commit, or of no listed path, is not the listing's.
    ggfs_source other = named_source("hf://o/r/git.gguf@main", 1);
    one.source = &other;
    EXPECT(ggfs_store_take_published(&ggfs_store_hf_repo, &env, &m, &gm, msg, sizeof msg));
    EXPECT_EQ(other.published.size, 0);
    // The second shard served at another size than listed: the model is refused.
    ggfs_source short2 = named_source("hf://o/r/s/q-00002-of-00002.gguf@" COMMIT, 1999);
    shards[1].source = &short2;
    EXPECT(!ggfs_store_take_published(&ggfs_store_hf_repo, &env, &m, &model, msg, sizeof msg));
    EXPECT_STR(msg, "hf://o/r/s/q-00002-of-00002.gguf@" COMMIT
                    ": offset 0x0: the file has 1999 bytes, the hf repo's listing says 2000");
    ggfs_hf_repo_free(r);
    return 1;
}

/* ==== An author's repos ==== */

/* A Hub whose answers wait until released: a lookup stuck on it. */
typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open, entered;
    hub h;
} gate;

static int gated_get(void *ctx, const char *url, ggfs_api_reply *reply, const char *what, char *why, size_t cap)
{
    gate *g = ctx;
    pthread_mutex_lock(&g->lock);
    g->entered = true;
    pthread_cond_broadcast(&g->cond);
    while (!g->open)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
    return hub_get(&g->h, url, reply, what, why, cap);
}

typedef struct lookup {
    ggfs_hf_author *a;
    ggfs_hf_get *get;
    void *ctx;
    const char *key;
    const ggfs_hf_repo *r;
    bool done;
    pthread_mutex_t *lock;
    pthread_cond_t *cond;
} lookup;

static void *run_lookup(void *arg)
{
    lookup *l = arg;
    char why[300];
    const ggfs_hf_repo *r = ggfs_hf_author_repo_from(l->a, l->get, l->ctx, l->key, why, sizeof why);
    pthread_mutex_lock(l->lock);
    l->r = r;
    l->done = true;
    pthread_cond_broadcast(l->cond);
    pthread_mutex_unlock(l->lock);
    return NULL;
}

/* While one repo of an author is being read from a Hub that does not
 * answer, another repo is read and a repo read before is found. */
static int test_an_authors_lookup_waits_for_no_other_repos_listing(void)
{
    static const char *const pages[] = {"[{\"type\": \"file\", \"path\": \"m.gguf\", \"size\": 1}]", NULL};
    char why[300];
    ggfs_hf_author *a = ggfs_hf_author_new("hf://org", why, sizeof why);
    EXPECT(a != NULL);
    gate g = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
              .h = {.revision = sha_ok, .pages = pages}};
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    lookup slow = {.a = a, .get = gated_get, .ctx = &g, .key = "org/slow", .lock = &lock, .cond = &cond};
    pthread_t t_slow, t_fast;
    EXPECT(pthread_create(&t_slow, NULL, run_lookup, &slow) == 0);
    pthread_mutex_lock(&g.lock);
    while (!g.entered)
        pthread_cond_wait(&g.cond, &g.lock);
    pthread_mutex_unlock(&g.lock);
    hub fast_hub = {.revision = sha_ok, .pages = pages};
    lookup fast = {.a = a, .get = hub_get, .ctx = &fast_hub, .key = "org/fast", .lock = &lock, .cond = &cond};
    EXPECT(pthread_create(&t_fast, NULL, run_lookup, &fast) == 0);
    // The other repo is read within 5 s while the first waits on the Hub.
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&lock);
    while (!fast.done && pthread_cond_timedwait(&cond, &lock, &until) == 0)
        ;
    const bool fast_done = fast.done;
    pthread_mutex_unlock(&lock);
    pthread_mutex_lock(&g.lock);
    g.open = true;
    pthread_cond_broadcast(&g.cond);
    pthread_mutex_unlock(&g.lock);
    pthread_join(t_slow, NULL);
    pthread_join(t_fast, NULL);
    EXPECT(fast_done);
    EXPECT(fast.r != NULL && slow.r != NULL && fast.r != slow.r);
    // Read once: found again with no request.
    const unsigned calls = fast_hub.calls;
    EXPECT(ggfs_hf_author_repo_from(a, hub_get, &fast_hub, "org/fast", why, sizeof why) == fast.r);
    EXPECT_EQ(fast_hub.calls, calls);
    ggfs_hf_author_free(a);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_guard_refuses_a_cursor_seen_before();
    ok &= test_guard_refuses_pages_that_add_nothing();
    ok &= test_guard_caps_entries_and_pages();
    ok &= test_one_check_for_every_store();
    ok &= test_hf_names_split_at_the_last_at();
    ok &= test_hub_fields_of_the_wrong_type_are_absent();
    ok &= test_hub_pages_that_loop_refuse_the_listing();
    ok &= test_hub_path_listed_twice_is_kept_once();
    ok &= test_hub_path_holding_at_opens_its_file();
    ok &= test_an_authors_lookup_waits_for_no_other_repos_listing();
    ok &= test_hub_listing_publishes_each_shards_oid_and_size();
    return ok ? 0 : 1;
}

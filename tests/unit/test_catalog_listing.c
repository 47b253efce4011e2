/*
 * A catalog directory's listing in one block: every entry found by name
 * with the path, real path, error and attributes its scan had, the strings
 * a plain entry can do without left out, and a listing too large for its
 * offsets refused.
 */
#define _XOPEN_SOURCE 700 // S_IFREG
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog/listing.h"
#include "catalog/scan.h"
#include "check.h"

/* A stat whose every field the listing keeps differs from the others'. */
static struct stat stat_n(int n)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_dev = 100 + n;
    st.st_ino = 200 + n;
    st.st_size = 300 + n;
    st.st_mode = S_IFREG | 0644;
    st.st_uid = 400 + n;
    st.st_gid = 500 + n;
    st.st_atim = (struct timespec){600 + n, 1};
    st.st_mtim = (struct timespec){700 + n, 999999999};
    st.st_ctim = (struct timespec){800 + n, 3};
    return st;
}

/* Whether the listing kept the attributes and identity the scan had. */
static bool same_attrs(const ggfs_cat_attrs *a, const ggfs_cat_attrs *want)
{
    struct stat back, st;
    memset(&back, 0, sizeof back);
    memset(&st, 0, sizeof st);
    ggfs_cat_attrs_stat(a, &back);
    ggfs_cat_attrs_stat(want, &st);
    return back.st_size == st.st_size &&
           back.st_mode == st.st_mode && back.st_uid == st.st_uid && back.st_gid == st.st_gid &&
           back.st_atim.tv_sec == st.st_atim.tv_sec && back.st_atim.tv_nsec == st.st_atim.tv_nsec &&
           back.st_mtim.tv_sec == st.st_mtim.tv_sec && back.st_mtim.tv_nsec == st.st_mtim.tv_nsec &&
           back.st_ctim.tv_sec == st.st_ctim.tv_sec && back.st_ctim.tv_nsec == st.st_ctim.tv_nsec &&
           ggfs_cat_ident_equal(&a->ident, &want->ident);
}

/* The directory "hub/snap" holding what a scan of it can hold. */
static bool make_scan(ggfs_scan *scan)
{
    memset(scan, 0, sizeof *scan);
    const struct stat s0 = stat_n(0), s1 = stat_n(1), s2 = stat_n(2), s3 = stat_n(3), s4 = stat_n(4);
    return ggfs_scan_add(scan, GGFS_SCAN_MODEL, "plain.gguf", "hub/snap/plain.gguf", "hub/snap/plain.gguf",
                         NULL, &s0, 0) &&
           // A symlink: real differs from path.
           ggfs_scan_add(scan, GGFS_SCAN_MODEL, "link.gguf", "hub/snap/link.gguf", "hub/blobs/0a1b", NULL,
                         &s1, 0) &&
           // A split set: named without -00001-of-00003, its path the shard's.
           ggfs_scan_add(scan, GGFS_SCAN_MODEL, "set.gguf", "hub/snap/set-00001-of-00003.gguf",
                         "hub/snap/set-00001-of-00003.gguf", NULL, &s2, 3) &&
           ggfs_scan_add(scan, GGFS_SCAN_DIR, "sub", "hub/snap/sub", "hub/snap/sub", NULL, &s3, 0) &&
           // An Ollama name whose manifest is bad: path and real elsewhere, an error.
           ggfs_scan_add(scan, GGFS_SCAN_MODEL, "bad:latest", "m/x/latest", "m/x/latest",
                         "m/x/latest: offset 0x2: not JSON", &s4, 0);
}

static int test_entries_come_back_as_scanned(void)
{
    ggfs_scan scan;
    EXPECT(make_scan(&scan));
    ggfs_scan_finish(&scan);
    ggfs_cat_listing *l = ggfs_listing_build(&scan, "hub/snap");
    EXPECT(l);
    EXPECT_EQ(l->count, 5);
    EXPECT_EQ(l->refs, 1);
    EXPECT(l->sorted);
    char buf[4096];
    for (size_t i = 0; i < scan.count; i++) {
        const ggfs_scan_entry *want = &scan.entries[i];
        const ggfs_listed *e = ggfs_listing_find(l, want->name);
        EXPECT(e == &l->entries[i]); // in the scan's order, which is by name
        EXPECT_STR(ggfs_listed_name(l, e), want->name);
        const char *path = ggfs_listed_path(l, e, "hub/snap", buf, sizeof buf);
        EXPECT(path);
        EXPECT_STR(path, want->path);
        EXPECT_STR(ggfs_listed_real(l, e, path), want->real);
        EXPECT(!want->error == !ggfs_listed_error(l, e));
        if (want->error)
            EXPECT_STR(ggfs_listed_error(l, e), want->error);
        EXPECT_EQ(e->kind, want->kind);
        EXPECT_EQ(e->shards, want->shards);
        EXPECT(same_attrs(&e->a, &want->a));
    }
    EXPECT(!ggfs_listing_find(l, "absent.gguf"));
    EXPECT(!ggfs_listing_find(l, ""));
    EXPECT(!ggfs_listing_find(l, "set-00001-of-00003.gguf"));
    ggfs_listing_free(l);
    ggfs_scan_free(&scan);
    return 1;
}

static int test_plain_entries_keep_only_their_name(void)
{
    ggfs_scan scan;
    EXPECT(make_scan(&scan));
    ggfs_scan_finish(&scan);
    ggfs_cat_listing *l = ggfs_listing_build(&scan, "hub/snap");
    EXPECT(l);
    const ggfs_listed *plain = ggfs_listing_find(l, "plain.gguf");
    const ggfs_listed *sub = ggfs_listing_find(l, "sub");
    const ggfs_listed *link = ggfs_listing_find(l, "link.gguf");
    const ggfs_listed *set = ggfs_listing_find(l, "set.gguf");
    const ggfs_listed *bad = ggfs_listing_find(l, "bad:latest");
    EXPECT(plain && sub && link && set && bad);
    EXPECT_EQ(plain->flags, 0);
    EXPECT_EQ(sub->flags, 0);
    EXPECT_EQ(link->flags, GGFS_LISTED_REAL);
    EXPECT_EQ(set->flags, GGFS_LISTED_PATH);
    EXPECT_EQ(bad->flags, GGFS_LISTED_PATH | GGFS_LISTED_ERROR);
    // The strings: each name, and the rest only where the flags say.
    size_t want = 0;
    for (size_t i = 0; i < scan.count; i++)
        want += strlen(scan.entries[i].name) + 1;
    want += strlen("hub/blobs/0a1b") + 1 + strlen("hub/snap/set-00001-of-00003.gguf") + 1 +
            strlen("m/x/latest") + 1 + strlen("m/x/latest: offset 0x2: not JSON") + 1;
    // The last by name has none but its name.
    const char *last = ggfs_listed_name(l, &l->entries[l->count - 1]);
    EXPECT_STR(last, "sub");
    EXPECT_EQ((size_t)(last + strlen(last) + 1 - l->strings), want);
    char buf[4096];
    // The root's entries join with "".
    ggfs_scan root;
    memset(&root, 0, sizeof root);
    const struct stat st = stat_n(9);
    EXPECT(ggfs_scan_add(&root, GGFS_SCAN_DIR, "hub", "hub", "hub", NULL, &st, 0));
    ggfs_cat_listing *r = ggfs_listing_build(&root, "");
    EXPECT(r);
    EXPECT_EQ(r->entries[0].flags, 0);
    EXPECT_STR(ggfs_listed_path(r, &r->entries[0], "", buf, sizeof buf), "hub");
    // A path that does not fit the caller's buffer is NULL, not cut.
    EXPECT(!ggfs_listed_path(l, plain, "hub/snap", buf, 8));
    ggfs_listing_free(r);
    ggfs_scan_free(&root);
    ggfs_listing_free(l);
    ggfs_scan_free(&scan);
    return 1;
}

static int test_unsorted_scan_is_searched_in_full(void)
{
    // What ggfs_scan_finish leaves when it has no memory to sort.
    ggfs_scan scan;
    memset(&scan, 0, sizeof scan);
    const struct stat st = stat_n(0);
    EXPECT(ggfs_scan_add(&scan, GGFS_SCAN_MODEL, "z.gguf", "z.gguf", "z.gguf", NULL, &st, 0));
    EXPECT(ggfs_scan_add(&scan, GGFS_SCAN_MODEL, "a.gguf", "a.gguf", "a.gguf", NULL, &st, 0));
    EXPECT(ggfs_scan_add(&scan, GGFS_SCAN_MODEL, "m.gguf", "m.gguf", "m.gguf", NULL, &st, 0));
    ggfs_cat_listing *l = ggfs_listing_build(&scan, "");
    EXPECT(l);
    EXPECT(!l->sorted);
    EXPECT(ggfs_listing_find(l, "z.gguf") == &l->entries[0]);
    EXPECT(ggfs_listing_find(l, "a.gguf") == &l->entries[1]);
    EXPECT(ggfs_listing_find(l, "m.gguf") == &l->entries[2]);
    EXPECT(!ggfs_listing_find(l, "b.gguf"));
    ggfs_listing_free(l);
    ggfs_scan_free(&scan);
    return 1;
}

static int test_large_listing_costs_little_per_entry(void)
{
    // A folder of 10,000 models: the block is the entries and their
    // names, nothing per entry beside.
    ggfs_scan scan;
    memset(&scan, 0, sizeof scan);
    const struct stat st = stat_n(0);
    char name[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(name, sizeof name, "m%05d.gguf", i);
        EXPECT(ggfs_scan_add(&scan, GGFS_SCAN_MODEL, name, name, name, NULL, &st, 0));
    }
    ggfs_cat_listing *l = ggfs_listing_build(&scan, "");
    EXPECT(l);
    EXPECT(l->sorted);
    EXPECT_EQ((size_t)(l->strings - (const char *)l), sizeof *l + 10000 * sizeof(ggfs_listed));
    EXPECT(sizeof(ggfs_listed) <= 88);
    const ggfs_listed *e = ggfs_listing_find(l, "m04242.gguf");
    EXPECT(e && e == &l->entries[4242] && e->flags == 0);
    ggfs_listing_free(l);
    ggfs_scan_free(&scan);
    return 1;
}

/* A file is another once its device, inode, size or mtime changed; a
 * directory stays itself as its entries (and so its times) change. */
static int test_identity_tells_versions_apart(void)
{
    const struct stat base = stat_n(1);
    ggfs_cat_attrs a;
    ggfs_cat_attrs_of(&base, &a);
    EXPECT(ggfs_cat_attrs_same_file(&a, &base));
    struct stat other = base;
    other.st_atim.tv_sec++;
    other.st_ctim.tv_sec++;
    EXPECT(ggfs_cat_attrs_same_file(&a, &other)); // read or chmod: the same file
    const struct stat changed[] = {stat_n(2), stat_n(1), stat_n(1), stat_n(1), stat_n(1)};
    struct stat c[5];
    memcpy(c, changed, sizeof c);
    c[1].st_size++;
    c[2].st_mtim.tv_nsec--;
    c[3].st_mtim.tv_sec++;
    c[4].st_dev++;
    for (size_t i = 0; i < 5; i++)
        EXPECT(!ggfs_cat_attrs_same_file(&a, &c[i]));
    struct stat dir = base;
    dir.st_mode = S_IFDIR | 0755;
    ggfs_cat_attrs_of(&dir, &a);
    dir.st_mtim.tv_sec++;
    dir.st_size += 4096;
    EXPECT(ggfs_cat_attrs_same_file(&a, &dir));
    dir.st_ino++;
    EXPECT(!ggfs_cat_attrs_same_file(&a, &dir));
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_identity_tells_versions_apart();
    ok &= test_entries_come_back_as_scanned();
    ok &= test_plain_entries_keep_only_their_name();
    ok &= test_unsorted_scan_is_searched_in_full();
    ok &= test_large_listing_costs_little_per_entry();
    return ok ? 0 : 1;
}

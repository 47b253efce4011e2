/*
 * Listing a catalog's directories: models by name and by magic, split sets
 * once, symlinks followed only inside the folder, loops, FIFOs, unreadable
 * files and directories skipped or reported, never waited on.
 */
#include "tmptree.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>

#include "catalog/beneath.h"
#include "catalog/scan.h"
#include "check.h"
#include "scan_names.h"

static char *folder_path; // the folder under test
static char *outside;     // a directory beside it, with a model in it
static ggfs_folder folder;

/* The folder every test lists:
 *
 *   a.gguf  empty.gguf  sha256-0a1b (GGUF magic)  be-blob (FUGG)  notes.txt
 *   empty  short (3 bytes)  pipe  pipe.gguf (FIFOs)
 *   big-0000{1,2,3}-of-00003.gguf   half-00002-of-00002.gguf
 *   dup.gguf  dup-0000{1,2}-of-00002.gguf
 *   dir.gguf/ (a directory)   sub/ (b.gguf, back -> .., side -> ../hf, deep -> ../sub/inner)
 *   sub/inner/c.gguf
 *   hf/models--org--name/{blobs/HASH, refs/main, snapshots/REV/m.gguf -> ../../blobs/HASH}
 *   out.gguf -> ../OUTSIDE/o.gguf    abs-in.gguf -> FOLDER/a.gguf   abs-out.gguf -> OUTSIDE/o.gguf
 *   loop1.gguf <-> loop2.gguf   self.gguf -> self.gguf   dangling.gguf -> nowhere
 *   up -> ..   here -> .   linkdir -> sub   escape.gguf -> sub/../../OUTSIDE/o.gguf
 *   store/{manifests/,blobs/}   mnt/ (the mount point)
 */
static int build(void)
{
    folder_path = tmptree_new();
    outside = tmptree_new();
    EXPECT(folder_path && outside);
    const char *F = folder_path;
    EXPECT(tmptree_gguf(outside, "o.gguf"));
    EXPECT(tmptree_gguf(F, "a.gguf"));
    EXPECT(tmptree_file(F, "empty.gguf", "", 0));
    EXPECT(tmptree_gguf(F, "sha256-0a1b"));
    EXPECT(tmptree_file(F, "be-blob", "FUGG\0\0\0\3", 8));
    EXPECT(tmptree_text(F, "notes.txt", "GGU not a model\n"));
    EXPECT(tmptree_file(F, "empty", "", 0));
    EXPECT(tmptree_file(F, "short", "GGU", 3));
    EXPECT(tmptree_fifo(F, "pipe"));
    EXPECT(tmptree_fifo(F, "pipe.gguf"));
    EXPECT(tmptree_gguf(F, "big-00001-of-00003.gguf"));
    EXPECT(tmptree_gguf(F, "big-00002-of-00003.gguf"));
    EXPECT(tmptree_gguf(F, "big-00003-of-00003.gguf"));
    EXPECT(tmptree_gguf(F, "half-00002-of-00002.gguf"));
    EXPECT(tmptree_gguf(F, "dup.gguf"));
    EXPECT(tmptree_gguf(F, "dup-00001-of-00002.gguf"));
    EXPECT(tmptree_gguf(F, "dup-00002-of-00002.gguf"));
    EXPECT(tmptree_dir(F, "dir.gguf"));
    EXPECT(tmptree_gguf(F, "sub/b.gguf"));
    EXPECT(tmptree_gguf(F, "sub/inner/c.gguf"));
    EXPECT(tmptree_link(F, "sub/back", ".."));
    EXPECT(tmptree_link(F, "sub/side", "../hf"));
    EXPECT(tmptree_link(F, "sub/deep", "../sub/inner"));
    EXPECT(tmptree_gguf(F, "hf/models--org--name/blobs/5d2f6e"));
    EXPECT(tmptree_text(F, "hf/models--org--name/refs/main", "0123abcd"));
    EXPECT(tmptree_dir(F, "hf/models--org--name/snapshots/0123abcd"));
    EXPECT(tmptree_link(F, "hf/models--org--name/snapshots/0123abcd/m.gguf", "../../blobs/5d2f6e"));
    char target[PATH_MAX];
    snprintf(target, sizeof target, "../%s/o.gguf", strrchr(outside, '/') + 1);
    EXPECT(tmptree_link(F, "out.gguf", target));
    snprintf(target, sizeof target, "sub/../../%s/o.gguf", strrchr(outside, '/') + 1);
    EXPECT(tmptree_link(F, "escape.gguf", target));
    snprintf(target, sizeof target, "%s/a.gguf", F);
    EXPECT(tmptree_link(F, "abs-in.gguf", target));
    snprintf(target, sizeof target, "%s/o.gguf", outside);
    EXPECT(tmptree_link(F, "abs-out.gguf", target));
    EXPECT(tmptree_link(F, "loop1.gguf", "loop2.gguf"));
    EXPECT(tmptree_link(F, "loop2.gguf", "loop1.gguf"));
    EXPECT(tmptree_link(F, "self.gguf", "self.gguf"));
    EXPECT(tmptree_link(F, "dangling.gguf", "nowhere"));
    EXPECT(tmptree_link(F, "up", ".."));
    EXPECT(tmptree_link(F, "here", "."));
    EXPECT(tmptree_link(F, "linkdir", "sub"));
    EXPECT(tmptree_dir(F, "store/manifests"));
    EXPECT(tmptree_dir(F, "store/blobs"));
    EXPECT(tmptree_dir(F, "mnt"));
    char mnt[PATH_MAX];
    snprintf(mnt, sizeof mnt, "%s/mnt", F);
    EXPECT_EQ(ggfs_folder_open(&folder, F, mnt), 0);
    return 1;
}

static int test_paths_within(void)
{
    EXPECT(ggfs_path_within("a/b", "a"));
    EXPECT(ggfs_path_within("a", "a"));
    EXPECT(ggfs_path_within("a", ""));
    EXPECT(!ggfs_path_within("a/b2", "a/b"));
    EXPECT(!ggfs_path_within("", "a"));
    char out[8];
    EXPECT(ggfs_path_join(out, sizeof out, "", "x"));
    EXPECT_STR(out, "x");
    EXPECT(ggfs_path_join(out, sizeof out, "a/b", "cd"));
    EXPECT_STR(out, "a/b/cd");
    EXPECT(!ggfs_path_join(out, sizeof out, "a/b", "cdef"));
    return 1;
}

static int resolves_to(const char *rel, int want_err, const char *want)
{
    char out[PATH_MAX];
    struct stat st;
    const int err = ggfs_resolve_beneath(&folder, rel, out, sizeof out, &st);
    if (err != want_err)
        fprintf(stderr, "resolving %s: %s\n", rel, strerror(err));
    EXPECT_EQ(err, want_err);
    if (want)
        EXPECT_STR(out, want);
    return 1;
}

static int test_symlinks_resolve_only_inside(void)
{
    EXPECT(resolves_to("a.gguf", 0, "a.gguf"));
    EXPECT(resolves_to("", 0, ""));
    EXPECT(resolves_to("hf/models--org--name/snapshots/0123abcd/m.gguf", 0, "hf/models--org--name/blobs/5d2f6e"));
    EXPECT(resolves_to("abs-in.gguf", 0, "a.gguf"));
    EXPECT(resolves_to("linkdir/b.gguf", 0, "sub/b.gguf"));
    EXPECT(resolves_to("sub/deep/c.gguf", 0, "sub/inner/c.gguf"));
    EXPECT(resolves_to("sub/deep/../b.gguf", 0, "sub/b.gguf")); // ".." of the target
    EXPECT(resolves_to("sub/back/a.gguf", 0, "a.gguf"));
    EXPECT(resolves_to("out.gguf", EXDEV, NULL));
    EXPECT(resolves_to("escape.gguf", EXDEV, NULL));
    EXPECT(resolves_to("abs-out.gguf", EXDEV, NULL));
    EXPECT(resolves_to("up/x", EXDEV, NULL));
    EXPECT(resolves_to("..", EXDEV, NULL));
    EXPECT(resolves_to("loop1.gguf", ELOOP, NULL));
    EXPECT(resolves_to("self.gguf", ELOOP, NULL));
    EXPECT(resolves_to("dangling.gguf", ENOENT, NULL));
    EXPECT(resolves_to("a.gguf/x", ENOTDIR, NULL));
    EXPECT(resolves_to("mnt/x", EXDEV, NULL)); // through the mount point
    return 1;
}

static const ggfs_scan_entry *expect_entry(const ggfs_scan *s, const char *name, ggfs_scan_kind kind)
{
    const ggfs_scan_entry *e = ggfs_scan_find(s, name);
    if (!e || e->kind != kind) {
        fprintf(stderr, "expected %s of kind %d in: %s\n", name, (int)kind, names_of(s));
        return NULL;
    }
    return e;
}

static int test_root_lists_models_sets_and_directories(void)
{
    const char *anc[] = {""};
    ggfs_scan s;
    EXPECT_EQ(ggfs_scan_dir(&folder, "", anc, 1, &s), 0);
    // Everything else in the folder is skipped: notes.txt, empty, short,
    // pipes, links that leave, loop or dangle, up and here (lead back).
    EXPECT_STR(names_of(&s), "a.gguf abs-in.gguf be-blob big.gguf dir.gguf dup-00001-of-00002.gguf "
                             "dup.gguf empty.gguf half.gguf hf linkdir sha256-0a1b store sub");
    const ggfs_scan_entry *e;
    EXPECT((e = expect_entry(&s, "big.gguf", GGFS_SCAN_MODEL)));
    EXPECT_STR(e->path, "big-00001-of-00003.gguf");
    EXPECT_EQ(e->shards, 3);
    EXPECT((e = expect_entry(&s, "half.gguf", GGFS_SCAN_MODEL)));
    EXPECT_STR(e->path, "half-00002-of-00002.gguf"); // the model layer reports shard 1 missing
    EXPECT((e = expect_entry(&s, "dup.gguf", GGFS_SCAN_MODEL)));
    EXPECT_EQ(e->shards, 0);
    EXPECT((e = expect_entry(&s, "dup-00001-of-00002.gguf", GGFS_SCAN_MODEL)));
    EXPECT_EQ(e->shards, 2);
    EXPECT((e = expect_entry(&s, "abs-in.gguf", GGFS_SCAN_MODEL)));
    EXPECT_STR(e->path, "abs-in.gguf");
    EXPECT_STR(e->real, "a.gguf");
    EXPECT(S_ISREG(e->a.mode));
    EXPECT(expect_entry(&s, "sha256-0a1b", GGFS_SCAN_MODEL));
    EXPECT(expect_entry(&s, "be-blob", GGFS_SCAN_MODEL));
    EXPECT(expect_entry(&s, "empty.gguf", GGFS_SCAN_MODEL));
    EXPECT(expect_entry(&s, "dir.gguf", GGFS_SCAN_DIR));
    EXPECT((e = expect_entry(&s, "linkdir", GGFS_SCAN_DIR)));
    EXPECT_STR(e->real, "sub");
    EXPECT(ggfs_scan_find(&s, "nothing") == NULL);
    ggfs_scan_free(&s);
    // An Ollama store (manifests/ and blobs/ side by side) gains ollama/.
    const char *anc2[] = {"", "store"};
    EXPECT_EQ(ggfs_scan_dir(&folder, "store", anc2, 2, &s), 0);
    EXPECT_STR(names_of(&s), "blobs manifests ollama");
    EXPECT((e = expect_entry(&s, "ollama", GGFS_SCAN_OLLAMA)));
    EXPECT_STR(e->path, "store");
    EXPECT_STR(e->real, "");
    ggfs_scan_free(&s);
    return 1;
}

static int test_links_back_up_are_not_followed(void)
{
    const char *anc[] = {"", "sub"};
    ggfs_scan s;
    EXPECT_EQ(ggfs_scan_dir(&folder, "sub", anc, 2, &s), 0);
    // back -> .. leads to the folder; side and deep lead elsewhere.
    EXPECT_STR(names_of(&s), "b.gguf deep inner side");
    EXPECT_STR(ggfs_scan_find(&s, "b.gguf")->path, "sub/b.gguf");
    ggfs_scan_free(&s);
    // Listed through linkdir (real path "sub"): the same.
    const char *anc2[] = {"", "sub"};
    EXPECT_EQ(ggfs_scan_dir(&folder, "sub", anc2, 2, &s), 0);
    EXPECT(ggfs_scan_find(&s, "back") == NULL);
    ggfs_scan_free(&s);
    // sub/deep lists inner; from there a link to "sub" would lead back.
    EXPECT(tmptree_link(folder_path, "sub/inner/again", "../../sub"));
    const char *anc3[] = {"", "sub", "sub/inner"};
    EXPECT_EQ(ggfs_scan_dir(&folder, "sub/inner", anc3, 3, &s), 0);
    EXPECT_STR(names_of(&s), "c.gguf");
    ggfs_scan_free(&s);
    return 1;
}

static int test_hugging_face_snapshot_shows_the_blob_under_its_name(void)
{
    const char *dir = "hf/models--org--name/snapshots/0123abcd";
    const char *anc[] = {"", "hf", "hf/models--org--name", "hf/models--org--name/snapshots", dir};
    ggfs_scan s;
    EXPECT_EQ(ggfs_scan_dir(&folder, dir, anc, 5, &s), 0);
    EXPECT_STR(names_of(&s), "m.gguf");
    EXPECT_STR(s.entries[0].path, "hf/models--org--name/snapshots/0123abcd/m.gguf");
    EXPECT_STR(s.entries[0].real, "hf/models--org--name/blobs/5d2f6e");
    ggfs_scan_free(&s);
    // blobs/ holds the blob, which has the magic; refs/ holds none.
    const char *anc2[] = {"", "hf", "hf/models--org--name", "hf/models--org--name/blobs"};
    EXPECT_EQ(ggfs_scan_dir(&folder, "hf/models--org--name/blobs", anc2, 4, &s), 0);
    EXPECT_STR(names_of(&s), "5d2f6e");
    ggfs_scan_free(&s);
    return 1;
}

static int test_magic_is_read_without_waiting_on_fifos(void)
{
    EXPECT(ggfs_has_gguf_magic(&folder, "sha256-0a1b"));
    EXPECT(ggfs_has_gguf_magic(&folder, "be-blob"));
    EXPECT(!ggfs_has_gguf_magic(&folder, "notes.txt"));
    EXPECT(!ggfs_has_gguf_magic(&folder, "short"));
    EXPECT(!ggfs_has_gguf_magic(&folder, "pipe")); // alarm() in main ends a hang
    EXPECT(!ggfs_has_gguf_magic(&folder, "abs-in.gguf")); // a link: not followed here
    EXPECT(!ggfs_has_gguf_magic(&folder, "nothing"));
    return 1;
}

static int test_mount_point_inside_is_not_listed(void)
{
    ggfs_folder other;
    EXPECT_EQ(ggfs_folder_open(&other, folder_path, NULL), 0);
    const char *anc[] = {""};
    ggfs_scan s;
    EXPECT_EQ(ggfs_scan_dir(&other, "", anc, 1, &s), 0);
    EXPECT(ggfs_scan_find(&s, "mnt") != NULL);
    ggfs_scan_free(&s);
    ggfs_folder_close(&other);
    return 1;
}

/* As a user that is not root: an unreadable blob is skipped, an
 * unreadable .gguf is listed (opening it will say why), and an unreadable
 * directory's listing fails with EACCES. */
static int unreadable_as_nobody(void)
{
    ggfs_folder f;
    EXPECT_EQ(ggfs_folder_open(&f, folder_path, NULL), 0);
    const char *anc[] = {"", "private"};
    ggfs_scan s;
    EXPECT_EQ(ggfs_scan_dir(&f, "private", anc, 2, &s), 0);
    EXPECT_STR(names_of(&s), "y.gguf");
    ggfs_scan_free(&s);
    const char *anc2[] = {"", "locked"};
    EXPECT_EQ(ggfs_scan_dir(&f, "locked", anc2, 2, &s), EACCES);
    ggfs_folder_close(&f);
    return 1;
}

static int test_unreadable_entries_are_skipped_or_fail_cleanly(void)
{
    EXPECT(tmptree_dir(folder_path, "locked"));
    EXPECT(tmptree_gguf(folder_path, "locked/x.gguf"));
    EXPECT(tmptree_dir(folder_path, "private"));
    EXPECT(tmptree_gguf(folder_path, "private/sha256-ff"));
    EXPECT(tmptree_gguf(folder_path, "private/y.gguf"));
    EXPECT(tmptree_chmod(folder_path, "private/sha256-ff", 0));
    EXPECT(tmptree_chmod(folder_path, "private/y.gguf", 0));
    EXPECT(tmptree_chmod(folder_path, "locked", 0));
    chmod(folder_path, 0755);
    const int ok = tmptree_as_nobody(unreadable_as_nobody);
    EXPECT(tmptree_chmod(folder_path, "locked", 0755));
    return ok;
}

static int test_missing_directory_fails_with_its_errno(void)
{
    const char *anc[] = {""};
    ggfs_scan s;
    EXPECT_EQ(ggfs_scan_dir(&folder, "no-such", anc, 1, &s), ENOENT);
    EXPECT_EQ(ggfs_scan_dir(&folder, "a.gguf", anc, 1, &s), ENOTDIR);
    EXPECT_EQ(ggfs_scan_dir(&folder, "linkdir", anc, 1, &s), ENOTDIR); // real paths only
    return 1;
}

int main(void)
{
    // A FIFO opened for reading without O_NONBLOCK would wait forever.
    alarm(60);
    int ok = build();
    if (ok) {
        ok &= test_paths_within();
        ok &= test_symlinks_resolve_only_inside();
        ok &= test_root_lists_models_sets_and_directories();
        ok &= test_links_back_up_are_not_followed();
        ok &= test_hugging_face_snapshot_shows_the_blob_under_its_name();
        ok &= test_magic_is_read_without_waiting_on_fifos();
        ok &= test_mount_point_inside_is_not_listed();
        ok &= test_unreadable_entries_are_skipped_or_fail_cleanly();
        ok &= test_missing_directory_fails_with_its_errno();
    }
    ggfs_folder_close(&folder);
    tmptree_free(folder_path);
    tmptree_free(outside);
    return ok ? 0 : 1;
}

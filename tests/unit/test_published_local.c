/*
 * What is published for a local file (fs/source/published_local.c), in
 * trees laid out as the stores lay them out: a hub cache's blobs reached
 * through snapshots, through a store of blobs the repositories share,
 * through links and linked directories; an Ollama store's blobs; then
 * FILE.sha256 and SHA256SUMS beside the name as given, their order, their
 * escapes, a FIFO or a directory in their place, and the bound on a sums
 * file read. Last, a file source opened by a relative name looks beside
 * that name from any working directory.
 */
#include "tmptree.h" // first: it asks for _GNU_SOURCE

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "source/published_local.h"
#include "source/source.h"

#define HEX_A "aaaa000011112222333344445555666677778888999900001111222233334444"
#define HEX_B "bbbb000011112222333344445555666677778888999900001111222233334444"
#define HEX_C "cccc000011112222333344445555666677778888999900001111222233334444"
#define COMMIT "4d1e6f0c2b3a59788a6e0f1d2c3b4a5968778695"
#define REPO "hub/models--org--name"

static char *g_dir;

/* The digest and where published for g_dir/rel: "HEX where", or "-". */
static const char *published(const char *rel)
{
    static char got[2 * 32 + 2 + GGFS_PUBLISHED_WHERE_MAX];
    char path[PATH_MAX];
    ggfs_published p;
    memset(&p, 0x5a, sizeof p); // every field written
    if (!tmptree_path(path, sizeof path, g_dir, rel))
        return "(path too long)";
    ggfs_published_local(path, &p);
    if (p.kind == GGFS_PUBLISHED_NONE) {
        static const uint8_t zero[32];
        return memcmp(p.digest, zero, sizeof zero) == 0 && !p.where[0] && !p.size ? "-" : "(none, not zeroed)";
    }
    if (p.kind != GGFS_PUBLISHED_SHA256)
        return "(not sha256)";
    for (int i = 0; i < 32; i++)
        snprintf(got + 2 * i, 3, "%02x", p.digest[i]);
    snprintf(got + 64, sizeof got - 64, " %s", p.where);
    return got;
}

static int test_hub_blob_through_its_snapshot(void)
{
    EXPECT(tmptree_gguf(g_dir, REPO "/blobs/" HEX_A));
    EXPECT(tmptree_dir(g_dir, REPO "/snapshots/" COMMIT "/sub"));
    EXPECT(tmptree_link(g_dir, REPO "/snapshots/" COMMIT "/a.gguf", "../../blobs/" HEX_A));
    EXPECT(tmptree_link(g_dir, REPO "/snapshots/" COMMIT "/sub/a.gguf", "../../../blobs/" HEX_A));
    EXPECT_STR(published(REPO "/snapshots/" COMMIT "/a.gguf"), HEX_A " blob name");
    EXPECT_STR(published(REPO "/snapshots/" COMMIT "/sub/a.gguf"), HEX_A " blob name");
    EXPECT_STR(published(REPO "/blobs/" HEX_A), HEX_A " blob name");
    // The blob's name rules over sums files beside the snapshot's link.
    EXPECT(tmptree_text(g_dir, REPO "/snapshots/" COMMIT "/SHA256SUMS", HEX_B "  a.gguf\n"));
    EXPECT_STR(published(REPO "/snapshots/" COMMIT "/a.gguf"), HEX_A " blob name");
    // Datasets' and spaces' repositories keep blobs alike.
    EXPECT(tmptree_gguf(g_dir, "hub/datasets--org--d/blobs/" HEX_B));
    EXPECT_STR(published("hub/datasets--org--d/blobs/" HEX_B), HEX_B " blob name");
    return 1;
}

static int test_hub_blob_through_links_and_linked_directories(void)
{
    // A link to a snapshot's file, a relative one from elsewhere, and the
    // hub reached through a linked directory: each link's directory is
    // resolved before the blob's is judged.
    EXPECT(tmptree_link(g_dir, "mine.gguf", REPO "/snapshots/" COMMIT "/a.gguf"));
    EXPECT_STR(published("mine.gguf"), HEX_A " blob name");
    EXPECT(tmptree_link(g_dir, "linked-hub", "hub"));
    EXPECT_STR(published("linked-hub/models--org--name/snapshots/" COMMIT "/a.gguf"), HEX_A " blob name");
    char abs[PATH_MAX];
    EXPECT(tmptree_path(abs, sizeof abs, g_dir, REPO "/blobs/" HEX_A));
    EXPECT(tmptree_link(g_dir, "abs.gguf", abs));
    EXPECT_STR(published("abs.gguf"), HEX_A " blob name");
    // A blob that is itself a link into the store of blobs the hub's
    // repositories share, named there by another hash: the repository's
    // name for it is the one that is its SHA-256.
    EXPECT(tmptree_gguf(g_dir, "hub/blobs/cc/" HEX_C));
    EXPECT(tmptree_link(g_dir, REPO "/blobs/" HEX_B, "../../blobs/cc/" HEX_C));
    EXPECT(tmptree_link(g_dir, REPO "/snapshots/" COMMIT "/shared.gguf", "../../blobs/" HEX_B));
    EXPECT_STR(published(REPO "/snapshots/" COMMIT "/shared.gguf"), HEX_B " blob name");
    EXPECT_STR(published("hub/blobs/cc/" HEX_C), "-");
    return 1;
}

static int test_what_is_no_hub_blob(void)
{
    // blobs/ of a directory that is no repository, a git blob's 40 hex
    // digits, upper-case digits, a name with more after the digits.
    EXPECT(tmptree_gguf(g_dir, "plain/blobs/" HEX_A));
    EXPECT_STR(published("plain/blobs/" HEX_A), "-");
    EXPECT(tmptree_gguf(g_dir, "blobs/" HEX_A));
    EXPECT_STR(published("blobs/" HEX_A), "-");
    EXPECT(tmptree_gguf(g_dir, REPO "/blobs/" COMMIT));
    EXPECT_STR(published(REPO "/blobs/" COMMIT), "-");
    EXPECT(tmptree_gguf(g_dir, REPO "/blobs/AAAA000011112222333344445555666677778888999900001111222233334444"));
    EXPECT_STR(published(REPO "/blobs/AAAA000011112222333344445555666677778888999900001111222233334444"), "-");
    EXPECT(tmptree_gguf(g_dir, REPO "/blobs/" HEX_A ".incomplete"));
    EXPECT_STR(published(REPO "/blobs/" HEX_A ".incomplete"), "-");
    EXPECT(tmptree_gguf(g_dir, REPO "/other/" HEX_A));
    EXPECT_STR(published(REPO "/other/" HEX_A), "-");
    // A link that leads nowhere, and links in a loop.
    EXPECT(tmptree_link(g_dir, "dangling.gguf", "nowhere/" HEX_A));
    EXPECT_STR(published("dangling.gguf"), "-");
    EXPECT(tmptree_link(g_dir, "loop-a.gguf", "loop-b.gguf"));
    EXPECT(tmptree_link(g_dir, "loop-b.gguf", "loop-a.gguf"));
    EXPECT_STR(published("loop-a.gguf"), "-");
    return 1;
}

static int test_ollama_blob(void)
{
    EXPECT(tmptree_gguf(g_dir, "ollama/models/blobs/sha256-" HEX_B));
    EXPECT_STR(published("ollama/models/blobs/sha256-" HEX_B), HEX_B " blob name");
    EXPECT(tmptree_gguf(g_dir, "ollama/models/blobs/sha256:" HEX_C));
    EXPECT_STR(published("ollama/models/blobs/sha256:" HEX_C), HEX_C " blob name");
    EXPECT(tmptree_link(g_dir, "ollama-link.gguf", "ollama/models/blobs/sha256-" HEX_B));
    EXPECT_STR(published("ollama-link.gguf"), HEX_B " blob name");
    // Named so, but not among blobs; digits cut short.
    EXPECT(tmptree_gguf(g_dir, "elsewhere/sha256-" HEX_B));
    EXPECT_STR(published("elsewhere/sha256-" HEX_B), "-");
    EXPECT(tmptree_gguf(g_dir, "ollama/models/blobs/sha256-aaaa"));
    EXPECT_STR(published("ollama/models/blobs/sha256-aaaa"), "-");
    EXPECT(tmptree_gguf(g_dir, "ollama/models/blobs/md5-" HEX_B));
    EXPECT_STR(published("ollama/models/blobs/md5-" HEX_B), "-");
    return 1;
}

static int test_file_sha256_beside_the_name_given(void)
{
    EXPECT(tmptree_gguf(g_dir, "single/m.gguf"));
    EXPECT_STR(published("single/m.gguf"), "-");
    EXPECT(tmptree_text(g_dir, "single/m.gguf.sha256", HEX_A "  m.gguf\n"));
    EXPECT_STR(published("single/m.gguf"), HEX_A " m.gguf.sha256");
    // The digits alone, or with whatever name (the file names its file).
    EXPECT(tmptree_text(g_dir, "single/m.gguf.sha256", HEX_B));
    EXPECT_STR(published("single/m.gguf"), HEX_B " m.gguf.sha256");
    EXPECT(tmptree_text(g_dir, "single/m.gguf.sha256", HEX_C " */elsewhere/x.gguf\n"));
    EXPECT_STR(published("single/m.gguf"), HEX_C " m.gguf.sha256");
    // FILE.sha256 comes before SHA256SUMS; one that does not parse does not.
    EXPECT(tmptree_text(g_dir, "single/SHA256SUMS", HEX_A "  m.gguf\n"));
    EXPECT_STR(published("single/m.gguf"), HEX_C " m.gguf.sha256");
    EXPECT(tmptree_text(g_dir, "single/m.gguf.sha256", "not a digest\n"));
    EXPECT_STR(published("single/m.gguf"), HEX_A " SHA256SUMS");
    // Beside the link, not the file it leads to.
    EXPECT(tmptree_text(g_dir, "single/m.gguf.sha256", HEX_B "\n"));
    EXPECT(tmptree_link(g_dir, "link-to-m.gguf", "single/m.gguf"));
    EXPECT_STR(published("link-to-m.gguf"), "-");
    EXPECT(tmptree_text(g_dir, "link-to-m.gguf.sha256", HEX_C "\n"));
    EXPECT_STR(published("link-to-m.gguf"), HEX_C " link-to-m.gguf.sha256");
    return 1;
}

static int test_file_sha256_named_in_where_cut_at_its_start(void)
{
    const char *name = "long/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf";
    char sums[256];
    snprintf(sums, sizeof sums, "%s.sha256", name);
    EXPECT(tmptree_gguf(g_dir, name));
    EXPECT(tmptree_text(g_dir, sums, HEX_A "\n"));
    const char *got = published(name);
    EXPECT_STR(got, HEX_A " ...a-3.1-8B-Instruct-Q4_K_M.gguf.sha256");
    EXPECT_EQ(strlen(got + 65), GGFS_PUBLISHED_WHERE_MAX - 1);
    return 1;
}

static int test_sha256sums_line_for_the_file(void)
{
    EXPECT(tmptree_gguf(g_dir, "sums/a.gguf"));
    EXPECT(tmptree_gguf(g_dir, "sums/b.gguf"));
    EXPECT(tmptree_gguf(g_dir, "sums/c.gguf"));
    EXPECT(tmptree_file(g_dir, "sums/a\nb.gguf", "GGUF", 4));
    EXPECT(tmptree_file(g_dir, "sums/back\\slash.gguf", "GGUF", 4));
    EXPECT(tmptree_text(g_dir, "sums/SHA256SUMS",
                        "# made by hand\n"
                        HEX_A "  a.gguf\n"
                        HEX_B " *./b.gguf\r\n"
                        "\\" HEX_C "  a\\nb.gguf\n"
                        "\\" HEX_A "  back\\\\slash.gguf\n"
                        HEX_C "  sub/c.gguf\n"
                        HEX_C "  c.gguf.bak\n"));
    EXPECT_STR(published("sums/a.gguf"), HEX_A " SHA256SUMS");
    EXPECT_STR(published("sums/b.gguf"), HEX_B " SHA256SUMS");
    EXPECT_STR(published("sums/a\nb.gguf"), HEX_C " SHA256SUMS");
    EXPECT_STR(published("sums/back\\slash.gguf"), HEX_A " SHA256SUMS");
    EXPECT_STR(published("sums/c.gguf"), "-");
    // Written after the first lookup: found by the next.
    EXPECT(tmptree_text(g_dir, "sums/SHA256SUMS", HEX_B "  c.gguf\n"));
    EXPECT_STR(published("sums/c.gguf"), HEX_B " SHA256SUMS");
    // A link named SHA256SUMS is followed.
    EXPECT(tmptree_text(g_dir, "sums/elsewhere.txt", HEX_C "  c.gguf\n"));
    char path[PATH_MAX];
    EXPECT(tmptree_path(path, sizeof path, g_dir, "sums/SHA256SUMS") && unlink(path) == 0);
    EXPECT(tmptree_link(g_dir, "sums/SHA256SUMS", "elsewhere.txt"));
    EXPECT_STR(published("sums/c.gguf"), HEX_C " SHA256SUMS");
    return 1;
}

/* Whether looking up rel returns "-" within a second. */
static int answers_at_once(const char *rel)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    EXPECT_STR(published(rel), "-");
    clock_gettime(CLOCK_MONOTONIC, &b);
    EXPECT((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 1000000000L);
    return 1;
}

static int test_sums_files_that_are_no_regular_files(void)
{
    EXPECT(tmptree_gguf(g_dir, "odd/f.gguf"));
    EXPECT(tmptree_fifo(g_dir, "odd/f.gguf.sha256"));
    EXPECT(tmptree_fifo(g_dir, "odd/SHA256SUMS"));
    EXPECT(answers_at_once("odd/f.gguf")); // a FIFO with no writer is not waited on
    EXPECT(tmptree_gguf(g_dir, "odd2/f.gguf"));
    EXPECT(tmptree_dir(g_dir, "odd2/f.gguf.sha256"));
    EXPECT(tmptree_dir(g_dir, "odd2/SHA256SUMS"));
    EXPECT(answers_at_once("odd2/f.gguf"));
    EXPECT(tmptree_gguf(g_dir, "odd3/f.gguf"));
    EXPECT(tmptree_link(g_dir, "odd3/SHA256SUMS", "/dev/zero"));
    EXPECT(answers_at_once("odd3/f.gguf"));
    return 1;
}

/* Makes g_dir/rel with line at offset at, newline-ended padding before it
 * (a sparse run of zeros, then '\n'), size bytes in all. */
static int sparse_sums(const char *rel, const char *line, off_t at, off_t size)
{
    char path[PATH_MAX];
    EXPECT(tmptree_path(path, sizeof path, g_dir, rel));
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT(fd >= 0);
    int ok = ftruncate(fd, size) == 0;
    if (at > 0)
        ok &= pwrite(fd, "\n", 1, at - 1) == 1;
    ok &= pwrite(fd, line, strlen(line), at) == (ssize_t)strlen(line);
    close(fd);
    EXPECT(ok);
    return 1;
}

static int test_sums_file_read_to_its_bound(void)
{
    const off_t max = GGFS_PUBLISHED_SUMS_MAX;
    EXPECT(tmptree_gguf(g_dir, "big/m.gguf"));
    // A line at the start of a file longer than the bound: read.
    EXPECT(sparse_sums("big/SHA256SUMS", HEX_A "  m.gguf\n", 0, max + 4096));
    EXPECT_STR(published("big/m.gguf"), HEX_A " SHA256SUMS");
    // Past the bound: not.
    EXPECT(sparse_sums("big/SHA256SUMS", HEX_A "  m.gguf\n", max + 1, max + 4096));
    EXPECT_STR(published("big/m.gguf"), "-");
    // Cut by the bound right after the name: "m.gguf.bak" is another file.
    const off_t at = max - (off_t)strlen(HEX_A "  m.gguf");
    EXPECT(sparse_sums("big/SHA256SUMS", HEX_A "  m.gguf.bak\n", at, max + 4096));
    EXPECT_STR(published("big/m.gguf"), "-");
    // The same line ending the file at the bound, with no newline: read.
    EXPECT(sparse_sums("big/SHA256SUMS", HEX_A "  m.gguf", at, max));
    EXPECT_STR(published("big/m.gguf"), HEX_A " SHA256SUMS");
    return 1;
}

static int test_relative_names(void)
{
    char cwd[PATH_MAX], dir[PATH_MAX];
    EXPECT(getcwd(cwd, sizeof cwd));
    EXPECT(tmptree_path(dir, sizeof dir, g_dir, "sums"));
    EXPECT_EQ(chdir(dir), 0);
    ggfs_published p;
    ggfs_published_local("c.gguf", &p);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_STR(p.where, "SHA256SUMS");
    ggfs_published_local("../mine.gguf", &p); // a link to a snapshot's file
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_STR(p.where, "blob name");
    ggfs_published_local("", &p);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    ggfs_published_local("../sums/", &p);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    EXPECT_EQ(chdir(cwd), 0);
    return 1;
}

/* The daemon leaves its working directory after opening a model named
 * relative to it: its file source looks up beside the name it opened. */
static int test_file_source_looks_beside_its_name_from_anywhere(void)
{
    char cwd[PATH_MAX], dir[PATH_MAX];
    EXPECT(getcwd(cwd, sizeof cwd));
    EXPECT(tmptree_path(dir, sizeof dir, g_dir, "single"));
    EXPECT_EQ(chdir(dir), 0);
    ggp_error err;
    ggfs_source *s = ggfs_source_file_open("m.gguf", &err);
    EXPECT(s);
    EXPECT_STR(s->name, "m.gguf");
    EXPECT_EQ(chdir("/"), 0);
    EXPECT(s->ops->look_up_published);
    ggfs_published p;
    s->ops->look_up_published(s, &p);
    EXPECT_EQ(chdir(cwd), 0);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_STR(p.where, "m.gguf.sha256");
    EXPECT_EQ(p.digest[0], 0xbb);
    ggfs_source_close(s);
    // Through a link, beside the link (link-to-m.gguf.sha256 holds HEX_C).
    char path[PATH_MAX];
    EXPECT(tmptree_path(path, sizeof path, g_dir, "link-to-m.gguf"));
    s = ggfs_source_file_open(path, &err);
    EXPECT(s);
    s->ops->look_up_published(s, &p);
    EXPECT_EQ(p.digest[0], 0xcc);
    ggfs_source_close(s);
    return 1;
}

int main(void)
{
    g_dir = tmptree_new();
    if (!g_dir) {
        perror("mkdtemp");
        return 1;
    }
    int ok = 1;
    ok &= test_hub_blob_through_its_snapshot();
    ok &= test_hub_blob_through_links_and_linked_directories();
    ok &= test_what_is_no_hub_blob();
    ok &= test_ollama_blob();
    ok &= test_file_sha256_beside_the_name_given();
    ok &= test_file_sha256_named_in_where_cut_at_its_start();
    ok &= test_sha256sums_line_for_the_file();
    ok &= test_sums_files_that_are_no_regular_files();
    ok &= test_sums_file_read_to_its_bound();
    ok &= test_relative_names();
    ok &= test_file_source_looks_beside_its_name_from_anywhere();
    tmptree_free(g_dir);
    return ok ? 0 : 1;
}

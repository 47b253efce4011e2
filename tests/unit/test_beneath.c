/*
 * Walking a directory and reading small files beneath a folder of models:
 * which entries a walk gives and how it ends (a missing or unreadable
 * directory, a readdir that fails part-way, a callback out of memory);
 * reads bounded, never through a symlink, never waiting on a FIFO, and
 * refused for what is not a regular file or cannot be read.
 */
#include "tmptree.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>

#include "catalog/beneath.h"
#include "check.h"

static char *folder_path;
static ggfs_folder folder;

/* The folder every test uses:
 *
 *   walk/{a, .hidden, sub/, link -> a, pipe (a FIFO)}
 *   ten (10 bytes)   empty   pipe (a FIFO)   dir/   dirlink -> walk   link -> ten
 *   dangling -> nowhere
 *   locked/ (mode 0)   secret (mode 0)
 */
static int build(void)
{
    folder_path = tmptree_new();
    EXPECT(folder_path != NULL);
    const char *F = folder_path;
    EXPECT(tmptree_text(F, "walk/a", "a"));
    EXPECT(tmptree_text(F, "walk/.hidden", "h"));
    EXPECT(tmptree_dir(F, "walk/sub"));
    EXPECT(tmptree_link(F, "walk/link", "a"));
    EXPECT(tmptree_fifo(F, "walk/pipe"));
    EXPECT(tmptree_text(F, "ten", "0123456789"));
    EXPECT(tmptree_file(F, "empty", "", 0));
    EXPECT(tmptree_fifo(F, "pipe"));
    EXPECT(tmptree_dir(F, "dir"));
    EXPECT(tmptree_link(F, "dirlink", "walk"));
    EXPECT(tmptree_link(F, "link", "ten"));
    EXPECT(tmptree_link(F, "dangling", "nowhere"));
    EXPECT(tmptree_dir(F, "locked"));
    EXPECT(tmptree_text(F, "locked/x", "x"));
    EXPECT(tmptree_chmod(F, "locked", 0));
    EXPECT(tmptree_text(F, "secret", "s"));
    EXPECT(tmptree_chmod(F, "secret", 0));
    EXPECT(chmod(F, 0755) == 0); // for the tests run as nobody
    EXPECT_EQ(ggfs_folder_open(&folder, F, NULL), 0);
    return 1;
}

/* ==== Walking ==== */

/* Linked with -Wl,--wrap=readdir64 (what readdir is with 64-bit offsets):
 * once failing_after names other than "." and ".." were given, the next
 * readdir fails with EIO; -1 never. */
static long failing_after = -1;

struct dirent *__real_readdir64(DIR *d);
struct dirent *__wrap_readdir64(DIR *d);

struct dirent *__wrap_readdir64(DIR *d)
{
    if (failing_after == 0) {
        errno = EIO;
        return NULL;
    }
    struct dirent *de = __real_readdir64(d);
    if (de && failing_after > 0 && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
        failing_after--;
    return de;
}

#define MAX_SEEN 16

typedef struct seen {
    char names[MAX_SEEN][NAME_MAX + 1];
    size_t calls;
    unsigned char link_type;
    size_t stop_after; // the call that returns false; 0: none
    char joined[MAX_SEEN * (NAME_MAX + 1)];
} seen;

static bool note(void *ctx, const char *name, unsigned char type)
{
    seen *s = ctx;
    if (s->calls < MAX_SEEN)
        snprintf(s->names[s->calls], sizeof s->names[0], "%s", name);
    s->calls++;
    if (strcmp(name, "link") == 0)
        s->link_type = type;
    return s->calls != s->stop_after;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The names given, sorted (readdir's order is the file system's) and
 * joined by spaces. */
static const char *names_of(seen *s)
{
    const size_t n = s->calls < MAX_SEEN ? s->calls : MAX_SEEN;
    qsort(s->names, n, sizeof s->names[0], by_name);
    s->joined[0] = '\0';
    for (size_t i = 0; i < n; i++)
        strcat(strcat(s->joined, i ? " " : ""), s->names[i]);
    return s->joined;
}

static int test_walk_gives_every_entry_but_dot_and_dotdot(void)
{
    seen s = {0};
    EXPECT_EQ(ggfs_folder_each(&folder, "walk", 0, note, &s), 0);
    EXPECT_STR(names_of(&s), ".hidden a link pipe sub");
    // The type as the directory says it: a link is not followed.
    EXPECT(s.link_type == DT_LNK || s.link_type == DT_UNKNOWN);
    return 1;
}

static int test_walk_skips_hidden_names_when_asked(void)
{
    seen s = {0};
    EXPECT_EQ(ggfs_folder_each(&folder, "walk", GGFS_EACH_SKIP_HIDDEN, note, &s), 0);
    EXPECT_STR(names_of(&s), "a link pipe sub");
    return 1;
}

static int test_walk_of_the_folder_itself(void)
{
    seen s = {0};
    EXPECT_EQ(ggfs_folder_each(&folder, "", 0, note, &s), 0);
    EXPECT_STR(names_of(&s), "dangling dir dirlink empty link locked pipe secret ten walk");
    return 1;
}

static int test_walk_stops_when_the_callback_is_out_of_memory(void)
{
    seen s = {.stop_after = 2};
    EXPECT_EQ(ggfs_folder_each(&folder, "walk", 0, note, &s), ENOMEM);
    EXPECT_EQ(s.calls, 2);
    return 1;
}

static int test_walk_of_what_is_no_directory_fails_with_its_errno(void)
{
    seen s = {0};
    EXPECT_EQ(ggfs_folder_each(&folder, "no-such", 0, note, &s), ENOENT);
    EXPECT_EQ(ggfs_folder_each(&folder, "ten", 0, note, &s), ENOTDIR);
    // A symlink to a directory is not followed: callers pass real paths.
    EXPECT_EQ(ggfs_folder_each(&folder, "dirlink", 0, note, &s), ENOTDIR);
    EXPECT_EQ(ggfs_folder_each(&folder, "walk/pipe", 0, note, &s), ENOTDIR); // no wait on a FIFO
    EXPECT_EQ(s.calls, 0);
    return 1;
}

static int test_walk_reports_a_readdir_failing_part_way(void)
{
    seen s = {0};
    failing_after = 2;
    const int err = ggfs_folder_each(&folder, "walk", 0, note, &s);
    failing_after = -1;
    EXPECT_EQ(err, EIO);
    EXPECT_EQ(s.calls, 2); // the entries before it were given
    return 1;
}

static int test_walk_keeps_what_came_before_a_failing_readdir_when_asked(void)
{
    seen s = {0};
    failing_after = 2;
    const int err = ggfs_folder_each(&folder, "walk", GGFS_EACH_KEEP_PARTIAL, note, &s);
    failing_after = -1;
    EXPECT_EQ(err, 0);
    EXPECT_EQ(s.calls, 2);
    // At once, a walk that gives nothing.
    failing_after = 0;
    const int none = ggfs_folder_each(&folder, "walk", GGFS_EACH_KEEP_PARTIAL, note, &s);
    const int fails = ggfs_folder_each(&folder, "walk", 0, note, &s);
    failing_after = -1;
    EXPECT_EQ(none, 0);
    EXPECT_EQ(fails, EIO);
    EXPECT_EQ(s.calls, 2);
    return 1;
}

/* ==== Reading ==== */

static int test_read_head_stops_at_the_bound(void)
{
    char buf[16];
    size_t got = 99;
    struct stat st;
    memset(buf, '#', sizeof buf);
    EXPECT_EQ(ggfs_folder_read_head(&folder, "ten", buf, 4, &got, &st), 0);
    EXPECT_EQ(got, 4);
    EXPECT(memcmp(buf, "0123####", 8) == 0); // not a byte past the bound
    EXPECT_EQ(st.st_size, 10); // the whole file's size all the same
    EXPECT(S_ISREG(st.st_mode));
    return 1;
}

static int test_read_head_of_a_shorter_file_says_how_much(void)
{
    char buf[16];
    size_t got = 99;
    EXPECT_EQ(ggfs_folder_read_head(&folder, "ten", buf, sizeof buf, &got, NULL), 0);
    EXPECT_EQ(got, 10);
    EXPECT(memcmp(buf, "0123456789", 10) == 0);
    EXPECT_EQ(ggfs_folder_read_head(&folder, "empty", buf, sizeof buf, &got, NULL), 0);
    EXPECT_EQ(got, 0);
    return 1;
}

static int test_read_head_refuses_links_fifos_and_directories(void)
{
    char buf[16];
    size_t got = 99;
    EXPECT_EQ(ggfs_folder_read_head(&folder, "link", buf, sizeof buf, &got, NULL), ELOOP);
    EXPECT_EQ(got, 0);
    EXPECT_EQ(ggfs_folder_read_head(&folder, "dangling", buf, sizeof buf, &got, NULL), ELOOP);
    EXPECT_EQ(ggfs_folder_read_head(&folder, "pipe", buf, sizeof buf, &got, NULL), EINVAL); // alarm() ends a hang
    EXPECT_EQ(ggfs_folder_read_head(&folder, "dir", buf, sizeof buf, &got, NULL), EINVAL);
    EXPECT_EQ(ggfs_folder_read_head(&folder, "no-such", buf, sizeof buf, &got, NULL), ENOENT);
    EXPECT_EQ(ggfs_folder_read_head(&folder, "walk/link", buf, sizeof buf, &got, NULL), ELOOP);
    return 1;
}

static int test_read_small_reads_the_whole_file_nul_terminated(void)
{
    char *data = NULL;
    size_t len = 99;
    EXPECT_EQ(ggfs_folder_read_small(&folder, "ten", 10, &data, &len), 0); // exactly the bound
    EXPECT_EQ(len, 10);
    EXPECT_STR(data, "0123456789");
    free(data);
    EXPECT_EQ(ggfs_folder_read_small(&folder, "empty", 10, &data, &len), 0);
    EXPECT_EQ(len, 0);
    EXPECT_STR(data, "");
    free(data);
    return 1;
}

static int test_read_small_refuses_a_file_larger_than_the_bound(void)
{
    char *data = NULL;
    size_t len = 99;
    EXPECT_EQ(ggfs_folder_read_small(&folder, "ten", 9, &data, &len), EFBIG);
    EXPECT(data == NULL);
    EXPECT_EQ(ggfs_folder_read_small(&folder, "ten", 0, &data, &len), EFBIG);
    EXPECT(data == NULL);
    return 1;
}

static int test_read_small_refuses_links_fifos_and_directories(void)
{
    char *data = NULL;
    size_t len;
    EXPECT_EQ(ggfs_folder_read_small(&folder, "link", 100, &data, &len), ELOOP);
    EXPECT_EQ(ggfs_folder_read_small(&folder, "pipe", 100, &data, &len), EINVAL);
    EXPECT_EQ(ggfs_folder_read_small(&folder, "dir", 100, &data, &len), EINVAL);
    EXPECT_EQ(ggfs_folder_read_small(&folder, "no-such", 100, &data, &len), ENOENT);
    EXPECT(data == NULL);
    return 1;
}

/* ==== What nobody may read ==== */

/* As a user that is not root: the unreadable file is refused by both
 * reads and the unreadable directory by a walk, each with EACCES, while a
 * walk of the folder gives them by name. */
static int unreadable_fail_with_eacces(void)
{
    ggfs_folder f;
    EXPECT_EQ(ggfs_folder_open(&f, folder_path, NULL), 0);
    char buf[8], *data = NULL;
    size_t got, len;
    seen s = {0};
    EXPECT_EQ(ggfs_folder_read_head(&f, "secret", buf, sizeof buf, &got, NULL), EACCES);
    EXPECT_EQ(ggfs_folder_read_small(&f, "secret", 100, &data, &len), EACCES);
    EXPECT(data == NULL);
    EXPECT_EQ(ggfs_folder_each(&f, "locked", 0, note, &s), EACCES);
    EXPECT_EQ(s.calls, 0);
    EXPECT_EQ(ggfs_folder_each(&f, "", 0, note, &s), 0);
    EXPECT_STR(names_of(&s), "dangling dir dirlink empty link locked pipe secret ten walk");
    ggfs_folder_close(&f);
    return 1;
}

static int test_unreadable_entries_fail_with_eacces(void)
{
    return tmptree_as_nobody(unreadable_fail_with_eacces);
}

int main(void)
{
    // A FIFO opened for reading without O_NONBLOCK would wait forever.
    alarm(60);
    int ok = build();
    if (ok) {
        ok &= test_walk_gives_every_entry_but_dot_and_dotdot();
        ok &= test_walk_skips_hidden_names_when_asked();
        ok &= test_walk_of_the_folder_itself();
        ok &= test_walk_stops_when_the_callback_is_out_of_memory();
        ok &= test_walk_of_what_is_no_directory_fails_with_its_errno();
        ok &= test_walk_reports_a_readdir_failing_part_way();
        ok &= test_walk_keeps_what_came_before_a_failing_readdir_when_asked();
        ok &= test_read_head_stops_at_the_bound();
        ok &= test_read_head_of_a_shorter_file_says_how_much();
        ok &= test_read_head_refuses_links_fifos_and_directories();
        ok &= test_read_small_reads_the_whole_file_nul_terminated();
        ok &= test_read_small_refuses_a_file_larger_than_the_bound();
        ok &= test_read_small_refuses_links_fifos_and_directories();
        ok &= test_unreadable_entries_fail_with_eacces();
    }
    ggfs_folder_close(&folder);
    tmptree_chmod(folder_path, "locked", 0755);
    tmptree_free(folder_path);
    return ok ? 0 : 1;
}

/*
 * A local file as a source of bytes (fs/source/source_file.c): its size,
 * mapping and reads; the refusals at open; and change detection, final
 * once seen and logged once: the open file grown or cut short, a read
 * past its end, and the path renamed over.
 */
#include "tmptree.h" // first: it asks for _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "source/source.h"
#include "util/log.h"

#define SIZE 10000

static uint8_t g_bytes[SIZE];
static char *g_dir;
static int g_lines;
static char g_log[512];

static void capture(int level, const char *fmt, va_list ap)
{
    (void)level;
    g_lines++;
    vsnprintf(g_log, sizeof g_log, fmt, ap);
}

static ggfs_source *open_copy(const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", g_dir, name);
    if (!tmptree_file(g_dir, name, g_bytes, SIZE))
        return NULL;
    ggp_error err;
    ggfs_source *s = ggfs_source_file_open(path, &err);
    if (!s)
        fprintf(stderr, "%s: %s\n", path, err.msg);
    return s;
}

static int test_file_is_mapped_and_read(void)
{
    char path[4200];
    ggfs_source *s = open_copy("a.bin", path, sizeof path);
    EXPECT(s);
    EXPECT_EQ(s->size, SIZE);
    EXPECT_STR(s->name, path);
    EXPECT(S_ISREG(s->st.st_mode));
    EXPECT_EQ(s->st.st_size, SIZE);
    EXPECT(s->map && memcmp(s->map, g_bytes, SIZE) == 0);
    uint8_t buf[3000];
    EXPECT_EQ(ggfs_source_read(s, buf, sizeof buf, 4321, SIZE), 0);
    EXPECT(memcmp(buf, g_bytes + 4321, sizeof buf) == 0);
    EXPECT_EQ(ggfs_source_read(s, buf, 10, SIZE - 10, SIZE), 0);
    EXPECT(memcmp(buf, g_bytes + SIZE - 10, 10) == 0);
    EXPECT(ggfs_source_unchanged(s));
    EXPECT(ggfs_source_unchanged(s));
    s->ops->opened(s);
    ggfs_source_close(s);
    return 1;
}

static int test_what_is_no_regular_file_is_refused(void)
{
    ggp_error err;
    char path[4200];
    snprintf(path, sizeof path, "%s/none.bin", g_dir);
    EXPECT(!ggfs_source_file_open(path, &err));
    EXPECT_EQ(err.code, GGP_ERR_IO);
    EXPECT_STR(err.msg, "cannot open: No such file or directory");
    EXPECT(!ggfs_source_file_open(g_dir, &err));
    EXPECT_STR(err.msg, "cannot open: not a regular file");
    // A FIFO: refused at once, not waited on for a writer.
    EXPECT(tmptree_fifo(g_dir, "fifo"));
    snprintf(path, sizeof path, "%s/fifo", g_dir);
    EXPECT(!ggfs_source_file_open(path, &err));
    EXPECT_STR(err.msg, "cannot open: not a regular file");
    // An empty file opens, with nothing mapped.
    EXPECT(tmptree_text(g_dir, "empty", ""));
    snprintf(path, sizeof path, "%s/empty", g_dir);
    ggfs_source *s = ggfs_source_file_open(path, &err);
    EXPECT(s);
    EXPECT_EQ(s->size, 0);
    EXPECT(!s->map);
    ggfs_source_close(s);
    return 1;
}

static int test_file_grown_under_it_is_changed_for_good(void)
{
    char path[4200];
    ggfs_source *s = open_copy("grown.bin", path, sizeof path);
    EXPECT(s);
    EXPECT(ggfs_source_unchanged(s));
    FILE *f = fopen(path, "ab");
    EXPECT(f);
    EXPECT_EQ(fwrite("x", 1, 1, f), 1);
    fclose(f);
    g_lines = 0;
    EXPECT(!ggfs_source_unchanged(s));
    EXPECT(!ggfs_source_unchanged(s));
    EXPECT_EQ(g_lines, 1); // said once
    EXPECT(strstr(g_log, "grown.bin") && strstr(g_log, "changed (size 10000, now 10001)"));
    // Put back as it was, size and time: a change is final.
    EXPECT_EQ(truncate(path, SIZE), 0);
    EXPECT_EQ(utimensat(AT_FDCWD, path, (struct timespec[2]){s->st.st_atim, s->st.st_mtim}, 0), 0);
    struct stat st;
    EXPECT_EQ(stat(path, &st), 0);
    EXPECT(st.st_size == s->st.st_size && st.st_mtim.tv_nsec == s->st.st_mtim.tv_nsec);
    EXPECT(!ggfs_source_unchanged(s));
    EXPECT_EQ(g_lines, 1);
    ggfs_source_close(s);
    return 1;
}

static int test_read_past_a_cut_fails_and_marks_the_file_changed(void)
{
    char path[4200];
    ggfs_source *s = open_copy("cut.bin", path, sizeof path);
    EXPECT(s);
    EXPECT_EQ(truncate(path, SIZE / 2), 0);
    uint8_t buf[100];
    g_lines = 0;
    EXPECT_EQ(ggfs_source_read(s, buf, 100, 100, SIZE), 0); // before the cut: still there
    EXPECT_EQ(ggfs_source_read(s, buf, 100, SIZE - 100, SIZE), EIO);
    EXPECT_EQ(ggfs_source_read(s, buf, 100, SIZE - 200, SIZE), EIO);
    EXPECT_EQ(g_lines, 1); // said once
    EXPECT(strstr(g_log, "was cut short"));
    EXPECT(!ggfs_source_unchanged(s));
    EXPECT_EQ(g_lines, 1);
    ggfs_source_close(s);
    return 1;
}

static int test_path_renamed_over_is_changed(void)
{
    char path[4200];
    ggfs_source *s = open_copy("renamed.bin", path, sizeof path);
    EXPECT(s);
    // The same bytes, another file: the open one is intact, the path is not it.
    EXPECT(tmptree_file(g_dir, "new.bin", g_bytes, SIZE));
    char from[4200];
    snprintf(from, sizeof from, "%s/new.bin", g_dir);
    EXPECT_EQ(rename(from, path), 0);
    g_lines = 0;
    EXPECT(!ggfs_source_unchanged(s)); // the first check looks at the path
    EXPECT(strstr(g_log, "was replaced or removed"));
    uint8_t buf[16];
    EXPECT_EQ(ggfs_source_read(s, buf, 16, 0, SIZE), 0); // the open file's bytes are still read
    EXPECT(memcmp(buf, g_bytes, 16) == 0);
    ggfs_source_close(s);

    // Removed: the same.
    s = open_copy("removed.bin", path, sizeof path);
    EXPECT(s);
    EXPECT_EQ(unlink(path), 0);
    EXPECT(!ggfs_source_unchanged(s));
    ggfs_source_close(s);
    return 1;
}

/* A relative path is watched as the absolute one it named: the daemon
 * leaves its working directory. */
static int test_relative_path_is_watched_from_anywhere(void)
{
    char cwd[4200];
    EXPECT(getcwd(cwd, sizeof cwd));
    EXPECT(tmptree_file(g_dir, "rel.bin", g_bytes, SIZE));
    EXPECT_EQ(chdir(g_dir), 0);
    ggp_error err;
    ggfs_source *s = ggfs_source_file_open("rel.bin", &err);
    EXPECT_EQ(chdir("/"), 0);
    EXPECT(s);
    EXPECT_STR(s->name, "rel.bin");
    EXPECT(ggfs_source_unchanged(s)); // the path is checked at the first call
    ggfs_source_close(s);
    EXPECT_EQ(chdir(cwd), 0);
    return 1;
}

int main(void)
{
    ggfs_log_set_sink(capture);
    for (size_t i = 0; i < SIZE; i++)
        g_bytes[i] = (uint8_t)(i ^ (i >> 8));
    g_dir = tmptree_new();
    if (!g_dir)
        return 1;
    int ok = test_file_is_mapped_and_read();
    ok &= test_what_is_no_regular_file_is_refused();
    ok &= test_file_grown_under_it_is_changed_for_good();
    ok &= test_read_past_a_cut_fails_and_marks_the_file_changed();
    ok &= test_path_renamed_over_is_changed();
    ok &= test_relative_path_is_watched_from_anywhere();
    tmptree_free(g_dir);
    printf("source file: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

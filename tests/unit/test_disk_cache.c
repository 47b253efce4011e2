/*
 * The on-disk cache of remote files (fs/source/disk_cache.c), in a fresh
 * directory: blocks written whole and read back, in part and mapped; the
 * last, short block; the blocks found again by the next open of the same
 * file and not by another file's; block files cut short ignored; a block
 * another daemon wrote found when asked; a directory holding another
 * file's blocks refused; no temporary left behind.
 */
#include "tmptree.h" // first: it asks for _GNU_SOURCE

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "source/disk_cache.h"

#define BLOCK 4096
#define SIZE (3 * BLOCK + 100) // four blocks, the last of 100 bytes
#define URL "http://example.org/m.gguf"

static uint8_t g_file[SIZE];

/* The one directory under root/gguf-fs-blocks, into out. */
static bool key_dir(const char *root, char *out, size_t cap)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/gguf-fs-blocks", root);
    DIR *d = opendir(path);
    if (!d)
        return false;
    int n = 0;
    bool fits = true;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] != '.') {
            fits = fits && (size_t)snprintf(out, cap, "%s/%s", path, e->d_name) < cap;
            n++;
        }
    }
    closedir(d);
    return n == 1 && fits;
}

static ggfs_disk_cache *open_cache(const char *root, const char *validator)
{
    char why[256] = "";
    ggfs_disk_cache *c = ggfs_disk_cache_open(root, URL, validator, SIZE, BLOCK, why, sizeof why);
    if (!c)
        fprintf(stderr, "disk cache: %s\n", why);
    return c;
}

static int test_blocks_are_written_whole_and_read_back(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    ggfs_disk_cache *c = open_cache(root, "\"etag-1\"");
    EXPECT(c);
    EXPECT_EQ(ggfs_disk_cache_bytes(c), 0);
    EXPECT(!ggfs_disk_cache_has(c, 0));
    uint8_t buf[BLOCK];
    EXPECT(!ggfs_disk_cache_read(c, 0, buf, 0, 16));
    ggfs_disk_cache_write(c, 1, g_file + BLOCK, BLOCK);
    ggfs_disk_cache_write(c, 3, g_file + 3 * BLOCK, 100);
    // A block of the wrong length is not kept.
    ggfs_disk_cache_write(c, 2, g_file + 2 * BLOCK, BLOCK - 1);
    ggfs_disk_cache_write(c, 4, g_file, 1); // past the end
    EXPECT(ggfs_disk_cache_has(c, 1));
    EXPECT(ggfs_disk_cache_has(c, 3));
    EXPECT(!ggfs_disk_cache_has(c, 2));
    EXPECT(!ggfs_disk_cache_has(c, 4));
    EXPECT(!ggfs_disk_cache_has(c, 0));
    EXPECT_EQ(ggfs_disk_cache_bytes(c), BLOCK + 100);
    // Written again: counted once.
    ggfs_disk_cache_write(c, 1, g_file + BLOCK, BLOCK);
    EXPECT_EQ(ggfs_disk_cache_bytes(c), BLOCK + 100);

    EXPECT(ggfs_disk_cache_read(c, 1, buf, 100, 1000));
    EXPECT(memcmp(buf, g_file + BLOCK + 100, 1000) == 0);
    EXPECT(ggfs_disk_cache_read(c, 3, buf, 0, 100));
    EXPECT(memcmp(buf, g_file + 3 * BLOCK, 100) == 0);
    EXPECT(!ggfs_disk_cache_read(c, 3, buf, 50, 51)); // past the block
    EXPECT(!ggfs_disk_cache_read(c, 1, buf, BLOCK + 1, 0));
    size_t len = 0;
    const uint8_t *map = ggfs_disk_cache_map(c, 3, &len);
    EXPECT(map);
    EXPECT_EQ(len, 100);
    EXPECT(memcmp(map, g_file + 3 * BLOCK, 100) == 0);
    ggfs_disk_cache_unmap(map, len);
    EXPECT(!ggfs_disk_cache_map(c, 0, &len));
    ggfs_disk_cache_advise(c, 1); // nothing to see; must not fail
    ggfs_disk_cache_advise(c, 0);
    ggfs_disk_cache_close(c);

    // The key file and the two blocks, no temporary.
    char dir[4200];
    EXPECT(key_dir(root, dir, sizeof dir));
    EXPECT_EQ(tmptree_count(dir), 3);
    char key[256], path[4300];
    snprintf(path, sizeof path, "%s/key", dir);
    FILE *f = fopen(path, "r");
    EXPECT(f);
    const size_t n = fread(key, 1, sizeof key - 1, f);
    fclose(f);
    key[n] = '\0';
    char want[256];
    snprintf(want, sizeof want, "%s\n%s\n%d\n", URL, "\"etag-1\"", SIZE);
    EXPECT_STR(key, want);
    tmptree_free(root);
    return 1;
}

static int test_next_open_finds_the_blocks_of_the_same_file_only(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    ggfs_disk_cache *c = open_cache(root, "v1");
    EXPECT(c);
    ggfs_disk_cache_write(c, 0, g_file, BLOCK);
    ggfs_disk_cache_write(c, 3, g_file + 3 * BLOCK, 100);
    ggfs_disk_cache_close(c);
    char dir[4200];
    EXPECT(key_dir(root, dir, sizeof dir));

    c = open_cache(root, "v1");
    EXPECT(c);
    EXPECT_EQ(ggfs_disk_cache_bytes(c), BLOCK + 100); // found at open
    EXPECT(ggfs_disk_cache_has(c, 0) && ggfs_disk_cache_has(c, 3));
    ggfs_disk_cache_close(c);

    // A block file cut short (a copy gone wrong) is no block.
    char path[4300];
    snprintf(path, sizeof path, "%s/00000000", dir);
    EXPECT_EQ(truncate(path, BLOCK / 2), 0);
    // A block another daemon sharing the directory writes later.
    c = open_cache(root, "v1");
    EXPECT(c);
    EXPECT_EQ(ggfs_disk_cache_bytes(c), 100);
    EXPECT(!ggfs_disk_cache_has(c, 0));
    uint8_t buf[16];
    EXPECT(!ggfs_disk_cache_read(c, 0, buf, 0, 16));
    snprintf(path, sizeof path, "%s/00000001", dir);
    FILE *f = fopen(path, "wb");
    EXPECT(f);
    EXPECT_EQ(fwrite(g_file + BLOCK, 1, BLOCK, f), BLOCK);
    fclose(f);
    EXPECT(ggfs_disk_cache_has(c, 1));
    EXPECT_EQ(ggfs_disk_cache_bytes(c), BLOCK + 100);
    ggfs_disk_cache_close(c);

    // Another version of the file has blocks of its own.
    c = open_cache(root, "v2");
    EXPECT(c);
    EXPECT_EQ(ggfs_disk_cache_bytes(c), 0);
    EXPECT(!ggfs_disk_cache_has(c, 3));
    ggfs_disk_cache_close(c);
    tmptree_free(root);
    return 1;
}

static int test_directory_of_another_file_is_refused(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    ggfs_disk_cache *c = open_cache(root, "v1");
    EXPECT(c);
    ggfs_disk_cache_close(c);
    char dir[4200];
    EXPECT(key_dir(root, dir, sizeof dir));
    char path[4300];
    snprintf(path, sizeof path, "%s/key", dir);
    FILE *f = fopen(path, "w");
    EXPECT(f);
    fputs("http://example.org/other.gguf\nv1\n12\n", f); // a hash collision
    fclose(f);
    char why[256] = "";
    EXPECT(!ggfs_disk_cache_open(root, URL, "v1", SIZE, BLOCK, why, sizeof why));
    EXPECT(strstr(why, "holds another file's blocks"));
    EXPECT(strstr(why, dir));
    // A root that cannot be a directory.
    EXPECT(tmptree_text(root, "file", "x"));
    snprintf(path, sizeof path, "%s/file/cache", root);
    EXPECT(!ggfs_disk_cache_open(path, URL, "v1", SIZE, BLOCK, why, sizeof why));
    EXPECT(strstr(why, "cannot make"));
    tmptree_free(root);
    return 1;
}

/* A file too large to track is refused whole (the mount reads it without
 * the disk cache), never a bitmap that wraps or a calloc of terabytes. */
static int test_a_file_past_the_block_bound_is_not_kept(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    char why[256] = "";
    const uint64_t sizes[] = {UINT64_C(1) << 62, UINT64_MAX, (uint64_t)BLOCK * GGFS_DISK_CACHE_BLOCKS_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        why[0] = '\0';
        EXPECT(!ggfs_disk_cache_open(root, URL, "v1", sizes[i], BLOCK, why, sizeof why));
        EXPECT(strstr(why, "blocks it keeps"));
    }
    ggfs_disk_cache *c = ggfs_disk_cache_open(root, URL, "v1", (uint64_t)BLOCK * (GGFS_DISK_CACHE_BLOCKS_MAX - 1),
                                              BLOCK, why, sizeof why);
    EXPECT(c);
    ggfs_disk_cache_close(c);
    tmptree_free(root);
    return 1;
}

int main(void)
{
    for (size_t i = 0; i < SIZE; i++)
        g_file[i] = (uint8_t)(i * 31 + i / 256);
    int ok = test_blocks_are_written_whole_and_read_back();
    ok &= test_next_open_finds_the_blocks_of_the_same_file_only();
    ok &= test_directory_of_another_file_is_refused();
    ok &= test_a_file_past_the_block_bound_is_not_kept();
    printf("disk cache: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

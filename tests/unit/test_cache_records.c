/*
 * Kept records (fs/source/cache_records.c), in a fresh directory: a
 * record written and read back, replaced, empty; missing ones (no
 * directory, another name, another kind, another name's file at the
 * hashed place); kinds and names refused, names that look like paths
 * kept inside the records' directory; the bounds; every cut and every
 * changed byte of a record file never read as the record; a symlink in a
 * record's place; and two writer processes replacing one record while
 * four threads read it: every read whole, none missing once one was
 * found, no temporary left.
 */
#include "tmptree.h" // first: it asks for _GNU_SOURCE

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "source/cache_records.h"

#define NAME "http://example.org/m.gguf"
#define KIND "url"

/* The path of the one file in root's records directory, into out. */
static bool only_record(const char *root, char *out, size_t cap)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/" GGFS_CACHE_RECORD_SUBDIR, root);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] != '.' && (size_t)snprintf(out, cap, "%s/%s", dir, e->d_name) < cap)
            n++;
    }
    closedir(d);
    return n == 1;
}

static ggfs_cache_record_status get(const char *root, const char *kind, const char *name, void **data, size_t *len,
                                    char *why, size_t why_size)
{
    return ggfs_cache_record_get(root, kind, name, data, len, why, why_size);
}

static int test_written_read_back_replaced_and_empty(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    char why[512] = "";
    void *data;
    size_t len;
    EXPECT(ggfs_cache_record_put(root, KIND, NAME, "{\"size\": 1}", 11, why, sizeof why));
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    EXPECT_EQ(len, 11);
    EXPECT(memcmp(data, "{\"size\": 1}", 12) == 0); // and the NUL after
    free(data);
    EXPECT(ggfs_cache_record_put(root, KIND, NAME, "two", 3, why, sizeof why));
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    EXPECT_EQ(len, 3);
    EXPECT_STR((char *)data, "two");
    free(data);
    EXPECT(ggfs_cache_record_put(root, KIND, NAME, "", 0, why, sizeof why));
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    EXPECT_EQ(len, 0);
    EXPECT_STR((char *)data, "");
    free(data);
    // One file, no temporary beside it.
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/" GGFS_CACHE_RECORD_SUBDIR, root);
    EXPECT_EQ(tmptree_count(dir), 1);
    tmptree_free(root);
    return 1;
}

static int test_missing(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    char why[512] = "", path[4200];
    void *data = (void *)1;
    size_t len = 1;
    // No directory at all: nothing was kept.
    snprintf(path, sizeof path, "%s/none", root);
    EXPECT_EQ(get(path, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_MISSING);
    EXPECT(data == NULL && len == 0);
    EXPECT(ggfs_cache_record_put(root, KIND, NAME, "x", 1, why, sizeof why));
    EXPECT_EQ(get(root, KIND, NAME "?", &data, &len, why, sizeof why), GGFS_CACHE_RECORD_MISSING);
    EXPECT_EQ(get(root, "hf-commit", NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_MISSING);
    // Another name's record at this name's place (as if the two hashed
    // alike) reads as missing, never as this name's.
    char file[4200], other[4200];
    EXPECT(only_record(root, file, sizeof file));
    EXPECT(remove(file) == 0);
    EXPECT(ggfs_cache_record_put(root, KIND, "other", "y", 1, why, sizeof why));
    EXPECT(only_record(root, other, sizeof other));
    EXPECT(rename(other, file) == 0);
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_MISSING);
    EXPECT(data == NULL);
    tmptree_free(root);
    return 1;
}

static int test_kinds_and_names(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    char why[512] = "";
    void *data;
    size_t len;
    static const char *const bad_kinds[] = {"", "URL", "a/b", "../x", "a.b", "123456789012345678901234567890123"};
    for (size_t i = 0; i < sizeof bad_kinds / sizeof *bad_kinds; i++) {
        why[0] = '\0';
        EXPECT(!ggfs_cache_record_put(root, bad_kinds[i], NAME, "x", 1, why, sizeof why));
        EXPECT(strstr(why, "record kind"));
        EXPECT_EQ(get(root, bad_kinds[i], NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_BAD);
    }
    EXPECT(ggfs_cache_record_put(root, "12345678901234567890123456789012", NAME, "x", 1, why, sizeof why));
    // Names are any bytes: each is one file inside the records' directory.
    static const char *const names[] = {"../../escape", "/etc/passwd", "a/b/c", "..", ".", "line\nbreak",
                                        "hf://ORG/REPO@refs/pr/1"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        EXPECT(ggfs_cache_record_put(root, KIND, names[i], names[i], strlen(names[i]), why, sizeof why));
        EXPECT_EQ(get(root, KIND, names[i], &data, &len, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
        EXPECT_STR((char *)data, names[i]);
        free(data);
    }
    EXPECT_EQ(tmptree_count(root), 1); // gguf-fs-records alone
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/" GGFS_CACHE_RECORD_SUBDIR, root);
    EXPECT_EQ(tmptree_count(dir), 1 + sizeof names / sizeof *names);
    // The bounds: an empty name, a name and data one byte over.
    EXPECT(!ggfs_cache_record_put(root, KIND, "", "x", 1, why, sizeof why));
    char *long_name = malloc(GGFS_CACHE_RECORD_NAME_MAX + 2);
    EXPECT(long_name);
    memset(long_name, 'n', GGFS_CACHE_RECORD_NAME_MAX + 1);
    long_name[GGFS_CACHE_RECORD_NAME_MAX + 1] = '\0';
    EXPECT(!ggfs_cache_record_put(root, KIND, long_name, "x", 1, why, sizeof why));
    EXPECT(strstr(why, "name is 1 to 4096 bytes"));
    long_name[GGFS_CACHE_RECORD_NAME_MAX] = '\0';
    EXPECT(ggfs_cache_record_put(root, KIND, long_name, "x", 1, why, sizeof why));
    free(long_name);
    char *big = calloc(1, (size_t)GGFS_CACHE_RECORD_DATA_MAX + 1);
    EXPECT(big);
    EXPECT(!ggfs_cache_record_put(root, KIND, NAME, big, (size_t)GGFS_CACHE_RECORD_DATA_MAX + 1, why, sizeof why));
    EXPECT(strstr(why, "over the"));
    EXPECT(ggfs_cache_record_put(root, KIND, NAME, big, GGFS_CACHE_RECORD_DATA_MAX, why, sizeof why));
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    EXPECT_EQ(len, GGFS_CACHE_RECORD_DATA_MAX);
    free(data);
    free(big);
    tmptree_free(root);
    return 1;
}

/* Writes len bytes to path, replacing it. */
static bool write_bytes(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    const bool ok = fwrite(bytes, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

static int test_cut_or_changed_never_reads_as_the_record(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    char why[512] = "", file[4200];
    void *data;
    size_t len;
    static const char record[] = "{\"url\": \"http://example.org/m.gguf\", \"size\": 7}";
    EXPECT(ggfs_cache_record_put(root, KIND, NAME, record, sizeof record - 1, why, sizeof why));
    EXPECT(only_record(root, file, sizeof file));
    uint8_t good[512];
    FILE *f = fopen(file, "rb");
    EXPECT(f);
    const size_t size = fread(good, 1, sizeof good, f);
    fclose(f);
    EXPECT_EQ(size, 33 + strlen(NAME) + sizeof record - 1);
    for (size_t cut = 0; cut < size; cut++) {
        EXPECT(write_bytes(file, good, cut));
        why[0] = '\0';
        EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_BAD);
        EXPECT(strstr(why, GGFS_CACHE_RECORD_SUBDIR "/url-") && strstr(why, ": offset "));
    }
    // One bit changed anywhere: bad, or (in the name) another name's.
    for (size_t i = 0; i < size; i++) {
        uint8_t changed[512];
        memcpy(changed, good, size);
        changed[i] ^= 0x20;
        EXPECT(write_bytes(file, changed, size));
        const ggfs_cache_record_status st = get(root, KIND, NAME, &data, &len, why, sizeof why);
        const bool in_name = i >= 33 && i < 33 + strlen(NAME);
        EXPECT_EQ(st, in_name ? GGFS_CACHE_RECORD_MISSING : GGFS_CACHE_RECORD_BAD);
    }
    EXPECT(write_bytes(file, good, size));
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    free(data);
    // The offsets told: a length past the end, the checksum.
    uint8_t changed[512];
    memcpy(changed, good, size);
    changed[17] = 0xff;
    EXPECT(write_bytes(file, changed, size));
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_BAD);
    EXPECT(strstr(why, ": offset 17: name length past the end of the file"));
    memcpy(changed, good, size);
    changed[size - 1] ^= 1;
    EXPECT(write_bytes(file, changed, size));
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_BAD);
    EXPECT(strstr(why, ": offset 25: checksum does not match the name and data"));
    // A symlink in the record's place is not followed.
    char target[4200];
    snprintf(target, sizeof target, "%s/elsewhere", root);
    EXPECT(write_bytes(target, good, size));
    EXPECT(remove(file) == 0);
    EXPECT(symlink(target, file) == 0);
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_BAD);
    // Blamed data: the file's offset of a byte of the data.
    ggfs_cache_record_blame(KIND, NAME, 5, "no size", why, sizeof why);
    char want[128];
    snprintf(want, sizeof want, ": offset %zu: no size", 33 + strlen(NAME) + 5);
    EXPECT(strstr(why, GGFS_CACHE_RECORD_SUBDIR "/url-") && strstr(why, want));
    tmptree_free(root);
    return 1;
}

/* ==== Two writers, four readers ==== */

#define ROUNDS 300
#define READERS 4

/* Record r of writer w: its length and every byte follow from (w, r), and
 * the first eight bytes say which it is. */
static size_t make_record(uint8_t *buf, unsigned w, unsigned r)
{
    const size_t len = 8 + (size_t)((w * 7919 + r * 104729) % 200000);
    const uint32_t id[2] = {w, r};
    memcpy(buf, id, sizeof id);
    for (size_t i = 8; i < len; i++)
        buf[i] = (uint8_t)(i * 131 + w * 17 + r);
    return len;
}

typedef struct reader_state {
    const char *root;
    atomic_bool *stop;
    bool ok;
    unsigned found;
} reader_state;

static void *reader(void *arg)
{
    reader_state *st = arg;
    uint8_t *want = malloc(200008);
    bool seen = false;
    st->ok = want != NULL;
    while (st->ok && !atomic_load(st->stop)) {
        void *data;
        size_t len;
        char why[512];
        const ggfs_cache_record_status s = get(st->root, KIND, NAME, &data, &len, why, sizeof why);
        if (s == GGFS_CACHE_RECORD_MISSING) {
            st->ok = !seen; // once there, a record is replaced, never gone
            continue;
        }
        if (s != GGFS_CACHE_RECORD_FOUND || len < 8) {
            fprintf(stderr, "reader: status %d: %s\n", (int)s, s == GGFS_CACHE_RECORD_BAD ? why : "");
            st->ok = false;
            break;
        }
        seen = true;
        uint32_t id[2];
        memcpy(id, data, sizeof id);
        const size_t want_len = make_record(want, id[0], id[1]);
        st->ok = want_len == len && memcmp(want, data, len) == 0;
        st->found++;
        free(data);
    }
    free(want);
    return NULL;
}

static int test_two_writers_four_readers(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    pid_t writers[2];
    for (unsigned w = 0; w < 2; w++) {
        writers[w] = fork();
        EXPECT(writers[w] >= 0);
        if (writers[w] == 0) {
            uint8_t *buf = malloc(200008);
            char why[512];
            bool ok = buf != NULL;
            for (unsigned r = 0; ok && r < ROUNDS; r++)
                ok = ggfs_cache_record_put(root, KIND, NAME, buf, make_record(buf, w, r), why, sizeof why);
            if (!ok)
                fprintf(stderr, "writer %u: %s\n", w, why);
            _exit(ok ? 0 : 1);
        }
    }
    atomic_bool stop;
    atomic_init(&stop, false);
    pthread_t threads[READERS];
    reader_state states[READERS];
    for (int i = 0; i < READERS; i++) {
        states[i] = (reader_state){root, &stop, true, 0};
        EXPECT(pthread_create(&threads[i], NULL, reader, &states[i]) == 0);
    }
    int ok = 1;
    for (unsigned w = 0; w < 2; w++) {
        int status;
        ok &= waitpid(writers[w], &status, 0) == writers[w] && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    atomic_store(&stop, true);
    unsigned found = 0;
    for (int i = 0; i < READERS; i++) {
        pthread_join(threads[i], NULL);
        ok &= states[i].ok;
        found += states[i].found;
    }
    EXPECT(ok);
    EXPECT(found > 0);
    // The last writer's record, whole; no temporary left.
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/" GGFS_CACHE_RECORD_SUBDIR, root);
    EXPECT_EQ(tmptree_count(dir), 1);
    void *data;
    size_t len;
    char why[512];
    EXPECT_EQ(get(root, KIND, NAME, &data, &len, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    uint32_t id[2];
    memcpy(id, data, sizeof id);
    EXPECT_EQ(id[1], ROUNDS - 1);
    free(data);
    tmptree_free(root);
    return 1;
}

int main(void)
{
    int ok = test_written_read_back_replaced_and_empty();
    ok &= test_missing();
    ok &= test_kinds_and_names();
    ok &= test_cut_or_changed_never_reads_as_the_record();
    ok &= test_two_writers_four_readers();
    printf("cache records: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

/*
 * The SIGBUS guard: a model cut short under its mapping makes a guarded
 * f32 read fail with cut_short set, and the process goes on; a SIGBUS
 * outside a guarded read still ends the process.
 */
#define _GNU_SOURCE // mkstemp

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "model/guard.h"

#define ELEMENTS 65536 // 256 KiB of f32 data: 64 pages to fault on
#define ALIGNMENT 32

static void put(FILE *out, const void *bytes, size_t n)
{
    fwrite(bytes, 1, n, out);
}

/* Writes a GGUF v3 file with one f32 tensor "w" of ELEMENTS values i * 0.5,
 * and returns the data section's offset. */
static long write_model(const char *path)
{
    FILE *out = fopen(path, "wb");
    if (!out)
        return -1;
    const uint32_t version = 3, n_dims = 1, type_f32 = 0;
    const uint64_t n_tensors = 1, n_kv = 0, name_len = 1, ne = ELEMENTS, offset = 0;
    put(out, "GGUF", 4);
    put(out, &version, 4);
    put(out, &n_tensors, 8);
    put(out, &n_kv, 8);
    put(out, &name_len, 8);
    put(out, "w", 1);
    put(out, &n_dims, 4);
    put(out, &ne, 8);
    put(out, &type_f32, 4);
    put(out, &offset, 8);
    const long data_at = (ftell(out) + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    while (ftell(out) < data_at)
        fputc(0, out);
    for (uint32_t i = 0; i < ELEMENTS; i++) {
        const float v = (float)i * 0.5f;
        put(out, &v, 4);
    }
    return fclose(out) == 0 ? data_at : -1;
}

static int test_cut_model_fails_the_read_and_the_process_goes_on(const char *path, long data_at)
{
    ggp_error err;
    ggp_file *f = ggp_open(path, &err);
    EXPECT(f);
    const ggp_tensor *t = ggp_tensor_at(f, 0);
    static float got[ELEMENTS];
    bool cut_short = true;
    EXPECT_EQ(ggfs_guarded_read_f32(f, t, 0, ELEMENTS, got, &cut_short), GGP_OK);
    EXPECT(!cut_short);
    EXPECT(got[ELEMENTS - 1] == (float)(ELEMENTS - 1) * 0.5f);

    // Cut the file inside the data: the mapping's pages past the new end
    // are gone, and touching them raises SIGBUS.
    EXPECT(truncate(path, data_at + 4096) == 0);
    EXPECT_EQ(ggfs_guarded_read_f32(f, t, 0, ELEMENTS, got, &cut_short), GGP_ERR_IO);
    EXPECT(cut_short);
    // The pages still in the file read as before, and again after a fault.
    EXPECT_EQ(ggfs_guarded_read_f32(f, t, 0, 1024, got, &cut_short), GGP_OK);
    EXPECT(!cut_short);
    EXPECT(got[1023] == 1023 * 0.5f);
    EXPECT_EQ(ggfs_guarded_read_f32(f, t, 2048, 1, got, &cut_short), GGP_ERR_IO);
    EXPECT(cut_short);
    ggp_close(f);
    return 1;
}

static int test_sigbus_outside_a_guarded_read_ends_the_process(const char *path)
{
    ggp_error err;
    ggp_file *f = ggp_open(path, &err);
    EXPECT(f);
    const ggp_tensor *t = ggp_tensor_at(f, 0);
    const volatile uint8_t *data = ggp_file_bytes(f) + t->offset;
    EXPECT(truncate(path, 0) == 0);
    const pid_t child = fork();
    EXPECT(child >= 0);
    if (child == 0) {
        (void)data[8192];
        _exit(0);
    }
    int status = 0;
    EXPECT(waitpid(child, &status, 0) == child);
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
    ggp_close(f);
    return 1;
}

int main(void)
{
    char path[] = "/tmp/test_guard.XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0 || close(fd) != 0) {
        perror("mkstemp");
        return 1;
    }
    int ok = ggfs_guard_install();
    const long data_at = write_model(path);
    ok &= data_at > 0;
    ok = ok && test_cut_model_fails_the_read_and_the_process_goes_on(path, data_at);
    ok = ok && write_model(path) == data_at;
    ok = ok && test_sigbus_outside_a_guarded_read_ends_the_process(path);
    unlink(path);
    return ok ? 0 : 1;
}

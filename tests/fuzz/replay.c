/*
 * Runs the fuzz target over files, for builds without libFuzzer: each file
 * is read into an exact-size heap buffer, so the sanitizers see any read
 * past its end.
 *
 *   usage: fuzz_replay FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp) {
            perror(argv[i]);
            return 1;
        }
        fseek(fp, 0, SEEK_END);
        const long size = ftell(fp);
        rewind(fp);
        uint8_t *bytes = malloc(size > 0 ? (size_t)size : 1);
        if (!bytes || fread(bytes, 1, (size_t)size, fp) != (size_t)size) {
            fprintf(stderr, "%s: cannot read\n", argv[i]);
            return 1;
        }
        fclose(fp);
        LLVMFuzzerTestOneInput(bytes, (size_t)size);
        free(bytes);
    }
    printf("%d inputs replayed\n", argc - 1);
    return 0;
}

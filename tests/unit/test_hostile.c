/*
 * Opens every file of the hostile corpus (tests/hostile/make_hostile.py)
 * and checks the verdict its manifest gives: refused at the named offset
 * with the named phrase, or opened with every value renderable and every
 * tensor readable. Each file is opened twice: from its path, and from an
 * exact-size heap copy so that the sanitizers catch any read past the end.
 *
 * usage: test_hostile CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"

/* Every value renders to exactly its announced size; every tensor with an
 * f32 view reads whole; the views for tools render. */
static int check_readable(const ggp_file *f)
{
    for (uint64_t i = 0; i < ggp_kv_count(f); i++) {
        const ggp_kv *kv = ggp_kv_at(f, i);
        ggp_counting_sink c;
        ggp_counting_sink_init(&c);
        ggp_render(f, &kv->value, &c.sink);
        EXPECT_EQ(c.total, ggp_render_size(f, &kv->value));
        EXPECT(ggp_kv_find(f, kv->key.ptr, (size_t)kv->key.len) == kv);
    }
    for (uint64_t i = 0; i < ggp_kv_repeat_count(f); i++) {
        const ggp_kv_repeat *r = ggp_kv_repeat_at(f, i);
        const ggp_kv *first = ggp_kv_find(f, r->kv.key.ptr, (size_t)r->kv.key.len);
        EXPECT(first != NULL && first->offset == r->first_offset && r->kv.offset > first->offset);
    }
    EXPECT_EQ(ggp_kv_count(f) + ggp_kv_repeat_count(f), ggp_kv_count_in_header(f));
    ggp_counting_sink views;
    ggp_counting_sink_init(&views);
    ggp_render_metadata_json(f, &views.sink);
    EXPECT(ggp_render_warnings(f, &views.sink));
    EXPECT(views.total > 0);
    for (uint64_t i = 0; i < ggp_tensor_count(f); i++) {
        const ggp_tensor *t = ggp_tensor_at(f, i);
        EXPECT(ggp_tensor_find(f, t->name.ptr, (size_t)t->name.len) != NULL);
        if (ggp_tensor_f32_unavailable(f, t))
            continue;
        float *out = malloc((size_t)t->elements * sizeof(float) + 1);
        EXPECT(out != NULL);
        const ggp_err e = ggp_tensor_read_f32(f, t, 0, t->elements, out);
        ggp_stats s;
        ggp_stats_init(&s);
        ggp_stats_add(&s, out, (size_t)t->elements);
        free(out);
        EXPECT_EQ(e, GGP_OK);
        EXPECT_EQ(s.count, t->elements);
        ggp_counting_sink c;
        ggp_counting_sink_init(&c);
        ggp_stats_render(&s, t->elements, &c.sink);
        EXPECT_EQ(c.total, ggp_stats_text_size(t->elements));
    }
    return 1;
}

static int check_verdict(const char *path, const ggp_file *f, const ggp_error *err,
                         const char *verdict, const char *offset, const char *phrase, uint64_t size)
{
    if (strcmp(verdict, "accept") == 0) {
        if (!f)
            fprintf(stderr, "%s: refused at %llu: %s\n", path, (unsigned long long)err->offset, err->msg);
        EXPECT(f != NULL);
        return check_readable(f);
    }
    if (f)
        fprintf(stderr, "%s: opened, expected a refusal\n", path);
    EXPECT(f == NULL);
    EXPECT(err->code != GGP_OK);
    EXPECT(err->msg[0] != '\0');
    if (strncmp(offset, "max:", 4) == 0) {
        EXPECT(err->offset <= strtoull(offset + 4, NULL, 10));
    } else {
        if (err->offset != strtoull(offset, NULL, 10))
            fprintf(stderr, "%s: %s\n", path, err->msg);
        EXPECT_EQ(err->offset, strtoull(offset, NULL, 10));
    }
    if (strcmp(phrase, "-") != 0) {
        if (!strstr(err->msg, phrase))
            fprintf(stderr, "%s: message \"%s\" lacks \"%s\"\n", path, err->msg, phrase);
        EXPECT(strstr(err->msg, phrase) != NULL);
    }
    EXPECT(err->offset <= size);
    return 1;
}

static int test_case(const char *dir, const char *file, const char *verdict, const char *offset,
                     const char *phrase)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *fp = fopen(path, "rb");
    EXPECT(fp != NULL);
    fseek(fp, 0, SEEK_END);
    const long size = ftell(fp);
    rewind(fp);
    // An exact-size copy: one byte past it is outside the allocation.
    unsigned char *bytes = malloc(size ? (size_t)size : 1);
    EXPECT(bytes != NULL);
    EXPECT(fread(bytes, 1, (size_t)size, fp) == (size_t)size);
    fclose(fp);

    int ok = 1;
    ggp_error err;
    ggp_file *f = ggp_open(path, &err);
    ok &= check_verdict(path, f, &err, verdict, offset, phrase, (uint64_t)size);
    ggp_close(f);
    f = ggp_open_mem(bytes, (size_t)size, &err);
    ok &= check_verdict(path, f, &err, verdict, offset, phrase, (uint64_t)size);
    ggp_close(f);
    free(bytes);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    char manifest[4096];
    snprintf(manifest, sizeof manifest, "%s/manifest.tsv", argv[1]);
    FILE *m = fopen(manifest, "r");
    if (!m) {
        perror(manifest);
        return 1;
    }
    char line[1024];
    int ok = 1, cases = 0;
    while (fgets(line, sizeof line, m)) {
        line[strcspn(line, "\n")] = '\0';
        char *save = NULL;
        const char *file = strtok_r(line, "\t", &save);
        const char *verdict = strtok_r(NULL, "\t", &save);
        const char *offset = strtok_r(NULL, "\t", &save);
        const char *phrase = strtok_r(NULL, "\t", &save);
        if (!file || !verdict || !offset || !phrase) {
            fprintf(stderr, "%s: malformed line\n", manifest);
            ok = 0;
            continue;
        }
        ok &= test_case(argv[1], file, verdict, offset, phrase);
        cases++;
    }
    fclose(m);
    printf("%d hostile files checked\n", cases);
    return ok && cases > 0 ? 0 : 1;
}

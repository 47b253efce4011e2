/*
 * Opening a GGUF file: one read-only mapping (or the caller's bytes, or the
 * first bytes of a file not all in memory), then a single validating pass
 * over the header, metadata and tensor descriptors that builds the index of
 * views. After an open succeeds no accessor can fail on the format.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ggp_i.h"

/* ==== Name indexes ==== */

static bool index_init(ggp_name_index *ix, uint64_t n)
{
    uint64_t cap = 16;
    while (cap < n * 2)
        cap *= 2;
    ix->slots = calloc(cap, sizeof *ix->slots);
    ix->mask = cap - 1;
    return ix->slots != NULL;
}

/* The slot holding name, or the empty slot where it would go. */
static uint64_t *index_slot(const ggp_name_index *ix, const ggp_str *names, size_t stride,
                            const char *name, uint64_t len)
{
    uint64_t i = ggp_hash_bytes(name, len) & ix->mask;
    for (;;) {
        uint64_t *slot = &ix->slots[i];
        if (*slot == 0)
            return slot;
        const ggp_str *s = (const ggp_str *)((const char *)names + (*slot - 1) * stride);
        if (s->len == len && memcmp(s->ptr, name, len) == 0)
            return slot;
        i = (i + 1) & ix->mask;
    }
}

/* Checks that count entries of at least min_size bytes each fit in what
 * remains (so a lying count is refused before anything is allocated for
 * it), then allocates the entries and their name index. NULL on failure,
 * with r->err filled. */
static void *alloc_entries(ggp_reader *r, uint64_t count, uint64_t min_size, size_t entry_size,
                           ggp_name_index *ix, const char *what, uint64_t count_offset)
{
    if (count > ggp_remaining(r) / min_size) {
        ggp_fail(r->err, GGP_ERR_TRUNCATED, count_offset,
                 "%s %llu cannot fit in the %llu bytes that remain", what,
                 (unsigned long long)count, (unsigned long long)ggp_remaining(r));
        return NULL;
    }
    void *entries = calloc(count ? count : 1, entry_size);
    if (!entries || !index_init(ix, count)) {
        free(entries);
        ggp_fail(r->err, GGP_ERR_NOMEM, count_offset, "no memory for %s %llu", what,
                 (unsigned long long)count);
        return NULL;
    }
    return entries;
}

/* ==== Header ==== */

static bool parse_magic(ggp_file *f, ggp_reader *r, ggp_error *err)
{
    if (f->size < 4)
        return ggp_fail(err, GGP_ERR_TRUNCATED, 0, "file is %llu bytes, too short for the magic",
                        (unsigned long long)f->size);
    if (!ggp_in_memory(r, 4))
        return false;
    if (memcmp(f->base, "GGUF", 4) == 0) {
        f->big_endian = false;
    } else if (memcmp(f->base, "FUGG", 4) == 0) {
        f->big_endian = true;
    } else {
        return ggp_fail(err, GGP_ERR_MAGIC, 0,
                        "magic is %02x %02x %02x %02x, not \"GGUF\"",
                        f->base[0], f->base[1], f->base[2], f->base[3]);
    }
    r->pos = 4;
    r->big_endian = f->big_endian;
    uint32_t version;
    if (!ggp_read_u32(r, &version, "version"))
        return false;
    // Older big-endian writers kept the magic bytes and swapped only the
    // version, so a "GGUF" whose version reads right swapped is big-endian.
    const uint32_t swapped = __builtin_bswap32(version);
    if (!f->big_endian && (version < 1 || version > 3) && swapped >= 1 && swapped <= 3) {
        f->big_endian = r->big_endian = true;
        version = swapped;
    }
    if (version < 1 || version > 3)
        return ggp_fail(err, GGP_ERR_VERSION, 4, "version is %u, not 1, 2 or 3", version);
    f->version = r->version = version;
    return true;
}

/* ==== Metadata ==== */

/* Checks a general.alignment value; the first occurrence of the key sets
 * the file's alignment, a repeat is checked but changes nothing. */
static bool check_alignment(ggp_file *f, const ggp_kv *kv, uint64_t type_offset, bool first,
                            ggp_error *err)
{
    if (kv->value.type != GGP_V_U32)
        return ggp_fail(err, GGP_ERR_ALIGNMENT, type_offset,
                        "key 'general.alignment' is %s, not u32", ggp_vtype_name(kv->value.type));
    const uint64_t a = ggp_value_u64(f, &kv->value);
    if (a == 0 || (a & (a - 1)) != 0)
        return ggp_fail(err, GGP_ERR_ALIGNMENT, kv->value.offset,
                        "general.alignment is %llu, not a power of two", (unsigned long long)a);
    if (first)
        f->alignment = (uint32_t)a;
    return true;
}

/* Keeps a repeated key aside, out of the list of keys. */
static bool add_repeat(ggp_file *f, const ggp_kv *kv, uint64_t first_offset, ggp_error *err)
{
    if (f->n_repeats == f->repeats_cap) {
        const uint64_t cap = f->repeats_cap ? f->repeats_cap * 2 : 4;
        ggp_kv_repeat *grown = realloc(f->repeats, cap * sizeof *grown);
        if (!grown)
            return ggp_fail(err, GGP_ERR_NOMEM, kv->offset, "no memory for repeated keys");
        f->repeats = grown;
        f->repeats_cap = cap;
    }
    f->repeats[f->n_repeats++] = (ggp_kv_repeat){*kv, first_offset};
    return true;
}

static bool parse_kvs(ggp_file *f, ggp_reader *r, uint64_t count_offset, ggp_error *err)
{
    // A key needs its length, a type and at least one byte of value.
    const uint64_t min_kv = (f->version == 1 ? 4 : 8) + 4 + 1;
    f->kvs = alloc_entries(r, f->n_kv_header, min_kv, sizeof *f->kvs, &f->kv_index, "kv_count",
                           count_offset);
    if (!f->kvs)
        return false;
    for (uint64_t i = 0; i < f->n_kv_header; i++) {
        // Each key is read into the next free slot; a repeat leaves it free.
        ggp_kv *kv = &f->kvs[f->n_kv];
        kv->offset = r->pos;
        if (!ggp_read_str(r, &kv->key, "key"))
            return false;
        if (kv->key.len == 0)
            return ggp_fail(err, GGP_ERR_KEY, kv->offset, "key %llu is empty",
                            (unsigned long long)i);
        uint64_t *slot = index_slot(&f->kv_index, &f->kvs[0].key, sizeof *kv, kv->key.ptr, kv->key.len);
        const bool first = *slot == 0;
        const uint64_t type_offset = r->pos;
        uint32_t type;
        if (!ggp_read_u32(r, &type, "value type") ||
            !ggp_read_value(r, type_offset, type, &kv->value, kv->key))
            return false;
        if (kv->key.len == 17 && memcmp(kv->key.ptr, "general.alignment", 17) == 0 &&
            !check_alignment(f, kv, type_offset, first, err))
            return false;
        // A repeated key is tolerated (llama.cpp's converters have written
        // such files): the first occurrence is the key, later ones are kept
        // aside for the warnings.
        if (first) {
            *slot = ++f->n_kv;
        } else if (!add_repeat(f, kv, f->kvs[*slot - 1].offset, err)) {
            return false;
        }
    }
    return true;
}

/* ==== Tensor descriptors ==== */

static bool parse_tensor(ggp_file *f, ggp_reader *r, uint64_t i, ggp_error *err)
{
    ggp_tensor *t = &f->tensors[i];
    t->info_offset = r->pos;
    if (!ggp_read_str(r, &t->name, "tensor name"))
        return false;
    if (t->name.len == 0)
        return ggp_fail(err, GGP_ERR_TENSOR, t->info_offset, "tensor %llu has an empty name",
                        (unsigned long long)i);
    // The name is quoted only for an error: most descriptors have none.
    char q[GGP_QUOTE_SIZE];
    uint64_t *slot = index_slot(&f->tensor_index, &f->tensors[0].name, sizeof *t, t->name.ptr, t->name.len);
    if (*slot != 0)
        return ggp_fail(err, GGP_ERR_TENSOR, t->info_offset,
                        "tensor '%s' appears twice (first at offset %llu)",
                        ggp_quote_name(t->name, q, sizeof q),
                        (unsigned long long)f->tensors[*slot - 1].info_offset);
    *slot = i + 1;

    const uint64_t dims_offset = r->pos;
    if (!ggp_read_u32(r, &t->n_dims, "tensor n_dims"))
        return false;
    if (t->n_dims > GGP_MAX_DIMS)
        return ggp_fail(err, GGP_ERR_TENSOR, dims_offset, "tensor '%s' has %u dimensions, more than %d",
                        ggp_quote_name(t->name, q, sizeof q), t->n_dims, GGP_MAX_DIMS);
    uint64_t elements = 1;
    for (int j = 0; j < GGP_MAX_DIMS; j++)
        t->ne[j] = 1;
    for (uint32_t j = 0; j < t->n_dims; j++) {
        const uint64_t at = r->pos;
        uint64_t ne;
        if (!ggp_read_count(r, &ne, "tensor dimension"))
            return false;
        if (ne > INT64_MAX)
            return ggp_fail(err, GGP_ERR_TENSOR, at, "tensor '%s': dimension %u is %llu, past int64",
                            ggp_quote_name(t->name, q, sizeof q), j, (unsigned long long)ne);
        if (ne != 0 && elements > INT64_MAX / ne)
            return ggp_fail(err, GGP_ERR_TENSOR, at, "tensor '%s': element count overflows int64 at dimension %u",
                            ggp_quote_name(t->name, q, sizeof q), j);
        elements *= ne;
        t->ne[j] = (int64_t)ne;
    }
    t->elements = elements;

    const uint64_t type_offset = r->pos;
    if (!ggp_read_u32(r, &t->type_id, "tensor type"))
        return false;
    if (ggp_type_is_removed(t->type_id))
        return ggp_fail(err, GGP_ERR_TENSOR, type_offset,
                        "tensor '%s': type %u was removed from ggml",
                        ggp_quote_name(t->name, q, sizeof q), t->type_id);
    t->type = ggp_type_lookup(t->type_id);
    if (t->type) {
        const uint64_t block = t->type->block_elems;
        if ((uint64_t)t->ne[0] % block != 0)
            return ggp_fail(err, GGP_ERR_TENSOR, dims_offset,
                            "tensor '%s': dimension 0 is %lld, not a multiple of the %s block size %llu",
                            ggp_quote_name(t->name, q, sizeof q), (long long)t->ne[0], t->type->name,
                            (unsigned long long)block);
        // ne[0] is a whole number of blocks, so every row is too. A row may
        // start with metadata (ik_llama.cpp's per-row scales); an empty
        // tensor has no rows and no bytes, as ggml_nbytes says.
        const uint64_t meta = t->type->row_meta_bytes;
        const uint64_t row_blocks = (uint64_t)t->ne[0] / block;
        const uint64_t rows = elements == 0 ? 0 : elements / (uint64_t)t->ne[0];
        if (row_blocks > (INT64_MAX - meta) / t->type->block_bytes ||
            (rows != 0 && row_blocks * t->type->block_bytes + meta > INT64_MAX / rows))
            return ggp_fail(err, GGP_ERR_TENSOR, dims_offset, "tensor '%s': byte size overflows int64",
                            ggp_quote_name(t->name, q, sizeof q));
        t->bytes = rows * (row_blocks * t->type->block_bytes + meta);
    }
    t->data_field_offset = r->pos;
    return ggp_read_u64(r, &t->offset, "tensor data offset");
}

static bool parse_tensors(ggp_file *f, ggp_reader *r, uint64_t count_offset, ggp_error *err)
{
    // A descriptor needs a name length, n_dims, a type and an offset.
    const uint64_t min_tensor = (f->version == 1 ? 4 : 8) + 4 + 4 + 8;
    f->tensors = alloc_entries(r, f->n_tensors, min_tensor, sizeof *f->tensors, &f->tensor_index,
                               "tensor_count", count_offset);
    if (!f->tensors)
        return false;
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        if (!parse_tensor(f, r, i, err))
            return false;
    }
    return true;
}

static bool place_tensor_data(ggp_file *f, ggp_error *err)
{
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        ggp_tensor *t = &f->tensors[i];
        char q[GGP_QUOTE_SIZE];
        if (t->offset % f->alignment != 0)
            return ggp_fail(err, GGP_ERR_DATA, t->data_field_offset,
                            "tensor '%s': offset %llu is not a multiple of the alignment %u",
                            ggp_quote_name(t->name, q, sizeof q), (unsigned long long)t->offset,
                            f->alignment);
        const uint64_t start = f->data_offset + t->offset;
        if (t->offset > f->size || start > f->size || t->bytes > f->size - start)
            return ggp_fail(err, GGP_ERR_DATA, t->data_field_offset,
                            "tensor '%s': data ends at %llu, past end of file (%llu)",
                            ggp_quote_name(t->name, q, sizeof q),
                            (unsigned long long)(t->offset > f->size ? t->offset : start + t->bytes),
                            (unsigned long long)f->size);
        t->offset = start;
        t->data = t->type && f->avail == f->size ? f->base + start : NULL;
    }
    return true;
}

static bool parse(ggp_file *f, ggp_error *err)
{
    ggp_reader r = {.base = f->base, .pos = 0, .end = f->size, .avail = f->avail, .err = err};
    if (!parse_magic(f, &r, err))
        return false;
    const uint64_t tensor_count_offset = r.pos;
    if (!ggp_read_count(&r, &f->n_tensors, "tensor_count"))
        return false;
    const uint64_t kv_count_offset = r.pos;
    if (!ggp_read_count(&r, &f->n_kv_header, "kv_count"))
        return false;
    f->alignment = GGP_DEFAULT_ALIGNMENT;
    if (!parse_kvs(f, &r, kv_count_offset, err) || !parse_tensors(f, &r, tensor_count_offset, err))
        return false;
    // As in ggml, the data section is padded to the alignment only when
    // there is data: a file without tensors has its data offset at the end
    // of the descriptors.
    f->header_end = r.pos;
    const uint64_t a = f->alignment;
    f->data_offset = f->n_tensors > 0 ? (r.pos + a - 1) / a * a : r.pos;
    return place_tensor_data(f, err);
}

/* ==== Lifecycle ==== */

static ggp_file *open_bytes(const uint8_t *base, uint64_t avail, uint64_t size, int fd,
                            ggp_error *err)
{
    ggp_file *f = calloc(1, sizeof *f);
    if (!f) {
        ggp_fail(err, GGP_ERR_NOMEM, 0, "no memory");
        return NULL;
    }
    f->base = base;
    f->size = size;
    f->avail = avail;
    f->fd = fd;
    ggp_file_set_simd(f, true);
    if (err)
        *err = (ggp_error){GGP_OK, 0, ""};
    if (!parse(f, err)) {
        f->fd = -1; // the caller still owns fd and mapping on failure
        ggp_close(f);
        return NULL;
    }
    return f;
}

ggp_file *ggp_open_mem(const void *bytes, size_t size, ggp_error *err)
{
    return open_bytes(size ? bytes : (const uint8_t *)"", size, size, -1, err);
}

ggp_file *ggp_open_prefix(const void *bytes, size_t avail, uint64_t file_size, ggp_error *err)
{
    if (avail > file_size) {
        ggp_fail(err, GGP_ERR_RANGE, file_size, "%llu bytes given of a file of %llu",
                 (unsigned long long)avail, (unsigned long long)file_size);
        return NULL;
    }
    return open_bytes(avail ? bytes : (const uint8_t *)"", avail, file_size, -1, err);
}

ggp_file *ggp_open(const char *path, ggp_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ggp_fail(err, GGP_ERR_IO, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    if (why) {
        ggp_fail(err, GGP_ERR_IO, 0, "cannot open: %s", why);
        close(fd);
        return NULL;
    }
    const uint64_t size = (uint64_t)st.st_size;
    const uint8_t *base = (const uint8_t *)"";
    if (size > 0) {
        void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
            ggp_fail(err, GGP_ERR_IO, 0, "cannot map %llu bytes: %s", (unsigned long long)size,
                     strerror(errno));
            close(fd);
            return NULL;
        }
        base = map;
    }
    ggp_file *f = open_bytes(base, size, size, fd, err);
    if (!f) {
        if (size > 0)
            munmap((void *)base, size);
        close(fd);
    }
    return f;
}

void ggp_close(ggp_file *f)
{
    if (!f)
        return;
    if (f->fd >= 0) {
        if (f->size > 0)
            munmap((void *)f->base, f->size);
        close(f->fd);
    }
    free(f->kvs);
    free(f->repeats);
    free(f->kv_index.slots);
    free(f->tensors);
    free(f->tensor_index.slots);
    free(f);
}

/* ==== Accessors ==== */

uint32_t ggp_version(const ggp_file *f) { return f->version; }
ggp_byte_order ggp_byte_order_of(const ggp_file *f) { return f->big_endian ? GGP_BIG : GGP_LITTLE; }
uint32_t ggp_alignment(const ggp_file *f) { return f->alignment; }
uint64_t ggp_data_offset(const ggp_file *f) { return f->data_offset; }
uint64_t ggp_file_size(const ggp_file *f) { return f->size; }
bool ggp_file_has_data(const ggp_file *f) { return f->avail == f->size || f->data_base; }

void ggp_file_attach_data(ggp_file *f, const void *whole_file)
{
    f->data_base = whole_file;
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        ggp_tensor *t = &f->tensors[i];
        t->data = t->type ? f->data_base + t->offset : NULL;
    }
}
uint64_t ggp_header_end(const ggp_file *f) { return f->header_end; }
const uint8_t *ggp_file_bytes(const ggp_file *f) { return f->base; }
int ggp_file_fd(const ggp_file *f) { return f->fd; }
uint64_t ggp_kv_count(const ggp_file *f) { return f->n_kv; }
uint64_t ggp_kv_count_in_header(const ggp_file *f) { return f->n_kv_header; }
uint64_t ggp_kv_repeat_count(const ggp_file *f) { return f->n_repeats; }
uint64_t ggp_tensor_count(const ggp_file *f) { return f->n_tensors; }

const ggp_kv *ggp_kv_at(const ggp_file *f, uint64_t index)
{
    return index < f->n_kv ? &f->kvs[index] : NULL;
}

const ggp_kv_repeat *ggp_kv_repeat_at(const ggp_file *f, uint64_t index)
{
    return index < f->n_repeats ? &f->repeats[index] : NULL;
}

const ggp_tensor *ggp_tensor_at(const ggp_file *f, uint64_t index)
{
    return index < f->n_tensors ? &f->tensors[index] : NULL;
}

const ggp_kv *ggp_kv_find(const ggp_file *f, const char *key, size_t len)
{
    const uint64_t *slot = index_slot(&f->kv_index, &f->kvs[0].key, sizeof *f->kvs, key, len);
    return *slot ? &f->kvs[*slot - 1] : NULL;
}

const ggp_tensor *ggp_tensor_find(const ggp_file *f, const char *name, size_t len)
{
    const uint64_t *slot = index_slot(&f->tensor_index, &f->tensors[0].name, sizeof *f->tensors, name, len);
    return *slot ? &f->tensors[*slot - 1] : NULL;
}

/*
 * ggp: a read-only GGUF parser, validator and dequantizer.
 *
 * A GGUF file is, in the file's byte order:
 *
 *   magic "GGUF" (or "FUGG" big-endian)   4 bytes
 *   version                               u32 (1, 2 or 3)
 *   tensor_count, kv_count                u64 each (u32 in version 1)
 *   kv_count × { key: string, type: u32, value }
 *   tensor_count × { name: string, n_dims: u32, ne[n_dims]: u64 (u32 in v1),
 *                    type: u32, offset: u64 }
 *   padding to the alignment (general.alignment, default 32)
 *   tensor data, each tensor at data_offset + offset
 *
 * where a string is { len: u64 (u32 in v1), bytes } and an array value is
 * { elem_type: u32, count: u64 (u32 in v1), elements }.
 *
 * ggp_open() maps the file once and validates all of it; afterwards every
 * view (names, strings, arrays, tensor bytes) is a borrowed pointer into the
 * mapping, valid until ggp_close(). Nothing from the file is copied.
 */
#ifndef GGP_H
#define GGP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GGP_MAX_DIMS 4
#define GGP_MAX_ARRAY_DEPTH 8   // arrays of arrays nest at most this deep
#define GGP_DEFAULT_ALIGNMENT 32

typedef enum ggp_err {
    GGP_OK = 0,
    GGP_ERR_IO,          // open/stat/mmap failed; msg has strerror
    GGP_ERR_NOMEM,       // an allocation for the index failed
    GGP_ERR_MAGIC,       // not "GGUF" / "FUGG"
    GGP_ERR_VERSION,     // version not 1, 2 or 3
    GGP_ERR_TRUNCATED,   // a count, length or field runs past the end
    GGP_ERR_KEY,         // empty key
    GGP_ERR_VALUE_TYPE,  // value or array element type outside 0..12
    GGP_ERR_BOOL,        // a bool byte other than 0 or 1
    GGP_ERR_NESTING,     // arrays nested deeper than GGP_MAX_ARRAY_DEPTH
    GGP_ERR_ALIGNMENT,   // general.alignment not a u32 power of two
    GGP_ERR_TENSOR,      // bad tensor name, dims, type or size
    GGP_ERR_DATA,        // tensor data misaligned or outside the file
    GGP_ERR_RANGE,       // a request (not the file) is out of range
    GGP_ERR_UNSUPPORTED, // the operation has no meaning for this tensor
    GGP_ERR_NEED_MORE,   // ggp_open_prefix: the header goes on past the
                         // bytes given; offset is how many it needs at least
    GGP_ERR_TEXT,        // ggp_parse_text: the text is no value of the type,
                         // or does not fit it; offset is in the text
    GGP_ERR_TOO_BIG,     // ggp_parse_text: the encoding passes the limit given
} ggp_err;

/* What went wrong, where: filled by every call that can fail. */
typedef struct ggp_error {
    ggp_err code;
    uint64_t offset;     // byte offset in the file of the offending field
    char msg[224];       // names the object and the values involved
} ggp_error;

/* Returns a static description of the code. */
const char *ggp_strerror(ggp_err code);

/* ==== Views ==== */

typedef struct ggp_str {
    const char *ptr;     // not NUL-terminated
    uint64_t len;
} ggp_str;

/* Writes a name for a message into buf: control bytes, backslashes and
 * invalid UTF-8 escaped as \xHH, long names cut with "...". Returns buf. */
#define GGP_QUOTE_SIZE 80
const char *ggp_quote_name(ggp_str name, char *buf, size_t bufsize);

typedef enum ggp_vtype {
    GGP_V_U8 = 0,
    GGP_V_I8 = 1,
    GGP_V_U16 = 2,
    GGP_V_I16 = 3,
    GGP_V_U32 = 4,
    GGP_V_I32 = 5,
    GGP_V_F32 = 6,
    GGP_V_BOOL = 7,
    GGP_V_STRING = 8,
    GGP_V_ARRAY = 9,
    GGP_V_U64 = 10,
    GGP_V_I64 = 11,
    GGP_V_F64 = 12,
    GGP_V_COUNT
} ggp_vtype;

/* One typed value as it lies in the file. For an array, data points at the
 * first element and count/elem_type describe it. */
typedef struct ggp_value {
    ggp_vtype type;
    ggp_vtype elem_type;  // arrays only
    uint64_t count;       // arrays only: number of elements
    const uint8_t *data;  // scalar bytes, string bytes, or first array element
    uint64_t offset;      // file offset of data
    uint64_t size;        // bytes from data to the end of the value
} ggp_value;

typedef struct ggp_kv {
    ggp_str key;
    uint64_t offset;      // file offset of the key's length field
    ggp_value value;
} ggp_kv;

/* Short type names used in the user.gguf.type attribute: "u32", "str",
 * "arr[str]", "arr[arr]"... */
const char *ggp_vtype_name(ggp_vtype type);

/* ==== Tensor types ==== */

typedef enum ggp_type {
    GGP_TYPE_F32 = 0,
    GGP_TYPE_F16 = 1,
    GGP_TYPE_Q4_0 = 2,
    GGP_TYPE_Q4_1 = 3,
    GGP_TYPE_Q5_0 = 6,
    GGP_TYPE_Q5_1 = 7,
    GGP_TYPE_Q8_0 = 8,
    GGP_TYPE_Q8_1 = 9,
    GGP_TYPE_Q2_K = 10,
    GGP_TYPE_Q3_K = 11,
    GGP_TYPE_Q4_K = 12,
    GGP_TYPE_Q5_K = 13,
    GGP_TYPE_Q6_K = 14,
    GGP_TYPE_Q8_K = 15,
    GGP_TYPE_IQ2_XXS = 16,
    GGP_TYPE_IQ2_XS = 17,
    GGP_TYPE_IQ3_XXS = 18,
    GGP_TYPE_IQ1_S = 19,
    GGP_TYPE_IQ4_NL = 20,
    GGP_TYPE_IQ3_S = 21,
    GGP_TYPE_IQ2_S = 22,
    GGP_TYPE_IQ4_XS = 23,
    GGP_TYPE_I8 = 24,
    GGP_TYPE_I16 = 25,
    GGP_TYPE_I32 = 26,
    GGP_TYPE_I64 = 27,
    GGP_TYPE_F64 = 28,
    GGP_TYPE_IQ1_M = 29,
    GGP_TYPE_BF16 = 30,
    GGP_TYPE_TQ1_0 = 34,
    GGP_TYPE_TQ2_0 = 35,
    GGP_TYPE_MXFP4 = 39,
    GGP_TYPE_NVFP4 = 40,
    GGP_TYPE_Q1_0 = 41,
    GGP_TYPE_Q2_0 = 42,
    GGP_TYPE_COUNT = 43
} ggp_type;

typedef enum ggp_type_origin {
    GGP_ORIGIN_GGML,      // ggml's enum ggml_type
    GGP_ORIGIN_IK_LLAMA,  // ik_llama.cpp's own ids (97 and up): known by
                          // size, no dequantizer
} ggp_type_origin;

typedef struct ggp_type_info {
    const char *name;     // ggml's lower-case name: "q4_K", "iq2_xs"
    uint32_t block_elems; // elements per block
    uint32_t block_bytes; // bytes per block
    uint32_t row_meta_bytes; // bytes before the blocks of every row (the
                             // per-row scales of some ik_llama.cpp types)
    ggp_type_origin origin;
} ggp_type_info;

/* The description of a type id, or NULL for ids nobody assigned, ids ggml
 * removed (4, 5, 31..33, 36..38) and ids past both tables. ggml's table is
 * looked at first, so an id both assign is ggml's. */
const ggp_type_info *ggp_type_lookup(uint32_t type_id);

/* True when ggml once assigned this id and then withdrew it: such tensors
 * are refused, while ids past the table are tolerated as unknown. */
bool ggp_type_is_removed(uint32_t type_id);

typedef struct ggp_tensor {
    ggp_str name;
    uint64_t info_offset;   // file offset of the tensor's descriptor
    uint32_t n_dims;
    int64_t ne[GGP_MAX_DIMS]; // unused dimensions are 1
    uint32_t type_id;
    const ggp_type_info *type; // NULL for an unknown type id
    uint64_t elements;
    uint64_t offset;        // absolute file offset of the data
    uint64_t data_field_offset; // file offset of the descriptor's offset field
    uint64_t bytes;         // data size; 0 when the type is unknown
    const uint8_t *data;    // NULL when the type is unknown
} ggp_tensor;

/* ==== The file ==== */

typedef struct ggp_file ggp_file;

/* Maps and validates the file at path. On failure returns NULL and fills
 * err. The returned handle is freed with ggp_close(). */
ggp_file *ggp_open(const char *path, ggp_error *err);

/* As ggp_open() over caller-owned bytes, which must outlive the handle. */
ggp_file *ggp_open_mem(const void *bytes, size_t size, ggp_error *err);

/* As ggp_open_mem() over the first `avail` bytes of a file of file_size
 * bytes that is not all in memory (a remote file fetched in growing
 * ranges). The same validation runs, with every count, length and tensor
 * range checked against file_size, so a header claiming 2^60 keys is
 * refused at once rather than asking for more. When the header, metadata or
 * descriptors go on past avail, fails with GGP_ERR_NEED_MORE and
 * err->offset the least prefix length that lets parsing go further: call
 * again with at least that many bytes. Bytes past the descriptors are never
 * needed.
 *
 * The handle's views point into bytes, which must outlive it. Unless avail
 * is the whole file, tensor data is not in memory: t->data is NULL,
 * ggp_tensor_read_f32 fails with GGP_ERR_UNSUPPORTED, and f32 comes from
 * ggp_tensor_decode_f32 over blocks the caller reads itself. */
ggp_file *ggp_open_prefix(const void *bytes, size_t avail, uint64_t file_size, ggp_error *err);

/* Gives a file opened with ggp_open_prefix over its header the whole
 * file's bytes for its tensor data (a mapping the caller owns, of
 * file_size bytes, kept for the handle's life). Tensor data is then in
 * memory as after ggp_open_mem, while every view (keys, values, names)
 * stays in the header's bytes: a caller that copied the header out of the
 * mapping keeps views that no later change to the file can touch. Call
 * before the handle is shared between threads. */
void ggp_file_attach_data(ggp_file *file, const void *whole_file);

/* Whether tensor data is in memory (ggp_open, ggp_open_mem, or
 * ggp_file_attach_data) or not (ggp_open_prefix of less than the whole
 * file). */
bool ggp_file_has_data(const ggp_file *file);

/* The end of the last tensor descriptor: the bytes the index was built
 * from (data_offset adds the padding to the alignment). */
uint64_t ggp_header_end(const ggp_file *file);

void ggp_close(ggp_file *file);

typedef enum ggp_byte_order { GGP_LITTLE = 0, GGP_BIG = 1 } ggp_byte_order;

uint32_t ggp_version(const ggp_file *file);
ggp_byte_order ggp_byte_order_of(const ggp_file *file);
uint32_t ggp_alignment(const ggp_file *file);
uint64_t ggp_data_offset(const ggp_file *file);
uint64_t ggp_file_size(const ggp_file *file);
const uint8_t *ggp_file_bytes(const ggp_file *file);
/* The file descriptor of a file opened by path; -1 for ggp_open_mem. */
int ggp_file_fd(const ggp_file *file);


/* The keys, each once, in file order: a key that appears again later in the
 * file is listed at its first occurrence only (its repeats are below). */
uint64_t ggp_kv_count(const ggp_file *file);
const ggp_kv *ggp_kv_at(const ggp_file *file, uint64_t index);
/* The first occurrence of exactly this key, or NULL. */
const ggp_kv *ggp_kv_find(const ggp_file *file, const char *key, size_t len);
/* kv_count as the file's header states it: the keys plus their repeats. */
uint64_t ggp_kv_count_in_header(const ggp_file *file);

/* A later occurrence of a key already seen: not in the list of keys, kept
 * for the warnings. A general.alignment repeat was validated but the first
 * occurrence's value is the alignment. */
typedef struct ggp_kv_repeat {
    ggp_kv kv;             // the repeat itself, with its own offset and value
    uint64_t first_offset; // file offset of the first occurrence's key
} ggp_kv_repeat;

/* The repeats in file order; NULL past the end. */
uint64_t ggp_kv_repeat_count(const ggp_file *file);
const ggp_kv_repeat *ggp_kv_repeat_at(const ggp_file *file, uint64_t index);

uint64_t ggp_tensor_count(const ggp_file *file);
const ggp_tensor *ggp_tensor_at(const ggp_file *file, uint64_t index);
const ggp_tensor *ggp_tensor_find(const ggp_file *file, const char *name, size_t len);

/* ==== Values ==== */

/* Scalar accessors: the value converted from the file's byte order. The
 * caller checks v->type first. */
uint64_t ggp_value_u64(const ggp_file *file, const ggp_value *v); // any unsigned or bool
int64_t ggp_value_i64(const ggp_file *file, const ggp_value *v);  // any signed
double ggp_value_f64(const ggp_file *file, const ggp_value *v);   // f32 or f64
ggp_str ggp_value_str(const ggp_file *file, const ggp_value *v);

/* Walks the elements of an array value in order. Elements of a validated
 * file never fail to decode, so the iterator has no error path. */
typedef struct ggp_array_iter {
    const ggp_file *file;
    ggp_value array;
    uint64_t index;       // next element
    const uint8_t *next;  // its bytes
} ggp_array_iter;

void ggp_array_iter_init(ggp_array_iter *it, const ggp_file *file, const ggp_value *array);
/* Fills elem with the next element; false after the last. */
bool ggp_array_next(ggp_array_iter *it, ggp_value *elem);

/* ==== Rendering (the text of metadata/KEY) ==== */

/* Receives the rendered text piece by piece. */
typedef struct ggp_sink {
    void (*write)(struct ggp_sink *sink, const char *bytes, size_t len);
} ggp_sink;

/* A sink that keeps only the number of bytes written to it. */
typedef struct ggp_counting_sink {
    ggp_sink sink;
    uint64_t total;
} ggp_counting_sink;

void ggp_counting_sink_init(ggp_counting_sink *counter);

/* Writes printf-formatted text to sink; output past 159 bytes is cut. */
void ggp_sink_printf(ggp_sink *sink, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes the text form of a value (SPEC "metadata/KEY") to sink. */
void ggp_render(const ggp_file *file, const ggp_value *v, ggp_sink *sink);

/* Writes s as one line of an array's text: \\, \n, \r, \t and \xHH for
 * other control bytes, DEL and bytes that are not valid UTF-8. */
void ggp_render_line_escaped(ggp_str s, ggp_sink *sink);

/* Writes s as a JSON string (as metadata.json writes strings: bytes that
 * are not UTF-8 as \udcHH). */
void ggp_render_json_string(ggp_str s, ggp_sink *sink);

/* Whether s is valid UTF-8 throughout. */
bool ggp_utf8_valid(ggp_str s);

/* The length of ggp_render's text, computed without keeping it. */
uint64_t ggp_render_size(const ggp_file *file, const ggp_value *v);

/* Shortest decimal that reads back to the same bits ("1e-05", "0.1",
 * "nan"). buf holds at least 32 bytes; returns the length. */
size_t ggp_format_f32(float x, char *buf);
size_t ggp_format_f64(double x, char *buf);

/* Writes a value as JSON: integers with all their digits, floats as
 * ggp_render writes them but NaN, Infinity and -Infinity for nan and inf,
 * strings with bytes that are not UTF-8 as \udcHH, arrays as arrays. */
void ggp_render_json(const ggp_file *file, const ggp_value *v, ggp_sink *sink);

/* Writes a value on one line: numbers as ggp_render, strings escaped as
 * ggp_render_line_escaped, arrays as one line of JSON (as an array of
 * arrays' lines). */
void ggp_render_one_line(const ggp_file *file, const ggp_value *v, ggp_sink *sink);

/* ==== Parsing text (writing metadata/KEY) ==== */

/* A value's whole type: a scalar or string (depth 0), or `depth` arrays
 * around such a leaf (an array of arrays of i32 is {2, GGP_V_I32}). An
 * array of arrays whose inner arrays are all empty has no known leaf:
 * GGP_V_COUNT. */
typedef struct ggp_value_type {
    uint32_t depth;       // arrays around the leaf, at most GGP_MAX_ARRAY_DEPTH
    ggp_vtype leaf;       // never GGP_V_ARRAY
} ggp_value_type;

/* The type of a value; for an array of arrays, each depth's type is that of
 * its first inner array (GGUF lets inner arrays differ; text gives all of
 * them the first one's type). */
ggp_value_type ggp_value_type_of(const ggp_file *file, const ggp_value *v);

/* Reads a type name: "u8" ... "f64", "bool", "str" or "string", and
 * "arr[T]" or "array[T]" around any of them (nested at most
 * GGP_MAX_ARRAY_DEPTH deep; "arr[arr]" is an array of arrays of unknown
 * leaf). False when name[0..len) is none of these. */
bool ggp_value_type_parse(const char *name, size_t len, ggp_value_type *out);

/* Writes the type's name ("u32", "str", "arr[str]", "arr[arr[i32]]",
 * "arr[arr]" for an unknown leaf) into buf of GGP_TYPE_TEXT_SIZE bytes;
 * returns its length. */
#define GGP_TYPE_TEXT_SIZE 64
size_t ggp_value_type_format(ggp_value_type type, char *buf);

/* A growable byte buffer; the caller frees data with free(). */
typedef struct ggp_bytes {
    uint8_t *data;
    size_t len;
    size_t cap;
} ggp_bytes;

/* Appends n bytes to b, growing it (allocates); false when out of memory. */
bool ggp_bytes_append(ggp_bytes *b, const void *bytes, size_t n);

/* A sink that appends what it is given to a ggp_bytes; failed is set when
 * memory ran out (the rest is then dropped). */
typedef struct ggp_bytes_sink {
    ggp_sink sink;
    ggp_bytes *out;
    bool failed;
} ggp_bytes_sink;

void ggp_bytes_sink_init(ggp_bytes_sink *s, ggp_bytes *out);

/* Reads text as the text of metadata/KEY of a value of type `type` (SPEC
 * "metadata/KEY"), the inverse of ggp_render: one trailing newline is
 * dropped; a scalar is its decimal (floats also nan, inf, -inf, NaN,
 * Infinity, -Infinity), a bool true or false, a string its bytes; an array
 * is one element per line, strings escaped as ggp_render_line_escaped
 * writes them, inner arrays as one line of JSON each (\udcHH for a byte
 * that is not UTF-8), and an empty text is an empty array.
 *
 * Appends to out the value's GGUF encoding, what follows its type field (a
 * scalar's bytes; a string's length and bytes; an array's element type,
 * count and elements), in `version` (1: 32-bit lengths and counts) and
 * `order`. Fails, leaving out->len as it was, with GGP_ERR_TEXT when the
 * text is no value of the type or a number does not fit it (300 for a u8),
 * err->offset being the byte in the text and err->msg naming the line and
 * the problem; GGP_ERR_TOO_BIG when the encoding would grow out->len past
 * max_len; GGP_ERR_NOMEM. A NaN is the type's quiet NaN (SPEC renders every
 * NaN as nan). */
ggp_err ggp_parse_text(const char *text, size_t len, ggp_value_type type, uint32_t version,
                       ggp_byte_order order, size_t max_len, ggp_bytes *out, ggp_error *err);

/* Appends to out the bytes of one line escaped as ggp_render_line_escaped
 * writes it (\\, \n, \r, \t, \xHH), at most max_len in all. Fails as
 * ggp_parse_text does. */
ggp_err ggp_parse_line_escaped(const char *line, size_t len, size_t max_len, ggp_bytes *out, ggp_error *err);

/* What ggp_parse_prefix has checked of a text growing at its end: the
 * whole lines of an array, so each write checks only what it added.
 * Start from {0, 0}. */
typedef struct ggp_prefix_state {
    size_t checked;       // bytes of whole lines checked
    uint64_t lines;       // how many
} ggp_prefix_state;

/* Whether text[0..len) can still become, by bytes added at its end, a
 * text ggp_parse_text takes as a value of `type`: GGP_OK, or GGP_ERR_TEXT
 * with err naming the byte offset, the line and the problem (a byte that
 * no value of the type can have there, a scalar's second line, a number
 * already too large for the type). Never refuses a start that some ending
 * makes a value; a text it lets through may still fail at the end (a
 * lone "-", an array of arrays' line being written, sizes). */
ggp_err ggp_parse_prefix(const char *text, size_t len, ggp_value_type type, ggp_prefix_state *state,
                         ggp_error *err);

/* ==== Views for tools ==== */

/* Writes metadata.json: one JSON object of every key (first occurrences,
 * file order), one key per line:
 *
 *   {
 *     "general.architecture": "llama",
 *     "tokenizer.ggml.tokens": ["<unk>","<s>"]
 *   }
 *
 * and "{}" for a file without keys; the text ends in a newline. */
void ggp_render_metadata_json(const ggp_file *file, ggp_sink *sink);

/* Writes the warnings view: one line per finding, each starting with
 * "offset N: ", in order of offset: a key that appears again (its offset,
 * the first occurrence's, and its value as ggp_render_one_line writes it),
 * what the chat-template audit finds in each chat template key's value
 * (template/ggt.h; "key 'K' at byte M of its value: ...", N the value's
 * offset plus M, after that key's own line),
 * a special token id outside the vocabulary (-1 and 4294967295, "none",
 * are not) and a BPE vocabulary (tokenizer.ggml.model "gpt2") without
 * tokenizer.ggml.pre or with an empty one, each at its key's offset
 * ("key 'K': ..."),
 * a tensor of unknown type, tensors whose data overlap (both names and
 * ranges; each overlapping tensor once, against the earlier tensor reaching
 * farthest), and bytes after the tensor data (beyond the padding to the
 * alignment that ggml's writer adds; not reported when a tensor's type, and
 * so its size, is unknown). Nothing when the file has none of these.
 * Allocates (and frees) an index of the tensors and the audit's tables;
 * returns false when that fails (the text written is then incomplete). */
bool ggp_render_warnings(const ggp_file *file, ggp_sink *sink);

/* ==== The tokenizer (tokenizer/) ==== */

/* Whether the file has a vocabulary: tokenizer.ggml.tokens, an array of
 * strings. The two views below write nothing without one. */
bool ggp_has_vocab(const ggp_file *file);

/* Writes vocab.tsv: "id\ttype\tscore\ttoken\n", then one line per token:
 * its id; its tokenizer.ggml.token_type as llama.cpp names it (normal,
 * unknown, control, user_defined, unused, byte; the number for any other,
 * empty without the key); its tokenizer.ggml.scores element as
 * ggp_render writes numbers (empty without); its text escaped as
 * ggp_render_line_escaped. */
void ggp_render_vocab_tsv(const ggp_file *file, ggp_sink *sink);

/* Writes special: "NAME: ID TEXT" for each key tokenizer.ggml.NAME_token_id
 * of an integer type, in file order, TEXT the token's escaped, "-" when
 * the vocabulary has no such id, and "NAME: -1 -" for 4294967295 or -1
 * (llama.cpp's none); then "add_bos: true|false" and "add_eos: ..." for
 * tokenizer.ggml.add_bos_token and add_eos_token, when they are bools.
 * Allocates (and frees) a table of the keys' ids, so that the tokens are
 * walked once; returns false when that fails (nothing is written). */
bool ggp_render_special_tokens(const ggp_file *file, ggp_sink *sink);

/* The first line of tensors.tsv:
 * "name\ttype\tshape\telements\tbytes\toffset\tshard\n". */
void ggp_render_tsv_header(ggp_sink *sink);

/* One line of tensors.tsv for tensor t of shard number `shard` (1-based):
 * the name escaped as ggp_render_line_escaped, the type name (as
 * ggp_format_type_name), the shape as "ne0,ne1,..." (empty for a scalar),
 * elements, bytes ("unknown" for an unknown type), the absolute offset of
 * the data in its file, and shard. */
void ggp_render_tsv_row(const ggp_tensor *t, uint32_t shard, ggp_sink *sink);

/* The type's name, or "unknown(ID)". buf holds GGP_TYPE_NAME_SIZE bytes;
 * returns the length. */
#define GGP_TYPE_NAME_SIZE 24
size_t ggp_format_type_name(const ggp_tensor *t, char *buf);

/* Writes the NumPy format 1.0 header of t's f32.npy into buf: magic,
 * version, length and the dict {'descr': '<f4', 'fortran_order': False,
 * 'shape': (ne[n-1], ..., ne[0]), } padded with spaces and a newline to a
 * multiple of 64 bytes (a 1-D shape is "(n,)", a scalar's "()"). Returns
 * its length. The f32 bytes follow it unchanged. */
#define GGP_NPY_HEADER_MAX 256
size_t ggp_npy_header(const ggp_tensor *t, char buf[GGP_NPY_HEADER_MAX]);

/* ==== Statistics (tensors/NAME/stats) ==== */

/* An accumulator of f32 values fed in chunks of any size: counts over all
 * values, the rest over the finite ones. Sums are float64: each block of
 * values is summed, then its squared deviations from its own mean, and the
 * blocks are merged with Chan's formula (mean and std within a few ulps of
 * a float64 two-pass result over the whole tensor). */
typedef struct ggp_stats {
    uint64_t count;       // values seen
    uint64_t finite;      // of which finite
    uint64_t zeros, nans, infs;
    float min, max, abs_max; // over the finite values (when finite > 0)
    double sum, sum_err;  // sum of the finite values, compensated (Neumaier)
    double m2;            // sum of their squared deviations from the mean
    bool use_simd;        // AVX2 blocks where the CPU has them
} ggp_stats;

void ggp_stats_init(ggp_stats *s);
/* Chooses the AVX2 (default where the CPU has it) or scalar code: the
 * counts, min and max are the same, mean and std agree to a few ulps. */
void ggp_stats_set_simd(ggp_stats *s, bool enabled);
void ggp_stats_add(ggp_stats *s, const float *values, size_t n);

/* Mean and population standard deviation of the finite values; NaN when
 * there are none. */
double ggp_stats_mean(const ggp_stats *s);
double ggp_stats_std(const ggp_stats *s);

/* The stats text of a tensor of `elements` values:
 *
 *   min: -1.23456789e+00          f32 values: %+.8e, which reads back exactly
 *   max: +1.23456789e+00
 *   mean: +1.2345678901234567e-03 float64: %+.16e, which reads back exactly
 *   std: +1.2345678901234567e-01
 *   abs_max: +1.23456789e+00
 *   zeros: 12                     counts, padded on the right with spaces to
 *   nans: 0                       the number of digits of `elements`
 *   infs: 0
 *
 * Floats without finite values are "nan" padded on the right to the same
 * width. Every line has a fixed width, so ggp_stats_text_size(elements) is
 * the size before anything is computed. The counts of s must not exceed
 * elements. */
void ggp_stats_render(const ggp_stats *s, uint64_t elements, ggp_sink *sink);
uint64_t ggp_stats_text_size(uint64_t elements);

/* ==== Dequantization ==== */

/* Why tensor t has no f32 view, or NULL when it has one. */
const char *ggp_tensor_f32_unavailable(const ggp_file *file, const ggp_tensor *t);

/* Writes elements [first, first + count) of t, as ggml's to_float gives them,
 * to dst. Work is proportional to count. Fails with GGP_ERR_RANGE when the
 * range leaves the tensor, GGP_ERR_UNSUPPORTED when t has no f32 view. */
ggp_err ggp_tensor_read_f32(const ggp_file *file, const ggp_tensor *t,
                            uint64_t first, uint64_t count, float *dst);

/* The bytes of t, relative to its first byte, that ggp_tensor_decode_f32
 * needs for elements [first, first + count): the whole blocks those
 * elements fall in. GGP_ERR_RANGE when the range leaves the tensor,
 * GGP_ERR_UNSUPPORTED for an unknown type. */
ggp_err ggp_tensor_f32_span(const ggp_tensor *t, uint64_t first, uint64_t count,
                            uint64_t *byte_offset, uint64_t *byte_len);

/* As ggp_tensor_read_f32, from the tensor's bytes the caller read itself:
 * blocks holds blocks_len bytes of t starting at the byte_offset that
 * ggp_tensor_f32_span gives for the same range. Works on every handle, and
 * gives the same bits as ggp_tensor_read_f32 (both byte orders). Fails with
 * GGP_ERR_RANGE when blocks_len is shorter than that span's byte_len. */
ggp_err ggp_tensor_decode_f32(const ggp_file *file, const ggp_tensor *t, const void *blocks,
                              size_t blocks_len, uint64_t first, uint64_t count, float *dst);

/* Chooses between the SIMD (x86-64 AVX2 + F16C) and the scalar dequantizers
 * for this handle's reads; both give the same bits. Handles start with SIMD
 * on wherever the CPU has it. Enabling it on a CPU or build without it keeps
 * the scalar code. Not synchronised with reads: call it before the handle
 * is shared between threads. */
void ggp_file_set_simd(ggp_file *file, bool enabled);

#endif

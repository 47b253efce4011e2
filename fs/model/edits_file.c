/*
 * Reading and writing the file of edits (see edits_file.h).
 */
#define _DEFAULT_SOURCE // mkstemp and fsync on a directory are not C11
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/edits_file.h"

#define FORMAT "gguf-fs edits 1"

/* ==== Writing ==== */

static void put(ggp_sink *s, const char *text)
{
    s->write(s, text, strlen(text));
}

/* Whether every string in a value is UTF-8 (JSON can then hold it). */
static bool value_is_utf8(const ggp_file *f, const ggp_value *v)
{
    if (v->type == GGP_V_STRING)
        return ggp_utf8_valid(ggp_value_str(f, v));
    if (v->type != GGP_V_ARRAY || (v->elem_type != GGP_V_STRING && v->elem_type != GGP_V_ARRAY))
        return true;
    ggp_array_iter it;
    ggp_value e;
    ggp_array_iter_init(&it, f, v);
    while (ggp_array_next(&it, &e)) {
        if (!value_is_utf8(f, &e)) // nesting is at most GGP_MAX_ARRAY_DEPTH deep
            return false;
    }
    return true;
}

/* "key": NAME, or "key_escaped": NAME escaped when it is not UTF-8. */
static void put_name(ggp_sink *s, ggp_str name)
{
    if (ggp_utf8_valid(name)) {
        put(s, "\"key\": ");
        ggp_render_json_string(name, s);
        return;
    }
    ggp_bytes escaped = {0};
    ggp_bytes_sink sink;
    ggp_bytes_sink_init(&sink, &escaped);
    ggp_render_line_escaped(name, &sink.sink);
    put(s, "\"key_escaped\": ");
    ggp_render_json_string((ggp_str){(const char *)escaped.data, escaped.len}, s);
    free(escaped.data);
}

static bool put_key(ggp_sink *s, const ggp_file *keys, const ggfs_edit_save *save)
{
    const ggp_kv *kv = ggp_kv_at(keys, save->index);
    char type[GGP_TYPE_TEXT_SIZE];
    put(s, "    {");
    put_name(s, kv->key);
    ggp_value_type_format(ggp_value_type_of(keys, &kv->value), type);
    put(s, ", \"type\": \"");
    put(s, type);
    put(s, "\"");
    if (save->retyped) {
        ggp_value_type_format(save->was, type);
        put(s, ", \"was\": \"");
        put(s, type);
        put(s, "\"");
    }
    if (value_is_utf8(keys, &kv->value)) {
        put(s, ", \"value\": ");
        ggp_render_json(keys, &kv->value, s);
    } else {
        ggp_bytes text = {0}, escaped = {0};
        ggp_bytes_sink text_sink, escaped_sink;
        ggp_bytes_sink_init(&text_sink, &text);
        ggp_bytes_sink_init(&escaped_sink, &escaped);
        ggp_render(keys, &kv->value, &text_sink.sink);
        ggp_render_line_escaped((ggp_str){(const char *)text.data, text.len}, &escaped_sink.sink);
        put(s, ", \"escaped\": ");
        ggp_render_json_string((ggp_str){(const char *)escaped.data, escaped.len}, s);
        const bool failed = text_sink.failed || escaped_sink.failed;
        free(text.data);
        free(escaped.data);
        if (failed)
            return false;
    }
    put(s, "}");
    return true;
}

static bool render_file(ggp_sink *s, const ggp_file *keys, const ggfs_edit_save *set, uint64_t n_set,
                        const ggp_str *deleted, uint64_t n_deleted)
{
    put(s, "{\n  \"format\": \"" FORMAT "\",\n  \"keys\": [");
    for (uint64_t i = 0; i < n_set; i++) {
        put(s, i ? ",\n" : "\n");
        if (!put_key(s, keys, &set[i]))
            return false;
    }
    put(s, n_set ? "\n  ],\n  \"deleted\": [" : "],\n  \"deleted\": [");
    for (uint64_t i = 0; i < n_deleted; i++) {
        put(s, i ? ",\n    " : "\n    ");
        if (ggp_utf8_valid(deleted[i])) {
            ggp_render_json_string(deleted[i], s);
        } else {
            put(s, "{");
            put_name(s, deleted[i]);
            put(s, "}");
        }
    }
    put(s, n_deleted ? "\n  ]\n}\n" : "]\n}\n");
    return true;
}

static int fail_why(int err, char *why, size_t why_size, const char *path, const char *what)
{
    snprintf(why, why_size, "%s: %s: %s", path, what, strerror(err));
    return err;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        const ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int ggfs_edits_file_save(const char *path, const ggp_file *keys, const ggfs_edit_save *set, uint64_t n_set,
                         const ggp_str *deleted, uint64_t n_deleted, char *why, size_t why_size)
{
    ggp_bytes text = {0};
    ggp_bytes_sink sink;
    ggp_bytes_sink_init(&sink, &text);
    if (!render_file(&sink.sink, keys, set, n_set, deleted, n_deleted) || sink.failed) {
        free(text.data);
        return fail_why(ENOMEM, why, why_size, path, "cannot render the edits");
    }
    // The temporary goes beside PATH, so that the rename stays in one file system.
    char *dir_copy = strdup(path), *base_copy = strdup(path);
    char *tmp = dir_copy && base_copy ? malloc(strlen(path) + 16) : NULL;
    int err = 0;
    if (!tmp) {
        err = fail_why(ENOMEM, why, why_size, path, "cannot save");
        goto out;
    }
    const char *dir = dirname(dir_copy);
    sprintf(tmp, "%s/.%s.XXXXXX", dir, basename(base_copy));
    const int fd = mkstemp(tmp);
    if (fd < 0) {
        err = fail_why(errno, why, why_size, path, "cannot make a temporary file beside it");
        goto out;
    }
    // The file keeps the mode it had (mkstemp makes 0600).
    struct stat old;
    if (stat(path, &old) == 0 && fchmod(fd, old.st_mode & 07777) != 0)
        err = errno;
    if (!err)
        err = write_all(fd, text.data, text.len);
    if (!err && fsync(fd) != 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err) {
        unlink(tmp);
        fail_why(err, why, why_size, path, "cannot save");
        goto out;
    }
    // The rename is durable once the directory is synced.
    const int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0 || fsync(dfd) != 0)
        err = fail_why(errno, why, why_size, path, "cannot sync its directory");
    if (dfd >= 0)
        close(dfd);
out:
    free(tmp);
    free(dir_copy);
    free(base_copy);
    free(text.data);
    return err;
}

/* ==== Reading ==== */

typedef struct loader {
    const char *path;
    char *why;
    size_t why_size;
} loader;

static int refuse(const loader *l, const char *name, size_t name_len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int refuse(const loader *l, const char *name, size_t name_len, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (name) {
        char q[GGP_QUOTE_SIZE];
        snprintf(l->why, l->why_size, "%s: key '%s': %s", l->path,
                 ggp_quote_name((ggp_str){name, name_len}, q, sizeof q), what);
    } else {
        snprintf(l->why, l->why_size, "%s: %s", l->path, what);
    }
    return EINVAL;
}

static bool append_str(ggp_bytes *b, const char *s)
{
    return ggp_bytes_append(b, s, strlen(s));
}

/* A number or bool of type t as metadata/KEY writes it; false when the
 * JSON value is of another kind. The text is checked against the type
 * when it is parsed. */
static bool scalar_text(json_object *v, ggp_vtype t, ggp_bytes *out)
{
    const enum json_type kind = json_object_get_type(v);
    if (t == GGP_V_BOOL)
        return kind == json_type_boolean && append_str(out, json_object_get_boolean(v) ? "true" : "false");
    if (t == GGP_V_F32 || t == GGP_V_F64) {
        // A parsed double keeps the text it was written as.
        return (kind == json_type_double || kind == json_type_int) && append_str(out, json_object_get_string(v));
    }
    if (kind != json_type_int)
        return false;
    char digits[32];
    const int64_t i = json_object_get_int64(v);
    if (i < 0)
        snprintf(digits, sizeof digits, "%" PRId64, i);
    else
        snprintf(digits, sizeof digits, "%" PRIu64, json_object_get_uint64(v));
    return append_str(out, digits);
}

/* The metadata/KEY text of a JSON value of type t; false (with *kind_ok
 * false) when the JSON is not of the type's kind. */
static bool json_to_text(json_object *v, ggp_value_type t, ggp_bytes *out, bool *kind_ok)
{
    *kind_ok = false;
    if (t.depth == 0) {
        if (t.leaf == GGP_V_STRING) {
            if (!json_object_is_type(v, json_type_string))
                return false;
            *kind_ok = true;
            return ggp_bytes_append(out, json_object_get_string(v), (size_t)json_object_get_string_len(v)) &&
                   append_str(out, "\n");
        }
        if (!scalar_text(v, t.leaf, out))
            return false;
        *kind_ok = true;
        return append_str(out, "\n");
    }
    if (!json_object_is_type(v, json_type_array))
        return false;
    const size_t n = json_object_array_length(v);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(v, i);
        if (t.depth >= 2) {
            // An inner array is one line of JSON, as metadata/KEY has it.
            if (!json_object_is_type(e, json_type_array))
                return false;
            if (!append_str(out, json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN |
                                                                       JSON_C_TO_STRING_NOSLASHESCAPE)))
                return false;
        } else if (t.leaf == GGP_V_STRING) {
            if (!json_object_is_type(e, json_type_string))
                return false;
            ggp_bytes_sink line;
            ggp_bytes_sink_init(&line, out);
            ggp_render_line_escaped((ggp_str){json_object_get_string(e), (uint64_t)json_object_get_string_len(e)},
                                    &line.sink);
            if (line.failed)
                return false;
        } else if (!scalar_text(e, t.leaf, out)) {
            return false;
        }
        if (!append_str(out, "\n"))
            return false;
    }
    *kind_ok = true;
    return true;
}

/* A name: "key" as it is, or "key_escaped" unescaped. */
static int read_name(const loader *l, json_object *holder, const char *what, char **name, size_t *len)
{
    json_object *plain, *escaped;
    ggp_bytes b = {0};
    if (json_object_object_get_ex(holder, "key", &plain) && json_object_is_type(plain, json_type_string)) {
        if (!ggp_bytes_append(&b, json_object_get_string(plain), (size_t)json_object_get_string_len(plain)))
            return ENOMEM;
    } else if (json_object_object_get_ex(holder, "key_escaped", &escaped) &&
               json_object_is_type(escaped, json_type_string)) {
        ggp_error e;
        if (ggp_parse_line_escaped(json_object_get_string(escaped), (size_t)json_object_get_string_len(escaped),
                                   SIZE_MAX, &b, &e) != GGP_OK) {
            free(b.data);
            return refuse(l, NULL, 0, "%s: key_escaped: offset %" PRIu64 ": %s", what, e.offset, e.msg);
        }
    } else {
        return refuse(l, NULL, 0, "%s has no \"key\" string", what);
    }
    if (b.len == 0 || !ggp_bytes_append(&b, "", 1)) {
        free(b.data);
        return b.len == 0 ? refuse(l, NULL, 0, "%s: an empty key", what) : ENOMEM;
    }
    *name = (char *)b.data;
    *len = b.len - 1;
    return 0;
}

static int read_type(const loader *l, json_object *entry, const char *field, const ggfs_edit_record *r,
                     ggp_value_type *out)
{
    json_object *t;
    if (!json_object_object_get_ex(entry, field, &t) || !json_object_is_type(t, json_type_string))
        return refuse(l, r->name, r->name_len, "no \"%s\" string", field);
    if (!ggp_value_type_parse(json_object_get_string(t), (size_t)json_object_get_string_len(t), out))
        return refuse(l, r->name, r->name_len, "\"%s\": '%.40s' is no type", field, json_object_get_string(t));
    return 0;
}

static int read_record(const loader *l, json_object *entry, uint64_t i, ggfs_edit_record *r)
{
    char what[48];
    snprintf(what, sizeof what, "keys[%" PRIu64 "]", i);
    if (!json_object_is_type(entry, json_type_object))
        return refuse(l, NULL, 0, "%s is not an object", what);
    int err = read_name(l, entry, what, &r->name, &r->name_len);
    if (err)
        return err;
    if ((err = read_type(l, entry, "type", r, &r->type)) != 0)
        return err;
    json_object *was, *value, *escaped;
    r->retyped = json_object_object_get_ex(entry, "was", &was);
    if (r->retyped && (err = read_type(l, entry, "was", r, &r->was)) != 0)
        return err;
    ggp_bytes text = {0};
    if (json_object_object_get_ex(entry, "value", &value)) {
        bool kind_ok;
        if (!json_to_text(value, r->type, &text, &kind_ok)) {
            free(text.data);
            if (!kind_ok) {
                // Said after the type is checked against the model's.
                r->wrong_kind = true;
                return 0;
            }
            return ENOMEM;
        }
    } else if (json_object_object_get_ex(entry, "escaped", &escaped) &&
               json_object_is_type(escaped, json_type_string)) {
        ggp_error e;
        if (ggp_parse_line_escaped(json_object_get_string(escaped), (size_t)json_object_get_string_len(escaped),
                                   SIZE_MAX, &text, &e) != GGP_OK) {
            free(text.data);
            return refuse(l, r->name, r->name_len, "\"escaped\": offset %" PRIu64 ": %s", e.offset, e.msg);
        }
    } else {
        return refuse(l, r->name, r->name_len, "no \"value\"");
    }
    r->text = (char *)text.data;
    r->text_len = text.len;
    return 0;
}

static int read_deleted(const loader *l, json_object *entry, uint64_t i, ggfs_edit_deleted *d)
{
    if (json_object_is_type(entry, json_type_string)) {
        d->name_len = (size_t)json_object_get_string_len(entry);
        d->name = malloc(d->name_len + 1);
        if (!d->name)
            return ENOMEM;
        memcpy(d->name, json_object_get_string(entry), d->name_len + 1);
        if (d->name_len == 0)
            return refuse(l, NULL, 0, "deleted[%" PRIu64 "]: an empty key", i);
        return 0;
    }
    char what[48];
    snprintf(what, sizeof what, "deleted[%" PRIu64 "]", i);
    if (!json_object_is_type(entry, json_type_object))
        return refuse(l, NULL, 0, "%s is neither a string nor an object", what);
    return read_name(l, entry, what, &d->name, &d->name_len);
}

/* The whole file, at most GGFS_EDITS_FILE_MAX bytes. */
static int read_whole(const loader *l, char **text, size_t *len)
{
    const int fd = open(l->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? ENOENT : fail_why(errno, l->why, l->why_size, l->path, "cannot open");
    struct stat st;
    if (fstat(fd, &st) != 0) {
        const int err = errno;
        close(fd);
        return fail_why(err, l->why, l->why_size, l->path, "cannot stat");
    }
    if (S_ISREG(st.st_mode) && st.st_size == 0) {
        close(fd);
        return ENOENT; // made empty (touch): no edits yet
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > GGFS_EDITS_FILE_MAX) {
        close(fd);
        if (!S_ISREG(st.st_mode))
            return refuse(l, NULL, 0, "not a regular file");
        return refuse(l, NULL, 0, "%lld bytes, more than the %" PRIu64 " a file of edits may hold",
                      (long long)st.st_size, GGFS_EDITS_FILE_MAX);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        const ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (!buf)
        return ENOMEM;
    *text = buf;
    *len = got;
    return 0;
}

int ggfs_edits_file_load(const char *path, ggfs_edits_loaded *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    const loader l = {path, why, why_size};
    char *text = NULL;
    size_t len = 0;
    int err = read_whole(&l, &text, &len);
    if (err)
        return err;
    struct json_tokener *tok = json_tokener_new_ex(GGP_MAX_ARRAY_DEPTH + 8);
    if (!tok) {
        free(text);
        return ENOMEM;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *doc = json_tokener_parse_ex(tok, text, (int)(len < INT32_MAX ? len : INT32_MAX));
    const enum json_tokener_error jerr = json_tokener_get_error(tok);
    const size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    free(text);
    if (!doc || jerr != json_tokener_success) {
        json_object_put(doc);
        const bool early = jerr == json_tokener_continue || jerr == json_tokener_success;
        return refuse(&l, NULL, 0, "offset %zu: not JSON: %s", end,
                      early ? "the text ends before the JSON does" : json_tokener_error_desc(jerr));
    }
    json_object *format, *keys, *deleted;
    if (!json_object_is_type(doc, json_type_object) || !json_object_object_get_ex(doc, "format", &format) ||
        !json_object_is_type(format, json_type_string) || strcmp(json_object_get_string(format), FORMAT) != 0) {
        json_object_put(doc);
        return refuse(&l, NULL, 0, "not a file of edits (it needs \"format\": \"" FORMAT "\")");
    }
    const bool has_keys = json_object_object_get_ex(doc, "keys", &keys);
    const bool has_deleted = json_object_object_get_ex(doc, "deleted", &deleted);
    if ((has_keys && !json_object_is_type(keys, json_type_array)) ||
        (has_deleted && !json_object_is_type(deleted, json_type_array))) {
        json_object_put(doc);
        return refuse(&l, NULL, 0, "\"keys\" and \"deleted\" must be arrays");
    }
    const size_t n_keys = has_keys ? json_object_array_length(keys) : 0;
    const size_t n_deleted = has_deleted ? json_object_array_length(deleted) : 0;
    out->keys = calloc(n_keys ? n_keys : 1, sizeof *out->keys);
    out->deleted = calloc(n_deleted ? n_deleted : 1, sizeof *out->deleted);
    err = out->keys && out->deleted ? 0 : ENOMEM;
    for (size_t i = 0; !err && i < n_keys; i++) {
        err = read_record(&l, json_object_array_get_idx(keys, i), i, &out->keys[i]);
        out->n_keys = i + 1;
    }
    for (size_t i = 0; !err && i < n_deleted; i++) {
        err = read_deleted(&l, json_object_array_get_idx(deleted, i), i, &out->deleted[i]);
        out->n_deleted = i + 1;
    }
    json_object_put(doc);
    if (err == ENOMEM)
        snprintf(why, why_size, "%s: out of memory", path);
    if (err)
        ggfs_edits_loaded_free(out);
    return err;
}

void ggfs_edits_loaded_free(ggfs_edits_loaded *loaded)
{
    for (uint64_t i = 0; i < loaded->n_keys; i++) {
        free(loaded->keys[i].name);
        free(loaded->keys[i].text);
    }
    for (uint64_t i = 0; i < loaded->n_deleted; i++)
        free(loaded->deleted[i].name);
    free(loaded->keys);
    free(loaded->deleted);
    memset(loaded, 0, sizeof *loaded);
}

/*
 * Kept records (cache_records.h) whose data is one JSON object, written
 * and read with json-c: the owner builds or reads the object, and the
 * parsing (strict, whole, UTF-8 checked) and the blame of a bad record
 * (its file and the offset in it) are done once, here.
 */
#ifndef GGFS_SOURCE_RECORD_JSON_H
#define GGFS_SOURCE_RECORD_JSON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "source/cache_records.h"

/* Keeps o, as plain JSON text, as the record `name` of `kind` under
 * cache_dir (ggfs_cache_record_put). o stays the caller's. */
bool ggfs_record_json_put(const char *cache_dir, const char *kind, const char *name, json_object *o, char *why,
                          size_t why_size);

/* Reads the record `name` of `kind` under cache_dir, parses it as JSON
 * and hands the object to fill, which fills out and returns NULL, or
 * returns what is wrong (a field missing). BAD, with why naming the
 * record's file, the offset and the problem, when the data is not one
 * JSON value or fill refuses it (fill then frees what it filled). */
ggfs_cache_record_status ggfs_record_json_get(const char *cache_dir, const char *kind, const char *name,
                                              const char *(*fill)(json_object *o, void *out), void *out, char *why,
                                              size_t why_size);

#endif

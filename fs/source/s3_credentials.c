/*
 * Finding S3 credentials and the region (s3_credentials.h). The shared
 * files are INI as AWS's tools write them: `[section]` lines, `name = value`
 * lines, comments starting with '#' or ';'.
 */
#define _DEFAULT_SOURCE // explicit_bzero
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/s3_credentials.h"

#define LINE_MAX_BYTES 4096

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* $VAR, else ~/.aws/FILE, into path. */
static void file_path(const char *var, const char *file, char *path, size_t size)
{
    const char *p = env(var);
    const char *home = env("HOME");
    if (p)
        snprintf(path, size, "%s", p);
    else
        snprintf(path, size, "%s/.aws/%s", home ? home : "", file);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Copies the values of the names asked for (names[i] into values[i], of
 * caps[i] bytes; a value too long is left out) from section `section` of
 * the INI file at path. Returns how many were found; -1 when the file
 * cannot be read for another reason than its absence (errno). */
static int ini_read(const char *path, const char *section, const char *const *names, char **values,
                    const size_t *caps, int n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
    char line[LINE_MAX_BYTES];
    bool inside = false;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        char *s = trim(line);
        if (*s == '#' || *s == ';' || *s == '\0')
            continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (end) {
                *end = '\0';
                inside = strcmp(trim(s + 1), section) == 0;
            }
            continue;
        }
        char *eq = strchr(s, '=');
        if (!inside || !eq)
            continue;
        *eq = '\0';
        const char *name = trim(s), *value = trim(eq + 1);
        for (int i = 0; i < n; i++) {
            if (strcmp(name, names[i]) == 0 && strlen(value) < caps[i]) {
                if (!values[i][0])
                    found++;
                strcpy(values[i], value);
            }
        }
    }
    explicit_bzero(line, sizeof line);
    fclose(f);
    return found;
}

static bool set_token(ggfs_s3_credentials *c, const char *token)
{
    if (!token || !*token)
        return true;
    c->token = strdup(token);
    return c->token != NULL;
}

static bool from_files(ggfs_s3_credentials *c, const char *profile, char *why, size_t why_size)
{
    char path[1024];
    file_path("AWS_SHARED_CREDENTIALS_FILE", "credentials", path, sizeof path);
    char token[2048] = "";
    static const char *const names[] = {"aws_access_key_id", "aws_secret_access_key", "aws_session_token"};
    char *values[] = {c->access, c->secret, token};
    const size_t caps[] = {sizeof c->access, sizeof c->secret, sizeof token};
    const int found = ini_read(path, profile, names, values, caps, 3);
    if (found < 0) {
        snprintf(why, why_size, "cannot read %.200s: %s", path, strerror(errno));
        return false;
    }
    if (!c->access[0] && !c->secret[0]) {
        snprintf(why, why_size,
                 "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, give profile [%.40s] in %.200s, or mount with -o no_sign_request",
                 profile, path);
        return false;
    }
    if (!c->access[0] || !c->secret[0]) {
        snprintf(why, why_size, "%.200s: profile [%.40s] lacks aws_%s", path, profile,
                 c->access[0] ? "secret_access_key" : "access_key_id");
        return false;
    }
    const bool ok = set_token(c, token);
    explicit_bzero(token, sizeof token);
    if (!ok) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    snprintf(c->from, sizeof c->from, "profile [%.40s] of %.100s", profile, path);
    return true;
}

/* The region of the profile in the config file, if it names one. */
static void region_from_config(ggfs_s3_credentials *c, const char *profile)
{
    char path[1024], section[160];
    file_path("AWS_CONFIG_FILE", "config", path, sizeof path);
    if (strcmp(profile, "default") == 0)
        snprintf(section, sizeof section, "default");
    else
        snprintf(section, sizeof section, "profile %.120s", profile);
    static const char *const names[] = {"region"};
    char *values[] = {c->region};
    const size_t caps[] = {sizeof c->region};
    ini_read(path, section, names, values, caps, 1);
}

bool ggfs_s3_credentials_load(bool no_sign, ggfs_s3_credentials *c, char *why, size_t why_size)
{
    memset(c, 0, sizeof *c);
    const char *profile = env("AWS_PROFILE") ? env("AWS_PROFILE") : "default";
    const char *region = env("AWS_REGION") ? env("AWS_REGION") : env("AWS_DEFAULT_REGION");
    if (region && strlen(region) < sizeof c->region)
        strcpy(c->region, region);
    else
        region_from_config(c, profile);
    if (!c->region[0])
        strcpy(c->region, GGFS_S3_DEFAULT_REGION);

    if (no_sign) {
        c->anonymous = true;
        snprintf(c->from, sizeof c->from, "-o no_sign_request");
        return true;
    }
    const char *access = env("AWS_ACCESS_KEY_ID"), *secret = env("AWS_SECRET_ACCESS_KEY");
    if (access && secret) {
        if (strlen(access) >= sizeof c->access || strlen(secret) >= sizeof c->secret) {
            snprintf(why, why_size, "AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is longer than %zu bytes",
                     sizeof c->access - 1);
            return false;
        }
        strcpy(c->access, access);
        strcpy(c->secret, secret);
        if (!set_token(c, env("AWS_SESSION_TOKEN"))) {
            snprintf(why, why_size, "out of memory");
            return false;
        }
        snprintf(c->from, sizeof c->from, "AWS_ACCESS_KEY_ID");
        return true;
    }
    if (access || secret) {
        snprintf(why, why_size, "%s is set but %s is not", access ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                 access ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
        return false;
    }
    if (!from_files(c, profile, why, why_size)) {
        ggfs_s3_credentials_clear(c);
        return false;
    }
    return true;
}

void ggfs_s3_credentials_clear(ggfs_s3_credentials *c)
{
    if (c->token) {
        explicit_bzero(c->token, strlen(c->token));
        free(c->token);
        c->token = NULL;
    }
    explicit_bzero(c->secret, sizeof c->secret);
}

/*
 * Resolving hf:// names and finding the Hub token. Each part of the name is
 * percent-encoded on its own, so a revision such as refs/pr/1 stays one
 * path segment, as the Hub expects. No libcurl here: the source table,
 * which every mount loads, reads where these names end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> // strcasecmp

#include "source/hf_name.h"
#include "util/url_text.h"

#define TOKEN_MAX 4096

/* Appends the percent-encoding of [p, p + n) to out (cap bytes). */
static bool append_escaped(char *out, size_t cap, const char *p, size_t n)
{
    return ggfs_url_append_escaped(out, cap, p, n, false);
}

/* The token file's first line, without surrounding blanks; NULL if none. */
static char *read_token(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[TOKEN_MAX];
    char *line = fgets(buf, sizeof buf, f);
    fclose(f);
    if (!line)
        return NULL;
    while (*line == ' ' || *line == '\t')
        line++;
    size_t n = strcspn(line, "\r\n");
    while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
        n--;
    return n > 0 ? strndup(line, n) : NULL;
}

static char *find_token(void);

char *ggfs_hf_token(void)
{
    return find_token();
}

char *ggfs_hf_endpoint(void)
{
    const char *endpoint = getenv("HF_ENDPOINT");
    if (!endpoint || !*endpoint)
        endpoint = GGFS_HF_DEFAULT_ENDPOINT;
    size_t n = strlen(endpoint);
    while (n > 0 && endpoint[n - 1] == '/')
        n--;
    return strndup(endpoint, n);
}

static char *find_token(void)
{
    const char *env = getenv("HF_TOKEN");
    if (env && *env)
        return strdup(env);
    char path[4096];
    const char *hf_home = getenv("HF_HOME");
    const char *home = getenv("HOME");
    if (hf_home && *hf_home)
        snprintf(path, sizeof path, "%s/token", hf_home);
    else if (home && *home)
        snprintf(path, sizeof path, "%s/.cache/huggingface/token", home);
    else
        return NULL;
    return read_token(path);
}

bool ggfs_hf_offline_asked(void)
{
    static const char *const yes[] = {"1", "ON", "YES", "TRUE"};
    const char *env = getenv("HF_HUB_OFFLINE");
    for (size_t i = 0; env && i < sizeof yes / sizeof *yes; i++)
        if (strcasecmp(env, yes[i]) == 0)
            return true;
    return false;
}

size_t ggfs_hf_name_end(const char *name)
{
    // The last '@': a path may hold '@' (dir@x/m.gguf, a file the Hub
    // lists), a revision (a branch, tag, refs/pr/N or commit) never does.
    const char *at = strrchr(name, '@');
    return at ? (size_t)(at - name) : strlen(name);
}

bool ggfs_hf_names_commit(const char *name)
{
    const char *end = name + ggfs_hf_name_end(name);
    if (*end != '@' || strlen(end + 1) != 40)
        return false;
    for (const char *c = end + 1; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
            return false;
    return true;
}

bool ggfs_hf_resolve(const char *name, char **url, char **token, char *why, size_t why_size)
{
    *url = *token = NULL;
    const char *p = name + strlen(GGFS_HF_SCHEME);
    const char *end = name + ggfs_hf_name_end(name);
    const char *rev = *end == '@' ? end + 1 : "main";
    // ORG/REPO/PATH: at least three segments, none empty, no dot segments.
    int segments = 0;
    for (const char *s = p; s <= end; segments++) {
        const char *slash = memchr(s, '/', (size_t)(end - s));
        const char *e = slash ? slash : end;
        const size_t n = (size_t)(e - s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) {
            snprintf(why, why_size, "not an hf://ORG/REPO/FILE[@REVISION] name (empty or dot segment)");
            return false;
        }
        s = e + 1;
    }
    if (segments < 3 || *rev == '\0') {
        snprintf(why, why_size, "not an hf://ORG/REPO/FILE[@REVISION] name");
        return false;
    }
    char *endpoint = ggfs_hf_endpoint();
    const size_t ep_len = endpoint ? strlen(endpoint) : 0;
    const size_t cap = ep_len + 3 * strlen(name) + 64;
    char *out = endpoint ? calloc(1, cap) : NULL;
    if (!out) {
        free(endpoint);
        snprintf(why, why_size, "out of memory");
        return false;
    }
    memcpy(out, endpoint, ep_len);
    free(endpoint);
    bool ok = true;
    const char *s = p;
    for (int i = 0; i < segments && ok; i++) {
        const char *slash = memchr(s, '/', (size_t)(end - s));
        const char *e = slash ? slash : end;
        ok = ggfs_url_append(out, cap, "/") && append_escaped(out, cap, s, (size_t)(e - s));
        if (ok && i == 1) // after ORG/REPO
            ok = ggfs_url_append(out, cap, "/resolve/") && append_escaped(out, cap, rev, strlen(rev));
        s = e + 1;
    }
    if (!ok) {
        free(out);
        snprintf(why, why_size, "cannot encode the name");
        return false;
    }
    *url = out;
    *token = find_token();
    return true;
}

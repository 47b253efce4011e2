/*
 * Where a secret may go (secret_origin.h). An origin is compared as
 * libcurl's URL parser reads it, the parser of the requests themselves,
 * so that no spelling of a URL (user info, case, a default port written
 * or not) reads one way here and another on the wire.
 */
#define _DEFAULT_SOURCE // strcasecmp
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "source/secret_origin.h"

const ggfs_secret_rule ggfs_secret_rules[GGFS_SECRET_KIND_COUNT] = {
    [GGFS_SECRET_HUB_TOKEN] = {"Hub token", "Authorization: Bearer", "HF_ENDPOINT"},
    [GGFS_SECRET_REGISTRY_TOKEN] = {"registry token", "Authorization: Bearer",
                                    "the registry whose challenge it answers"},
    [GGFS_SECRET_AWS_SIGNATURE] = {"AWS signature", "Authorization (SigV4), x-amz-security-token",
                                   "the bucket's endpoint"},
};

bool ggfs_origin_of(const char *url, char *out, size_t cap)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
              (strcasecmp(scheme, "http") == 0 || strcasecmp(scheme, "https") == 0) && host[0];
    if (ok) {
        const int n = snprintf(out, cap, "%s://%s:%s", scheme, host, port);
        ok = n > 0 && (size_t)n < cap;
        for (size_t i = 0; ok && out[i]; i++)
            out[i] = (char)tolower((unsigned char)out[i]);
    }
    curl_free(scheme), curl_free(host), curl_free(port);
    curl_url_cleanup(u);
    if (!ok && cap)
        out[0] = '\0';
    return ok;
}

bool ggfs_secret_bind(ggfs_secret *s, ggfs_secret_kind kind, const char *url, const char *bearer,
                      const struct ggfs_http_auth *auth)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    if (!ggfs_origin_of(url, s->origin, sizeof s->origin))
        return false;
    s->bearer = bearer;
    s->auth = auth;
    return true;
}

bool ggfs_secret_may_go(const ggfs_secret *s, const char *url)
{
    char origin[GGFS_ORIGIN_MAX];
    return s->origin[0] && ggfs_origin_of(url, origin, sizeof origin) && strcmp(origin, s->origin) == 0;
}

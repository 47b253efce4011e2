/*
 * SigV4 for S3 through libcurl (s3_sign.h).
 */
#define _DEFAULT_SOURCE // explicit_bzero
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/s3_sign.h"

// SHA-256 of no bytes: the payload hash of a GET.
#define EMPTY_PAYLOAD_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

struct ggfs_s3_signer {
    ggfs_http_auth auth;   // first: the engine hands it back
    ggfs_s3_credentials cred;
    char sigv4[96];        // "aws:amz:REGION:s3"
    char *token_header;    // "x-amz-security-token: TOKEN", or NULL
};

static bool sign(const ggfs_http_auth *auth, void *curl, struct curl_slist **headers, char *why,
                 size_t why_size)
{
    const ggfs_s3_signer *s = (const ggfs_s3_signer *)auth;
    if (s->cred.anonymous)
        return true;
    struct curl_slist *h = curl_slist_append(*headers, "x-amz-content-sha256: " EMPTY_PAYLOAD_SHA256);
    if (h && s->token_header)
        h = curl_slist_append(h, s->token_header);
    if (!h) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    *headers = h;
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, s->sigv4);
    curl_easy_setopt(curl, CURLOPT_USERNAME, s->cred.access);
    curl_easy_setopt(curl, CURLOPT_PASSWORD, s->cred.secret);
    return true;
}

ggfs_s3_signer *ggfs_s3_signer_new(ggfs_s3_credentials *c)
{
    ggfs_s3_signer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->auth.apply = sign;
    snprintf(s->sigv4, sizeof s->sigv4, "aws:amz:%s:s3", c->region);
    if (c->token) {
        const size_t n = strlen("x-amz-security-token: ") + strlen(c->token) + 1;
        if (!(s->token_header = malloc(n))) {
            free(s);
            return NULL;
        }
        snprintf(s->token_header, n, "x-amz-security-token: %s", c->token);
    }
    s->cred = *c;
    memset(c, 0, sizeof *c);
    return s;
}

const ggfs_http_auth *ggfs_s3_signer_auth(const ggfs_s3_signer *s)
{
    return &s->auth;
}

const char *ggfs_s3_signer_region(const ggfs_s3_signer *s)
{
    return s->cred.region;
}

void ggfs_s3_signer_free(ggfs_s3_signer *s)
{
    if (!s)
        return;
    if (s->token_header) {
        explicit_bzero(s->token_header, strlen(s->token_header));
        free(s->token_header);
    }
    ggfs_s3_credentials_clear(&s->cred);
    free(s);
}

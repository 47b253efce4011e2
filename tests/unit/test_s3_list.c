/*
 * ListObjectsV2 pages from a hostile server, without a server
 * (source/s3_list.h, pages scripted): a continuation token repeated or
 * pages adding nothing refuse the listing, a key listed twice is kept
 * once, a key with '/' past the prefix is the common prefix up to it,
 * names are decoded as S3 encodes them ('+' a space), an empty folder
 * marker is left out and counted, and the key so decoded is encoded again
 * for the request path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "source/s3_list.h"
#include "source/s3_url.h"
#include "util/page_guard.h"

typedef struct server {
    // Page n's body; NULL: the last given is repeated.
    void (*page)(unsigned n, char *body, size_t cap);
    unsigned calls;
} server;

static bool get(void *ctx, const char *url, char **body, size_t *len, char *why, size_t why_size)
{
    (void)url, (void)why, (void)why_size;
    server *s = ctx;
    char text[8192];
    s->page(s->calls++, text, sizeof text);
    *body = strdup(text);
    *len = strlen(text);
    return *body != NULL;
}

#define HEAD "<?xml version=\"1.0\"?><ListBucketResult><EncodingType>url</EncodingType>"

static void same_token(unsigned n, char *body, size_t cap)
{
    snprintf(body, cap, HEAD "<IsTruncated>true</IsTruncated><NextContinuationToken>t</NextContinuationToken>"
                            "<Contents><Key>dir/k%u.gguf</Key><Size>1</Size></Contents></ListBucketResult>", n);
}

static void new_token_empty(unsigned n, char *body, size_t cap)
{
    snprintf(body, cap, HEAD "<IsTruncated>true</IsTruncated><NextContinuationToken>t%u</NextContinuationToken>"
                            "</ListBucketResult>", n);
}

static void new_token_same_key(unsigned n, char *body, size_t cap)
{
    snprintf(body, cap, HEAD "<IsTruncated>true</IsTruncated><NextContinuationToken>t%u</NextContinuationToken>"
                            "<Contents><Key>dir/same.gguf</Key><Size>1</Size></Contents></ListBucketResult>", n);
}

static void hostile_names(unsigned n, char *body, size_t cap)
{
    if (n == 0)
        snprintf(body, cap, HEAD "<IsTruncated>true</IsTruncated><NextContinuationToken>t1</NextContinuationToken>"
                                "<Contents><Key>dir/</Key><Size>0</Size></Contents>"
                                "<Contents><Key>dir/a/b.gguf</Key><Size>1</Size></Contents>"
                                "<Contents><Key>dir/a/c.gguf</Key><Size>1</Size></Contents>"
                                "<Contents><Key>dir/caf%%C3%%A9+model%%2B1.gguf</Key><Size>7</Size></Contents>"
                                "<CommonPrefixes><Prefix>dir/a/</Prefix></CommonPrefixes>"
                                "<CommonPrefixes><Prefix>dir/x/y/</Prefix></CommonPrefixes>"
                                "</ListBucketResult>");
    else // the first page's keys again, and one more
        snprintf(body, cap, HEAD "<IsTruncated>false</IsTruncated>"
                                "<Contents><Key>dir/caf%%C3%%A9+model%%2B1.gguf</Key><Size>7</Size></Contents>"
                                "<Contents><Key>dir/z.gguf</Key><Size>2</Size></Contents>"
                                "<CommonPrefixes><Prefix>dir/a/</Prefix></CommonPrefixes>"
                                "</ListBucketResult>");
}

static void only_marker(unsigned n, char *body, size_t cap)
{
    (void)n;
    snprintf(body, cap, HEAD "<IsTruncated>false</IsTruncated>"
                            "<Contents><Key>dir/</Key><Size>0</Size></Contents></ListBucketResult>");
}

static const char *g_size; // huge_size's <Size>

static void huge_size(unsigned n, char *body, size_t cap)
{
    (void)n;
    snprintf(body, cap, HEAD "<IsTruncated>false</IsTruncated>"
                            "<Contents><Key>dir/m.gguf</Key><Size>%s</Size></Contents></ListBucketResult>", g_size);
}

static char prefix_key[] = "dir";

static ggfs_s3_target target(void)
{
    ggfs_s3_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.bucket, sizeof t.bucket, "b");
    t.key = prefix_key;
    snprintf(t.endpoint.base, sizeof t.endpoint.base, "http://s3.test");
    t.endpoint.path_style = true;
    return t;
}

static int test_a_repeated_token_is_a_loop(void)
{
    const ggfs_s3_target t = target();
    server s = {.page = same_token};
    ggfs_s3_listing l;
    char why[300];
    EXPECT(!ggfs_s3_list_from(get, &s, &t, 100000, 0, &l, why, sizeof why));
    EXPECT(strstr(why, "(a continuation token loop)") != NULL);
    EXPECT_EQ(s.calls, 2);
    return 1;
}

static int test_pages_adding_nothing_are_a_loop(void)
{
    const ggfs_s3_target t = target();
    ggfs_s3_listing l;
    char why[300];
    server empty = {.page = new_token_empty};
    EXPECT(!ggfs_s3_list_from(get, &empty, &t, 100000, 0, &l, why, sizeof why));
    EXPECT(strstr(why, "added no entry (a loop)") != NULL);
    EXPECT_EQ(empty.calls, GGFS_PAGE_STALL_MAX);
    server same = {.page = new_token_same_key};
    EXPECT(!ggfs_s3_list_from(get, &same, &t, 100000, 0, &l, why, sizeof why));
    EXPECT(strstr(why, "(a loop)") != NULL);
    EXPECT_EQ(same.calls, 1 + GGFS_PAGE_STALL_MAX);
    return 1;
}

static int test_hostile_names_become_what_s3_would_list(void)
{
    const ggfs_s3_target t = target();
    server s = {.page = hostile_names};
    ggfs_s3_listing l;
    char why[300];
    EXPECT(ggfs_s3_list_from(get, &s, &t, 100000, 0, &l, why, sizeof why));
    // a/ once (a prefix, and two keys under it), x/ from x/y/.
    EXPECT_EQ(l.n_prefixes, 2);
    EXPECT_STR(l.prefixes[0], "a");
    EXPECT_STR(l.prefixes[1], "x");
    EXPECT_EQ(l.n_objects, 2);
    EXPECT_STR(l.objects[0].name, "caf\xc3\xa9 model+1.gguf");
    EXPECT_STR(l.objects[1].name, "z.gguf");
    EXPECT(l.left_out >= 1); // the marker dir/
    // The key, decoded, is sent as S3 wants it in a path.
    char *url = ggfs_s3_url(&t.endpoint, "b", "dir/caf\xc3\xa9 model+1.gguf", NULL, 0, 1024);
    EXPECT(url != NULL);
    EXPECT_STR(url, "http://s3.test/b/dir/caf%C3%A9%20model%2B1.gguf");
    free(url);
    ggfs_s3_listing_free(&l);
    return 1;
}

/* A prefix whose one key is its folder marker lists nothing, but says it
 * left something out: the store lists it empty, not ENOENT. */
static int test_a_marker_alone_is_counted_as_left_out(void)
{
    const ggfs_s3_target t = target();
    server s = {.page = only_marker};
    ggfs_s3_listing l;
    char why[300];
    EXPECT(ggfs_s3_list_from(get, &s, &t, 100000, 0, &l, why, sizeof why));
    EXPECT_EQ(l.n_objects + l.n_prefixes, 0);
    EXPECT_EQ(l.left_out, 1);
    ggfs_s3_listing_free(&l);
    return 1;
}

/* A size past 2^62, one that wraps 64 bits, or a negative one refuses the
 * listing: no number a server writes is believed past the bound. */
static int test_a_size_past_2_62_is_refused(void)
{
    const ggfs_s3_target t = target();
    static const char *const sizes[] = {"4611686018427387905", "18446744073709551616", "-1"};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        g_size = sizes[i];
        server s = {.page = huge_size};
        ggfs_s3_listing l;
        char why[300] = "";
        EXPECT(!ggfs_s3_list_from(get, &s, &t, 100000, 0, &l, why, sizeof why));
        EXPECT(strstr(why, "<Size>") != NULL);
    }
    g_size = "4611686018427387904";
    server s = {.page = huge_size};
    ggfs_s3_listing l;
    char why[300] = "";
    EXPECT(ggfs_s3_list_from(get, &s, &t, 100000, 0, &l, why, sizeof why));
    EXPECT_EQ(l.n_objects, 1);
    EXPECT_EQ(l.objects[0].size, UINT64_C(1) << 62);
    ggfs_s3_listing_free(&l);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_a_repeated_token_is_a_loop();
    ok &= test_a_size_past_2_62_is_refused();
    ok &= test_pages_adding_nothing_are_a_loop();
    ok &= test_hostile_names_become_what_s3_would_list();
    ok &= test_a_marker_alone_is_counted_as_left_out();
    return ok ? 0 : 1;
}

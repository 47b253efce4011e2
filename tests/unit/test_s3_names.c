/*
 * S3 names, URLs, credentials and error bodies, without a server: the
 * bucket and key of s3:// names (source/s3_url.h); the endpoint chosen and
 * the URL of each addressing style, paths and queries in SigV4's canonical
 * form; the order credentials and the region are looked for in
 * (source/s3_credentials.h); and S3's XML error bodies, hostile ones too,
 * read into one line (source/s3_error.h).
 */
#define _DEFAULT_SOURCE // setenv, mkdtemp
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "source/s3_credentials.h"
#include "source/s3_error.h"
#include "source/s3_url.h"
#include "source/source_table.h"

static void clear_env(void)
{
    static const char *const vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                       "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
                                       "AWS_ENDPOINT_URL_S3"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
    setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
}

static int test_names_split(void)
{
    char bucket[GGFS_S3_BUCKET_MAX], why[128];
    const char *key;
    EXPECT(ggfs_source_is_remote("s3://b/k.gguf"));
    EXPECT_EQ(ggfs_source_name_end("s3://b/k?x#y.gguf"), strlen("s3://b/k?x#y.gguf"));
    EXPECT(ggfs_s3_name_split("s3://my-bucket.1/dir/k.gguf", bucket, &key, why, sizeof why));
    EXPECT(strcmp(bucket, "my-bucket.1") == 0 && strcmp(key, "dir/k.gguf") == 0);
    EXPECT(ggfs_s3_name_split("s3://b", bucket, &key, why, sizeof why));
    EXPECT(strcmp(bucket, "b") == 0 && strcmp(key, "") == 0);
    EXPECT(!ggfs_s3_name_split("s3:///k", bucket, &key, why, sizeof why));
    EXPECT(!ggfs_s3_name_split("s3://b%20/k", bucket, &key, why, sizeof why));
    EXPECT(strstr(why, "byte 1 of the bucket's name") != NULL);
    char long_name[100];
    snprintf(long_name, sizeof long_name, "s3://%064d/k", 0);
    EXPECT(!ggfs_s3_name_split(long_name, bucket, &key, why, sizeof why));
    return 1;
}

static int url_is(const ggfs_s3_endpoint *ep, const char *bucket, const char *key, const ggfs_s3_param *params,
                  size_t n, const char *want)
{
    char *url = ggfs_s3_url(ep, bucket, key, params, n, 1024);
    const int same = url && strcmp(url, want) == 0;
    if (!same)
        fprintf(stderr, "got %s, want %s\n", url ? url : "(null)", want);
    free(url);
    return same;
}

static int test_urls_canonical(void)
{
    clear_env();
    ggfs_s3_endpoint ep;
    char why[128];
    EXPECT(ggfs_s3_endpoint_choose(NULL, "eu-west-3", false, &ep, why, sizeof why));
    EXPECT(!ep.path_style);
    EXPECT(url_is(&ep, "b", "dir/a b+c~\xc3\xa9%.gguf", NULL, 0,
                  "https://b.s3.eu-west-3.amazonaws.com/dir/a%20b%2Bc~%C3%A9%25.gguf"));
    // A bucket with dots goes in the path: AWS's certificates cover one label.
    EXPECT(url_is(&ep, "b.c", "k", NULL, 0, "https://s3.eu-west-3.amazonaws.com/b.c/k"));
    EXPECT(ggfs_s3_endpoint_choose(NULL, "eu-west-3", true, &ep, why, sizeof why));
    EXPECT(url_is(&ep, "b", "k", NULL, 0, "https://s3.eu-west-3.amazonaws.com/b/k"));
    // The query sorted by name, every byte but the unreserved ones escaped.
    const ggfs_s3_param params[] = {
        {"prefix", "a b/c&d="}, {"list-type", "2"}, {"max-keys", NULL}, {"continuation-token", "x+y/z=="},
        {"delimiter", "/"},
    };
    EXPECT(url_is(&ep, "b", "", params, 5,
                  "https://s3.eu-west-3.amazonaws.com/b/?continuation-token=x%2By%2Fz%3D%3D&delimiter=%2F"
                  "&list-type=2&prefix=a%20b%2Fc%26d%3D"));
    // Endpoints: -o endpoint, then AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL, all path-style.
    setenv("AWS_ENDPOINT_URL", "http://general:1/", 1);
    EXPECT(ggfs_s3_endpoint_choose(NULL, "r", false, &ep, why, sizeof why));
    EXPECT(ep.path_style && strcmp(ep.base, "http://general:1") == 0);
    setenv("AWS_ENDPOINT_URL_S3", "http://s3only:2", 1);
    EXPECT(ggfs_s3_endpoint_choose(NULL, "r", false, &ep, why, sizeof why));
    EXPECT(strcmp(ep.base, "http://s3only:2") == 0);
    EXPECT(ggfs_s3_endpoint_choose("https://given//", "r", false, &ep, why, sizeof why));
    EXPECT(strcmp(ep.base, "https://given") == 0);
    EXPECT(url_is(&ep, "b", "k", NULL, 0, "https://given/b/k"));
    EXPECT(!ggfs_s3_endpoint_choose("ftp://x", "r", false, &ep, why, sizeof why));
    EXPECT(strstr(why, "-o endpoint") != NULL);
    clear_env();
    return 1;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL);
    fputs(text, f);
    fclose(f);
    return 1;
}

static int test_credentials_order(void)
{
    clear_env();
    char dir[] = "/tmp/test_s3_names.XXXXXX", creds[64], config[64], why[256];
    EXPECT(mkdtemp(dir) != NULL);
    snprintf(creds, sizeof creds, "%s/credentials", dir);
    snprintf(config, sizeof config, "%s/config", dir);
    EXPECT(write_file(creds, "# comment\n[default]\naws_access_key_id = AKDEF\naws_secret_access_key = SKDEF\n"
                             "[p]\n  aws_access_key_id=AKP  \n; x\naws_secret_access_key = SKP\n"
                             "aws_session_token = TP\n[half]\naws_access_key_id = AKH\n"));
    EXPECT(write_file(config, "[default]\nregion = eu-north-1\n[profile p]\nregion = ap-south-1\n[p]\nregion = wrong\n"));
    ggfs_s3_credentials c;
    // Nothing anywhere: refused, naming where it looked.
    EXPECT(!ggfs_s3_credentials_load(false, &c, why, sizeof why));
    EXPECT(strstr(why, "AWS_ACCESS_KEY_ID") && strstr(why, "-o no_sign_request"));
    // Unsigned: only the region, us-east-1 by default.
    EXPECT(ggfs_s3_credentials_load(true, &c, why, sizeof why));
    EXPECT(c.anonymous && strcmp(c.region, "us-east-1") == 0);
    ggfs_s3_credentials_clear(&c);
    setenv("AWS_SHARED_CREDENTIALS_FILE", creds, 1);
    setenv("AWS_CONFIG_FILE", config, 1);
    EXPECT(ggfs_s3_credentials_load(false, &c, why, sizeof why));
    EXPECT(strcmp(c.access, "AKDEF") == 0 && strcmp(c.secret, "SKDEF") == 0 && !c.token);
    EXPECT(strcmp(c.region, "eu-north-1") == 0);
    ggfs_s3_credentials_clear(&c);
    setenv("AWS_PROFILE", "p", 1);
    EXPECT(ggfs_s3_credentials_load(false, &c, why, sizeof why));
    EXPECT(strcmp(c.access, "AKP") == 0 && strcmp(c.secret, "SKP") == 0 && c.token && strcmp(c.token, "TP") == 0);
    EXPECT(strcmp(c.region, "ap-south-1") == 0);
    ggfs_s3_credentials_clear(&c);
    EXPECT(c.token == NULL && c.secret[0] == '\0');
    // The environment's region, then its key pair, win over the files.
    setenv("AWS_DEFAULT_REGION", "sa-east-1", 1);
    EXPECT(ggfs_s3_credentials_load(false, &c, why, sizeof why));
    EXPECT(strcmp(c.region, "sa-east-1") == 0);
    ggfs_s3_credentials_clear(&c);
    setenv("AWS_REGION", "ca-central-1", 1);
    setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
    EXPECT(!ggfs_s3_credentials_load(false, &c, why, sizeof why));
    EXPECT(strcmp(why, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not") == 0);
    setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
    EXPECT(ggfs_s3_credentials_load(false, &c, why, sizeof why));
    EXPECT(strcmp(c.access, "AKENV") == 0 && !c.token && strcmp(c.region, "ca-central-1") == 0);
    ggfs_s3_credentials_clear(&c);
    // Half a pair in the profile is refused, and the message holds no secret.
    clear_env();
    setenv("AWS_SHARED_CREDENTIALS_FILE", creds, 1);
    setenv("AWS_PROFILE", "half", 1);
    EXPECT(!ggfs_s3_credentials_load(false, &c, why, sizeof why));
    EXPECT(strstr(why, "profile [half] lacks aws_secret_access_key") != NULL);
    unlink(creds);
    unlink(config);
    rmdir(dir);
    clear_env();
    return 1;
}

static int explains(long status, const char *body, const char *region, const char *want)
{
    char why[256];
    ggfs_s3_error_explain("b", status, body, body ? strlen(body) : 0, region, why, sizeof why);
    if (strcmp(why, want) != 0)
        fprintf(stderr, "got  %s\nwant %s\n", why, want);
    return strcmp(why, want) == 0;
}

static int test_error_bodies(void)
{
    EXPECT(explains(403, "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code><Message>m</Message></Error>",
                    "", "bucket 'b': 403 SignatureDoesNotMatch: the signature does not match: is the secret key right?"));
    EXPECT(explains(301, "<Error><Code>PermanentRedirect</Code><Message>m</Message></Error>", "eu-west-3",
                    "bucket 'b': 301 PermanentRedirect: the bucket is in region eu-west-3 (set AWS_REGION=eu-west-3)"));
    EXPECT(explains(400, "<Error><Code>AuthorizationHeaderMalformed</Code><Region>ap-east-1</Region></Error>", "",
                    "bucket 'b': 400 AuthorizationHeaderMalformed: the bucket is in region ap-east-1 (set AWS_REGION=ap-east-1)"));
    EXPECT(explains(400, "<Error><Code>Other</Code><Message>S3 &amp; its words</Message></Error>", "",
                    "bucket 'b': 400 Other: S3 & its words"));
    // Not S3's: no code to name.
    EXPECT(explains(403, NULL, "", "bucket 'b': HTTP 403, without S3's error code"));
    EXPECT(explains(502, "<html>bad gateway</html>", "", "bucket 'b': HTTP 502, without S3's error code"));
    EXPECT(explains(403, "<Error><Code>Cut", "", "bucket 'b': HTTP 403, without S3's error code"));
    // Hostile bodies: an entity bomb, a huge code, NUL inside.
    ggfs_s3_error e;
    const char *bomb = "<?xml version=\"1.0\"?><!DOCTYPE E [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
                       "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\"><!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">]>"
                       "<Error><Code>&d;</Code></Error>";
    ggfs_s3_error_parse(bomb, strlen(bomb), &e);
    EXPECT(strlen(e.code) < sizeof e.code);
    char big[10000];
    int n = snprintf(big, sizeof big, "<Error><Code>");
    memset(big + n, 'A', 9000);
    snprintf(big + n + 9000, sizeof big - (size_t)n - 9000, "</Code></Error>");
    EXPECT(ggfs_s3_error_parse(big, strlen(big), &e));
    EXPECT_EQ(strlen(e.code), sizeof e.code - 1);
    const char nul[] = "<Error><Code>A\0B</Code></Error>";
    EXPECT(!ggfs_s3_error_parse(nul, sizeof nul - 1, &e));
    EXPECT(e.code[0] == '\0');
    return 1;
}

int main(void)
{
    const int ok = test_names_split() & test_urls_canonical() & test_credentials_order() & test_error_bodies();
    return ok ? 0 : 1;
}

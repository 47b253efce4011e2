/*
 * Lists an S3 prefix the way a folder mount will, for the tests: one line
 * per object ("obj NAME SIZE ETAG") and per common prefix ("dir NAME"),
 * in S3's order, then "pages N left_out N capped 0|1" on stderr. Names
 * are printed with %-escapes for bytes outside printable ASCII.
 *
 *   usage: s3_ls [-k PAGE_KEYS] [-c CAP] [-e ENDPOINT] [-t TIMEOUT_S] [-u] s3://BUCKET[/PREFIX]
 *
 * -u sends requests unsigned (-o no_sign_request). Exit status: 0 when
 * listed, 2 when not (the message on stderr, as the daemon prints it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/remote.h"
#include "source/s3_list.h"
#include "source/s3_target.h"

static void print_name(const char *s)
{
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c > 0x20 && c < 0x7f && c != '%')
            putchar(c);
        else
            printf("%%%02X", c);
    }
}

int main(int argc, char **argv)
{
    unsigned page_keys = 0, timeout_s = 5;
    size_t cap = 100000;
    ggfs_remote_options opts = {.cache_mb = 16};
    int c;
    while ((c = getopt(argc, argv, "k:c:e:t:u")) != -1) {
        switch (c) {
        case 'k':
            page_keys = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'c':
            cap = strtoul(optarg, NULL, 10);
            break;
        case 'e':
            opts.s3_endpoint = optarg;
            break;
        case 't':
            timeout_s = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'u':
            opts.s3_no_sign = true;
            break;
        default:
            return 2;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: s3_ls [-k PAGE_KEYS] [-c CAP] [-e ENDPOINT] [-t TIMEOUT_S] [-u] s3://BUCKET[/PREFIX]\n");
        return 2;
    }
    const char *name = argv[optind];
    opts.timeout_s = timeout_s;
    char why[256];
    ggfs_remote *remote = ggfs_remote_new(&opts, why, sizeof why);
    if (!remote) {
        fprintf(stderr, "s3_ls: %s\n", why);
        return 2;
    }
    ggfs_s3_target t;
    ggfs_s3_listing l;
    int status = 2;
    if (!ggfs_s3_target_open(name, &opts, &t, why, sizeof why)) {
        fprintf(stderr, "gguf-fs: %s: %s\n", name, why);
    } else {
        if (!ggfs_s3_list(remote, &t, cap, page_keys, &l, why, sizeof why)) {
            fprintf(stderr, "gguf-fs: %s: %s\n", name, why);
        } else {
            for (size_t i = 0; i < l.n_objects; i++) {
                printf("obj ");
                print_name(l.objects[i].name);
                printf(" %llu %s\n", (unsigned long long)l.objects[i].size, l.objects[i].etag);
            }
            for (size_t i = 0; i < l.n_prefixes; i++) {
                printf("dir ");
                print_name(l.prefixes[i]);
                printf("\n");
            }
            fprintf(stderr, "pages %zu left_out %zu capped %d\n", l.pages, l.left_out, l.capped);
            ggfs_s3_listing_free(&l);
            status = 0;
        }
        ggfs_s3_target_close(&t);
    }
    ggfs_remote_free(remote);
    return status;
}

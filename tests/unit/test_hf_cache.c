/*
 * The hf/ view of a Hugging Face hub cache: repository names, refs read
 * as untrusted text (never a path), snapshots followed only inside the
 * repository and never back up the tree, and the blobs left out of the
 * mirror.
 */
#include "tmptree.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>

#include "catalog/beneath.h"
#include "catalog/hf_cache.h"
#include "catalog/hf_index.h"
#include "catalog/scan.h"
#include "check.h"
#include "scan_names.h"

#define C1 "4d1e6f0c2b3a59788a6e0f1d2c3b4a5968778695"
#define C2 "9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d"
#define C3 "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"
#define COUT "e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0"
#define TINY "hub/models--org--tiny"
#define BAD "hub/models--org--bad"

static char *folder_path, *outside;
static ggfs_folder folder;

/* The folder:
 *
 *   hub/models--org--tiny/{blobs/{b1,b2}, refs/{main,v1,refs/pr/1},
 *                          snapshots/{C1/m.gguf, C2/{m.gguf, sub/n.gguf}}}
 *   hub/models--org--bad/   hostile refs and snapshots
 *   hub/models--other--x/snapshots/C3/x.gguf    blobs in the shared store
 *   hub/blobs/{.huggingface-shared-blobs, ab/abcd}
 *   hub/models--noorg/, hub/models--a--b--c/, hub/models--..--x/, hub/models--org--/
 *   hub/datasets--org--data/{blobs,snapshots}
 *   hub/models--org--nosnap/blobs/              no snapshots/: not a repository
 *   real/{hf/, models--org--tiny -> ../hub/models--org--tiny}   a real hf/
 *   loops/models--org--up -> ..                 a repository leading back
 *   plain/blobs/x.gguf                          a blobs/ of no hub cache
 */
static int build(void)
{
    folder_path = tmptree_new();
    outside = tmptree_new();
    EXPECT(folder_path && outside);
    const char *F = folder_path;
    EXPECT(tmptree_gguf(F, TINY "/blobs/b1"));
    EXPECT(tmptree_gguf(F, TINY "/blobs/b2"));
    EXPECT(tmptree_dir(F, TINY "/snapshots/" C1));
    EXPECT(tmptree_link(F, TINY "/snapshots/" C1 "/m.gguf", "../../blobs/b1"));
    EXPECT(tmptree_dir(F, TINY "/snapshots/" C2 "/sub"));
    EXPECT(tmptree_link(F, TINY "/snapshots/" C2 "/m.gguf", "../../blobs/b2"));
    EXPECT(tmptree_link(F, TINY "/snapshots/" C2 "/sub/n.gguf", "../../../blobs/b1"));
    EXPECT(tmptree_text(F, TINY "/refs/main", C2));
    EXPECT(tmptree_text(F, TINY "/refs/v1", C1 "\n"));
    EXPECT(tmptree_text(F, TINY "/refs/refs/pr/1", C1));
    // Hostile: refs that are no commit, snapshots that lead elsewhere.
    EXPECT(tmptree_gguf(F, BAD "/blobs/b1"));
    EXPECT(tmptree_dir(F, BAD "/snapshots/" C1));
    EXPECT(tmptree_link(F, BAD "/snapshots/" C1 "/m.gguf", "../../blobs/b1"));
    EXPECT(tmptree_link(F, BAD "/snapshots/" COUT, "../../../plain"));
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s", outside);
    EXPECT(tmptree_link(F, BAD "/snapshots/" C3, target));
    EXPECT(tmptree_link(F, BAD "/snapshots/loop", "loop"));
    EXPECT(tmptree_dir(F, BAD "/snapshots/main"));
    EXPECT(tmptree_text(F, BAD "/refs/main", C2)); // hidden by the snapshot called main
    EXPECT(tmptree_text(F, BAD "/refs/ok", C1));
    EXPECT(tmptree_text(F, BAD "/refs/crlf", C1 "\r\n"));
    EXPECT(tmptree_text(F, BAD "/refs/garbage", "not a commit"));
    EXPECT(tmptree_text(F, BAD "/refs/traversal", "../../../../etc/passwd"));
    EXPECT(tmptree_text(F, BAD "/refs/upper", "4D1E6F0C2B3A59788A6E0F1D2C3B4A5968778695"));
    EXPECT(tmptree_text(F, BAD "/refs/gone", C2));
    EXPECT(tmptree_text(F, BAD "/refs/outside", COUT));
    EXPECT(tmptree_text(F, BAD "/refs/escape", C3));
    EXPECT(tmptree_file(F, BAD "/refs/nul", C1 "\0", 41));
    EXPECT(tmptree_file(F, BAD "/refs/empty", "", 0));
    EXPECT(tmptree_text(F, BAD "/refs/new\nline", "zz"));
    static char big[1 << 16];
    memset(big, '\n', sizeof big);
    memcpy(big, C1, 40);
    EXPECT(tmptree_file(F, BAD "/refs/huge", big, sizeof big));
    EXPECT(tmptree_fifo(F, BAD "/refs/fifo"));
    EXPECT(tmptree_link(F, BAD "/refs/loop", "."));
    EXPECT(tmptree_link(F, BAD "/refs/dangling", "nowhere"));
    snprintf(target, sizeof target, "%s/ref", outside);
    EXPECT(tmptree_text(outside, "ref", C1));
    EXPECT(tmptree_link(F, BAD "/refs/linked-out", target));
    EXPECT(tmptree_link(F, BAD "/refs/linked-in", "ok"));
    EXPECT(tmptree_text(F, BAD "/refs/.hidden", C1));
    // The store newer huggingface_hub shares between repositories.
    EXPECT(tmptree_text(F, "hub/blobs/.huggingface-shared-blobs", "1\n"));
    EXPECT(tmptree_gguf(F, "hub/blobs/ab/abcd"));
    EXPECT(tmptree_dir(F, "hub/models--other--x/blobs"));
    EXPECT(tmptree_link(F, "hub/models--other--x/blobs/e1", "../../blobs/ab/abcd"));
    EXPECT(tmptree_dir(F, "hub/models--other--x/snapshots/" C3));
    EXPECT(tmptree_link(F, "hub/models--other--x/snapshots/" C3 "/x.gguf", "../../blobs/e1"));
    // Names that are no model repository with an ORG.
    EXPECT(tmptree_dir(F, "hub/models--noorg/snapshots/" C1));
    EXPECT(tmptree_dir(F, "hub/models--a--b--c/snapshots/" C1));
    EXPECT(tmptree_dir(F, "hub/models--..--x/snapshots/" C1));
    EXPECT(tmptree_dir(F, "hub/models--org--/snapshots/" C1));
    EXPECT(tmptree_dir(F, "hub/datasets--org--data/snapshots/" C1));
    EXPECT(tmptree_gguf(F, "hub/datasets--org--data/blobs/d1"));
    EXPECT(tmptree_gguf(F, "hub/models--org--nosnap/blobs/n1"));
    EXPECT(tmptree_dir(F, "real/hf"));
    EXPECT(tmptree_link(F, "real/models--org--tiny", "../" TINY));
    EXPECT(tmptree_dir(F, "loops"));
    EXPECT(tmptree_link(F, "loops/models--org--up", ".."));
    EXPECT(tmptree_dir(F, "loops/snapshots/" C1));
    EXPECT(tmptree_gguf(F, "plain/blobs/x.gguf"));
    EXPECT(tmptree_gguf(F, "plain/y.gguf"));
    EXPECT_EQ(ggfs_folder_open(&folder, F, NULL), 0);
    return 1;
}

static int test_repository_names(void)
{
    char org[NAME_MAX + 1], name[NAME_MAX + 1];
    EXPECT(ggfs_hf_model_repo("models--bartowski--Llama-3.2-1B-Instruct-GGUF", org, name));
    EXPECT_STR(org, "bartowski");
    EXPECT_STR(name, "Llama-3.2-1B-Instruct-GGUF");
    EXPECT(ggfs_hf_model_repo("models--a.b--c_d.e", org, name));
    EXPECT_STR(org, "a.b");
    EXPECT_STR(name, "c_d.e");
    EXPECT(!ggfs_hf_model_repo("models--gpt2", org, name));         // no ORG
    EXPECT(!ggfs_hf_model_repo("models--a--b--c", org, name));      // the Hub allows no "--"
    EXPECT(!ggfs_hf_model_repo("models----x", org, name));
    EXPECT(!ggfs_hf_model_repo("models--org--", org, name));
    EXPECT(!ggfs_hf_model_repo("models--..--x", org, name));
    EXPECT(!ggfs_hf_model_repo("models--org--.", org, name));
    EXPECT(!ggfs_hf_model_repo("datasets--org--data", org, name));
    EXPECT(!ggfs_hf_model_repo("Models--org--x", org, name));
    EXPECT(ggfs_hf_is_repo("models--gpt2"));
    EXPECT(ggfs_hf_is_repo("datasets--org--data"));
    EXPECT(ggfs_hf_is_repo("spaces--org--app"));
    EXPECT(!ggfs_hf_is_repo("models--"));
    EXPECT(!ggfs_hf_is_repo("blobs"));
    return 1;
}

/* parse_says DATA LEN SIZE OFFSET WHY: the ref is refused at that offset
 * with a reason containing why. */
static int parse_says(const char *data, size_t len, unsigned long long size, size_t want_off, const char *want)
{
    char commit[GGFS_HF_COMMIT_HEX + 1], why[128];
    size_t off = 999;
    EXPECT(!ggfs_hf_parse_ref(data, len, size, commit, &off, why, sizeof why));
    if (off != want_off || !strstr(why, want))
        fprintf(stderr, "ref \"%.*s\": offset %zu \"%s\", expected %zu \"%s\"\n", (int)len, data, off, why,
                want_off, want);
    EXPECT_EQ(off, want_off);
    EXPECT(strstr(why, want) != NULL);
    return 1;
}

static int test_refs_hold_a_commit_and_nothing_else(void)
{
    char commit[GGFS_HF_COMMIT_HEX + 1], why[128];
    size_t off;
    EXPECT(ggfs_hf_parse_ref(C1, 40, 40, commit, &off, why, sizeof why));
    EXPECT_STR(commit, C1);
    EXPECT(ggfs_hf_parse_ref(C1 "\n", 41, 41, commit, &off, why, sizeof why));
    EXPECT(ggfs_hf_parse_ref(C1 " \t\r\n", 44, 44, commit, &off, why, sizeof why));
    char max[GGFS_HF_MAX_REF + 1];
    memset(max, ' ', sizeof max);
    memcpy(max, C1, 40);
    EXPECT(ggfs_hf_parse_ref(max, GGFS_HF_MAX_REF, GGFS_HF_MAX_REF, commit, &off, why, sizeof why));
    EXPECT(parse_says(max, GGFS_HF_MAX_REF + 1, GGFS_HF_MAX_REF + 1, GGFS_HF_MAX_REF, "65 bytes, more than"));
    EXPECT(parse_says(max, GGFS_HF_MAX_REF + 1, 1u << 30, GGFS_HF_MAX_REF, "1073741824 bytes"));
    EXPECT(parse_says("", 0, 0, 0, "empty"));
    EXPECT(parse_says(C1, 12, 12, 12, "ends after 12 of the 40 hex digits"));
    EXPECT(parse_says("4D1E", 4, 4, 1, "byte 0x44 ('D') is not a lower-case hex digit"));
    EXPECT(parse_says("../../etc/passwd", 16, 16, 0, "byte 0x2e ('.')"));
    EXPECT(parse_says("4d1e/", 5, 5, 4, "byte 0x2f ('/')"));
    EXPECT(parse_says("4d\n", 3, 3, 2, "byte 0x0a is not"));
    EXPECT(parse_says(C1 "\0", 41, 41, 40, "bytes after the commit hash"));
    EXPECT(parse_says(C1 "\nx", 42, 42, 41, "bytes after the commit hash"));
    EXPECT(parse_says(C1 C1, 80, 80, 40, "bytes after the commit hash"));
    return 1;
}

static const char *const TOP[] = {"", "hub"};

static int test_the_view_names_repositories_refs_and_commits(void)
{
    ggfs_scan s;
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "", TOP, 2, &s), 0);
    EXPECT_STR(names_of(&s), "org other");
    const ggfs_scan_entry *e = ggfs_scan_find(&s, "org");
    EXPECT(e && e->kind == GGFS_SCAN_HF);
    EXPECT_STR(e->path, "hub");
    EXPECT_STR(e->real, "org");
    ggfs_scan_free(&s);

    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org", TOP, 2, &s), 0);
    EXPECT_STR(names_of(&s), "bad tiny"); // not nosnap, which has no snapshots/
    EXPECT_STR(ggfs_scan_find(&s, "tiny")->real, "org/tiny");
    ggfs_scan_free(&s);

    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/tiny", TOP, 2, &s), 0);
    EXPECT_STR(names_of(&s), C1 " " C2 " main refs v1");
    e = ggfs_scan_find(&s, "main");
    EXPECT(e && e->kind == GGFS_SCAN_DIR && !e->error);
    EXPECT_STR(e->path, TINY "/snapshots/" C2);
    EXPECT_STR(e->real, TINY "/snapshots/" C2);
    EXPECT_STR(ggfs_scan_find(&s, "v1")->path, TINY "/snapshots/" C1);
    EXPECT_STR(ggfs_scan_find(&s, C1)->real, TINY "/snapshots/" C1);
    e = ggfs_scan_find(&s, "refs");
    EXPECT(e && e->kind == GGFS_SCAN_HF);
    EXPECT_STR(e->real, "org/tiny/refs");
    ggfs_scan_free(&s);

    // refs/refs/pr/1 is the ref "refs/pr/1".
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/tiny/refs", TOP, 2, &s), 0);
    EXPECT_STR(names_of(&s), "pr");
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/tiny/refs/pr", TOP, 2, &s), 0);
    EXPECT_STR(names_of(&s), "1");
    EXPECT_STR(s.entries[0].path, TINY "/snapshots/" C1);
    ggfs_scan_free(&s);

    // A commit (or ref) is its snapshot: listed as any directory, with
    // models by the snapshot's names and subfolders kept.
    const char *anc[] = {"", "hub", TINY "/snapshots/" C2};
    EXPECT_EQ(ggfs_scan_dir(&folder, TINY "/snapshots/" C2, anc, 3, &s), 0);
    EXPECT(ggfs_hf_tidy_scan(&folder, TINY "/snapshots/" C2, &s));
    EXPECT_STR(names_of(&s), "m.gguf sub");
    EXPECT_STR(ggfs_scan_find(&s, "m.gguf")->path, TINY "/snapshots/" C2 "/m.gguf");
    EXPECT_STR(ggfs_scan_find(&s, "m.gguf")->real, TINY "/blobs/b2");
    ggfs_scan_free(&s);

    // Blobs in the shared store are followed like any link in the folder.
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "other/x", TOP, 2, &s), 0);
    EXPECT_STR(names_of(&s), C3);
    ggfs_scan_free(&s);

    // Places nothing is under.
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "nobody", TOP, 2, &s), ENOENT);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/none", TOP, 2, &s), ENOENT);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/nosnap", TOP, 2, &s), ENOENT);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/", TOP, 2, &s), ENOENT);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/tiny/", TOP, 2, &s), ENOENT);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/tiny/main", TOP, 2, &s), ENOENT); // a ref, not a directory of refs
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/tiny/refs//pr", TOP, 2, &s), ENOENT);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/tiny/../../x", TOP, 2, &s), ENOENT);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/a--b", TOP, 2, &s), ENOENT);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "../hub/org/tiny", TOP, 2, &s), ENOENT);
    return 1;
}

/* The entry's error contains want, on one line, naming the ref. */
static int error_says(const ggfs_scan *s, const char *name, const char *want)
{
    const ggfs_scan_entry *e = ggfs_scan_find(s, name);
    EXPECT(e != NULL);
    EXPECT(e->kind == GGFS_SCAN_MODEL);
    EXPECT(e->error != NULL);
    if (!strstr(e->error, want))
        fprintf(stderr, "%s: error \"%s\" lacks \"%s\"\n", name, e->error, want);
    EXPECT(strstr(e->error, want) != NULL);
    EXPECT(strchr(e->error, '\n') == NULL);
    EXPECT(strstr(e->error, BAD "/refs/") == e->error);
    return 1;
}

static int test_hostile_refs_are_errors_never_paths(void)
{
    ggfs_scan s;
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/bad", TOP, 2, &s), 0);
    EXPECT_STR(names_of(&s), C1 " crlf empty escape garbage gone huge linked-in main new\nline nul ok outside "
                             "traversal upper");
    // Good refs, with a newline or not, or a link to one.
    EXPECT(ggfs_scan_find(&s, "ok")->kind == GGFS_SCAN_DIR);
    EXPECT_STR(ggfs_scan_find(&s, "linked-in")->real, BAD "/snapshots/" C1);
    EXPECT_STR(ggfs_scan_find(&s, "crlf")->real, BAD "/snapshots/" C1);
    // A snapshot called main hides the ref main.
    EXPECT_STR(ggfs_scan_find(&s, "main")->real, BAD "/snapshots/main");
    EXPECT(error_says(&s, "garbage", "refs/garbage: offset 0x0: byte 0x6e ('n') is not a lower-case hex digit"));
    EXPECT(error_says(&s, "traversal", "offset 0x0: byte 0x2e ('.')"));
    EXPECT(error_says(&s, "upper", "offset 0x1: byte 0x44 ('D')"));
    EXPECT(error_says(&s, "nul", "offset 0x28: bytes after the commit hash"));
    EXPECT(error_says(&s, "empty", "offset 0x0: empty, not a commit hash"));
    EXPECT(error_says(&s, "huge", "offset 0x40: 65536 bytes, more than the 64 a ref may have"));
    EXPECT(error_says(&s, "gone", "offset 0x0: commit " C2 ": " BAD "/snapshots/" C2 ": No such file or directory"));
    EXPECT(error_says(&s, "outside", "commit " COUT ": " BAD "/snapshots/" COUT ": leads out of the repository's snapshots"));
    EXPECT(error_says(&s, "escape", "commit " C3 ": " BAD "/snapshots/" C3 ": leads out of the folder"));
    EXPECT(error_says(&s, "new\nline", BAD "/refs/new?line: offset 0x0: byte 0x7a ('z')"));
    // The error entry is the ref file.
    EXPECT_STR(ggfs_scan_find(&s, "gone")->path, BAD "/refs/gone");
    // Snapshots outside snapshots/ or the folder, loops, FIFOs, links out
    // of the folder or dangling, refs directories that are links, hidden
    // names: no entry.
    EXPECT(ggfs_scan_find(&s, COUT) == NULL);
    EXPECT(ggfs_scan_find(&s, C3) == NULL);
    EXPECT(ggfs_scan_find(&s, "loop") == NULL);
    EXPECT(ggfs_scan_find(&s, "fifo") == NULL);
    EXPECT(ggfs_scan_find(&s, "dangling") == NULL);
    EXPECT(ggfs_scan_find(&s, "linked-out") == NULL);
    EXPECT(ggfs_scan_find(&s, ".hidden") == NULL);
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/bad/loop", TOP, 2, &s), ENOENT);
    return 1;
}

static int test_repositories_leading_back_are_left_out(void)
{
    // loops/models--org--up -> .. is the folder, which holds loops/.
    const char *anc[] = {"", "loops"};
    ggfs_scan s;
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "loops", "", anc, 2, &s), 0);
    EXPECT_STR(names_of(&s), "");
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "loops", "org/up", anc, 2, &s), ENOENT);
    // Nor is it a repository with snapshots to the scan: no hf/ there.
    EXPECT_EQ(ggfs_scan_dir(&folder, "loops", anc, 2, &s), 0);
    EXPECT(ggfs_hf_tidy_scan(&folder, "loops", &s));
    EXPECT_STR(names_of(&s), "snapshots");
    ggfs_scan_free(&s);
    // A repository holding a directory shown above (here one of its own
    // snapshots: a hub cache inside a snapshot, linking back to the
    // repository) is left out, or the view would go round for ever.
    const char *anc2[] = {"", "hub", TINY "/snapshots/" C1, TINY "/snapshots/" C1 "/inner"};
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org/tiny", anc2, 4, &s), ENOENT);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "hub", "org", anc2, 4, &s), 0);
    EXPECT_STR(names_of(&s), "bad");
    ggfs_scan_free(&s);
    return 1;
}

static int test_scans_gain_hf_and_lose_the_blobs(void)
{
    ggfs_scan s;
    // The hub cache: hf/ beside the repositories, the shared store gone.
    EXPECT_EQ(ggfs_scan_dir(&folder, "hub", TOP, 2, &s), 0);
    EXPECT(ggfs_scan_find(&s, "blobs") && !ggfs_scan_find(&s, "hf")); // the mirror's own scan
    EXPECT(ggfs_hf_tidy_scan(&folder, "hub", &s));
    EXPECT_STR(names_of(&s), "datasets--org--data hf models--..--x models--a--b--c models--noorg "
                             "models--org-- models--org--bad models--org--nosnap models--org--tiny "
                             "models--other--x");
    const ggfs_scan_entry *e = ggfs_scan_find(&s, "hf");
    EXPECT(e && e->kind == GGFS_SCAN_HF);
    EXPECT_STR(e->path, "hub");
    EXPECT_STR(e->real, "");
    ggfs_scan_free(&s);
    // A repository: refs and snapshots, no blobs; datasets alike; one
    // without snapshots/ is no repository and keeps them.
    const char *anc[] = {"", "hub", TINY};
    EXPECT_EQ(ggfs_scan_dir(&folder, TINY, anc, 3, &s), 0);
    EXPECT(ggfs_hf_tidy_scan(&folder, TINY, &s));
    EXPECT_STR(names_of(&s), "refs snapshots");
    ggfs_scan_free(&s);
    const char *anc2[] = {"", "hub", "hub/datasets--org--data"};
    EXPECT_EQ(ggfs_scan_dir(&folder, "hub/datasets--org--data", anc2, 3, &s), 0);
    EXPECT(ggfs_hf_tidy_scan(&folder, "hub/datasets--org--data", &s));
    EXPECT_STR(names_of(&s), "snapshots");
    ggfs_scan_free(&s);
    const char *anc3[] = {"", "hub", "hub/models--org--nosnap"};
    EXPECT_EQ(ggfs_scan_dir(&folder, "hub/models--org--nosnap", anc3, 3, &s), 0);
    EXPECT(ggfs_hf_tidy_scan(&folder, "hub/models--org--nosnap", &s));
    EXPECT_STR(names_of(&s), "blobs");
    ggfs_scan_free(&s);
    // A real hf/ wins over the view; a repository reached by a link counts.
    const char *anc4[] = {"", "real"};
    EXPECT_EQ(ggfs_scan_dir(&folder, "real", anc4, 2, &s), 0);
    EXPECT(ggfs_hf_tidy_scan(&folder, "real", &s));
    EXPECT_STR(names_of(&s), "hf models--org--tiny");
    EXPECT(ggfs_scan_find(&s, "hf")->kind == GGFS_SCAN_DIR);
    ggfs_scan_free(&s);
    char real_hf[PATH_MAX];
    snprintf(real_hf, sizeof real_hf, "%s/real/hf", folder_path);
    EXPECT(rmdir(real_hf) == 0);
    EXPECT_EQ(ggfs_scan_dir(&folder, "real", anc4, 2, &s), 0);
    EXPECT(ggfs_hf_tidy_scan(&folder, "real", &s));
    EXPECT_STR(names_of(&s), "hf models--org--tiny");
    EXPECT(ggfs_scan_find(&s, "hf")->kind == GGFS_SCAN_HF);
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_hf_list(&folder, NULL, "real", "org/tiny", anc4, 2, &s), 0);
    EXPECT_STR(ggfs_scan_find(&s, "main")->real, TINY "/snapshots/" C2);
    ggfs_scan_free(&s);
    // A blobs/ of no hub cache is mirrored as any directory.
    const char *anc5[] = {"", "plain"};
    EXPECT_EQ(ggfs_scan_dir(&folder, "plain", anc5, 2, &s), 0);
    EXPECT(ggfs_hf_tidy_scan(&folder, "plain", &s));
    EXPECT_STR(names_of(&s), "blobs y.gguf");
    ggfs_scan_free(&s);
    return 1;
}

static int test_hub_cache_at_the_folder_itself(void)
{
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/hub", folder_path);
    ggfs_folder f;
    EXPECT_EQ(ggfs_folder_open(&f, sub, NULL), 0);
    const char *anc[] = {""};
    ggfs_scan s;
    EXPECT_EQ(ggfs_scan_dir(&f, "", anc, 1, &s), 0);
    EXPECT(ggfs_hf_tidy_scan(&f, "", &s));
    EXPECT(ggfs_scan_find(&s, "hf") && ggfs_scan_find(&s, "hf")->kind == GGFS_SCAN_HF);
    EXPECT(ggfs_scan_find(&s, "blobs") == NULL);
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_hf_list(&f, NULL, "", "org/tiny", anc, 1, &s), 0);
    EXPECT_STR(ggfs_scan_find(&s, "v1")->path, "models--org--tiny/snapshots/" C1);
    ggfs_scan_free(&s);
    ggfs_folder_close(&f);
    return 1;
}

/* Sets the mtime of the folder's directory rel to `ago` seconds ago. */
static int age(const char *rel, int ago)
{
    char p[PATH_MAX];
    struct timespec now, times[2];
    snprintf(p, sizeof p, "%s/%s", folder_path, rel);
    clock_gettime(CLOCK_REALTIME, &now);
    times[0] = times[1] = (struct timespec){.tv_sec = now.tv_sec - ago, .tv_nsec = 0};
    EXPECT(utimensat(AT_FDCWD, p, times, 0) == 0);
    return 1;
}

static int test_the_index_reads_a_hub_once_while_it_is_unchanged(void)
{
    EXPECT(tmptree_dir(folder_path, "big/models--ab--x/snapshots/" C1));
    EXPECT(tmptree_dir(folder_path, "big/models--a--y/snapshots/" C1));
    EXPECT(tmptree_dir(folder_path, "big/models--a--z/snapshots/" C1));
    EXPECT(tmptree_dir(folder_path, "big/models--b--w/snapshots/" C1));
    EXPECT(tmptree_dir(folder_path, "big/models--a--b--c"));
    EXPECT(tmptree_dir(folder_path, "big/other"));
    ggfs_hf_index *idx = ggfs_hf_index_new();
    EXPECT(idx);
    char **names;
    size_t n;
    // Just changed: read, but not trusted (a change in the same tick would
    // leave its times the same).
    EXPECT_EQ(ggfs_hf_index_repos(idx, &folder, "big", "a", &names, &n), 0);
    EXPECT_EQ(n, 3);
    EXPECT_STR(names[0], "models--a--b--c"); // ggfs_hf_model_repo refuses it later
    EXPECT_STR(names[1], "models--a--y");
    EXPECT_STR(names[2], "models--a--z");
    free(names);
    EXPECT_EQ(ggfs_hf_index_repos(idx, &folder, "big", "a", &names, &n), 0);
    free(names);
    EXPECT_EQ(ggfs_hf_index_reads(idx), 2);
    // Changed over a second ago: read once more, then kept.
    EXPECT(age("big", 10));
    EXPECT_EQ(ggfs_hf_index_repos(idx, &folder, "big", NULL, &names, &n), 0);
    EXPECT_EQ(n, 5);
    free(names);
    EXPECT_EQ(ggfs_hf_index_reads(idx), 3);
    EXPECT_EQ(ggfs_hf_index_repos(idx, &folder, "big", "ab", &names, &n), 0);
    EXPECT_EQ(n, 1);
    EXPECT_STR(names[0], "models--ab--x");
    free(names);
    EXPECT_EQ(ggfs_hf_index_repos(idx, &folder, "big", "b", &names, &n), 0);
    EXPECT_EQ(n, 1);
    free(names);
    EXPECT_EQ(ggfs_hf_index_repos(idx, &folder, "big", "nobody", &names, &n), 0);
    EXPECT_EQ(n, 0);
    free(names);
    EXPECT_EQ(ggfs_hf_index_reads(idx), 3);
    // A repository added: the hub's times change, it is read again.
    EXPECT(tmptree_dir(folder_path, "big/models--a--new/snapshots/" C1));
    EXPECT_EQ(ggfs_hf_index_repos(idx, &folder, "big", "a", &names, &n), 0);
    EXPECT_EQ(n, 4);
    EXPECT_STR(names[1], "models--a--new");
    free(names);
    EXPECT_EQ(ggfs_hf_index_reads(idx), 4);
    // Through the view, which lists each ORG from the index.
    EXPECT(age("big", 10));
    const char *anc[] = {"", "big"};
    ggfs_scan s;
    EXPECT_EQ(ggfs_hf_list(&folder, idx, "big", "", anc, 2, &s), 0);
    EXPECT_STR(names_of(&s), "a ab b");
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_hf_list(&folder, idx, "big", "a", anc, 2, &s), 0);
    EXPECT_STR(names_of(&s), "new y z");
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_hf_list(&folder, idx, "big", "ab", anc, 2, &s), 0);
    EXPECT_STR(names_of(&s), "x");
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_hf_index_reads(idx), 5);
    // Another hub replaces it; a directory that is not there is an error.
    EXPECT_EQ(ggfs_hf_index_repos(idx, &folder, "hub", "org", &names, &n), 0);
    EXPECT_EQ(n, 4); // bad, nosnap, tiny, and models--org-- (refused later)
    free(names);
    EXPECT_EQ(ggfs_hf_index_repos(idx, &folder, "nowhere", NULL, &names, &n), ENOENT);
    EXPECT_EQ(ggfs_hf_index_reads(idx), 6);
    ggfs_hf_index_free(idx);
    return 1;
}

typedef struct reader {
    ggfs_hf_index *idx;
    const char *org;
    int ok;
} reader;

/* Lists ORG a or b of big/ 300 times: each answer sorted, all of the ORG,
 * holding the repositories that are never removed. */
static void *read_many(void *p)
{
    reader *r = p;
    r->ok = 1;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "models--%s--", r->org);
    for (int i = 0; i < 300 && r->ok; i++) {
        char **names;
        size_t n;
        if (ggfs_hf_index_repos(r->idx, &folder, "big", r->org, &names, &n) != 0) {
            r->ok = 0;
            break;
        }
        bool steady = false;
        for (size_t k = 0; k < n; k++) {
            if (strncmp(names[k], prefix, strlen(prefix)) != 0 || (k > 0 && strcmp(names[k - 1], names[k]) >= 0))
                r->ok = 0;
            if (strcmp(names[k], strcmp(r->org, "a") == 0 ? "models--a--y" : "models--b--w") == 0)
                steady = true;
        }
        if (!steady)
            r->ok = 0;
        free(names);
    }
    return NULL;
}

static int test_the_index_under_eight_threads(void)
{
    ggfs_hf_index *idx = ggfs_hf_index_new();
    EXPECT(idx);
    reader readers[8];
    pthread_t threads[8];
    for (int i = 0; i < 8; i++) {
        readers[i] = (reader){.idx = idx, .org = i % 2 ? "a" : "b"};
        EXPECT(pthread_create(&threads[i], NULL, read_many, &readers[i]) == 0);
    }
    // Meanwhile repositories come and go, and the hub ages and changes.
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/big/models--a--moving", folder_path);
    for (int i = 0; i < 50; i++) {
        if (i % 2 == 0)
            mkdir(p, 0755);
        else
            rmdir(p);
        age("big", 10);
    }
    int ok = 1;
    for (int i = 0; i < 8; i++) {
        pthread_join(threads[i], NULL);
        ok &= readers[i].ok;
    }
    ggfs_hf_index_free(idx);
    EXPECT(ok);
    return 1;
}

int main(void)
{
    alarm(60); // a FIFO waited on would hang here
    int ok = build();
    if (ok) {
        ok &= test_repository_names();
        ok &= test_refs_hold_a_commit_and_nothing_else();
        ok &= test_the_view_names_repositories_refs_and_commits();
        ok &= test_hostile_refs_are_errors_never_paths();
        ok &= test_repositories_leading_back_are_left_out();
        ok &= test_scans_gain_hf_and_lose_the_blobs();
        ok &= test_hub_cache_at_the_folder_itself();
        ok &= test_the_index_reads_a_hub_once_while_it_is_unchanged();
        ok &= test_the_index_under_eight_threads();
    }
    ggfs_folder_close(&folder);
    tmptree_free(folder_path);
    tmptree_free(outside);
    return ok ? 0 : 1;
}

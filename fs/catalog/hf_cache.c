/*
 * The hf/ view of a Hugging Face hub cache: repositories by ORG and NAME,
 * their commits and refs, each ref read and checked before it names a
 * snapshot; and the blobs left out of the mirror.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/hf_cache.h"
#include "util/text.h"

#define MODELS_PREFIX "models--"
#define SEP "--"

/* ==== Names ==== */

bool ggfs_hf_is_repo(const char *name)
{
    static const char *const kinds[] = {"models--", "datasets--", "spaces--"};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        const size_t n = strlen(kinds[i]);
        if (strncmp(name, kinds[i], n) == 0 && name[n] != '\0')
            return true;
    }
    return false;
}

static bool fine_part(const char *s, size_t n)
{
    return n > 0 && n <= NAME_MAX && !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

bool ggfs_hf_model_repo(const char *dirname, char *org, char *name)
{
    const size_t plen = strlen(MODELS_PREFIX);
    if (strncmp(dirname, MODELS_PREFIX, plen) != 0)
        return false;
    const char *o = dirname + plen;
    const char *sep = strstr(o, SEP);
    if (!sep)
        return false; // models--NAME: no ORG
    const char *n = sep + strlen(SEP);
    const size_t olen = (size_t)(sep - o), nlen = strlen(n);
    if (!fine_part(o, olen) || !fine_part(n, nlen) || strstr(n, SEP))
        return false;
    memcpy(org, o, olen);
    org[olen] = '\0';
    memcpy(name, n, nlen + 1);
    return true;
}

/* ==== Refs ==== */

bool ggfs_hf_parse_ref(const char *data, size_t len, unsigned long long size, char *commit,
                       size_t *offset, char *why, size_t cap)
{
    const size_t hex = ggfs_lower_hex_span(data, len < GGFS_HF_COMMIT_HEX ? len : GGFS_HF_COMMIT_HEX);
    if (hex < GGFS_HF_COMMIT_HEX) {
        *offset = hex;
        if (hex == len) {
            if (len == 0)
                snprintf(why, cap, "empty, not a commit hash");
            else
                snprintf(why, cap, "ends after %zu of the %d hex digits of a commit hash", len,
                         GGFS_HF_COMMIT_HEX);
            return false;
        }
        const unsigned char c = (unsigned char)data[hex];
        if (c > 0x20 && c < 0x7f && c != '\'' && c != '\\')
            snprintf(why, cap, "byte 0x%02x ('%c') is not a lower-case hex digit of a commit hash", c, c);
        else
            snprintf(why, cap, "byte 0x%02x is not a lower-case hex digit of a commit hash", c);
        return false;
    }
    for (size_t i = GGFS_HF_COMMIT_HEX; i < len && i < GGFS_HF_MAX_REF; i++) {
        if (!strchr(" \t\r\n", data[i]) || data[i] == '\0') {
            *offset = i;
            snprintf(why, cap, "bytes after the commit hash");
            return false;
        }
    }
    if (size > GGFS_HF_MAX_REF || len > GGFS_HF_MAX_REF) {
        *offset = GGFS_HF_MAX_REF;
        snprintf(why, cap, "%llu bytes, more than the %d a ref may have", size > len ? size : len,
                 GGFS_HF_MAX_REF);
        return false;
    }
    memcpy(commit, data, GGFS_HF_COMMIT_HEX);
    commit[GGFS_HF_COMMIT_HEX] = '\0';
    return true;
}

/* Reads at most GGFS_HF_MAX_REF + 1 bytes of the regular file at real
 * into buf, and the file's size. Returns 0 or an errno; EINVAL when it is
 * not a regular file. */
static int read_ref(const ggfs_folder *f, const char *real, char *buf, size_t *len, unsigned long long *size)
{
    struct stat st;
    const int err = ggfs_folder_read_head(f, real, buf, GGFS_HF_MAX_REF + 1, len, &st);
    *size = err ? 0 : (unsigned long long)st.st_size;
    if (!err && *size < *len)
        *size = *len; // grown since the stat
    return err;
}

/* ==== Repositories ==== */

/* A model repository as the view uses it: where it is, and its
 * snapshots/ (both symlink-free). */
typedef struct repo {
    char path[PATH_MAX];      // HUB/models--ORG--NAME
    char real[PATH_MAX];
    char snapshots[PATH_MAX]; // real path of its snapshots/
    struct stat st;
} repo;

/* Resolves the directory at path, which must stay inside the folder and
 * not lead back to a directory shown above. Returns 0 or an errno. */
static int resolve_dir(const ggfs_folder *f, const char *path, const char *const *anc, size_t n_anc,
                       char *real, size_t cap, struct stat *st)
{
    int err = ggfs_resolve_beneath(f, path, real, cap, st);
    if (!err && !S_ISDIR(st->st_mode))
        err = ENOTDIR;
    if (!err && ggfs_path_leads_back(real, anc, n_anc))
        err = ELOOP;
    return err;
}

/* Finds repository dirname of the hub, with its snapshots/. Returns 0 or
 * an errno. A repository that does not lead back up the tree holds no
 * directory shown above, so neither do the snapshots inside it: the view
 * never goes round in circles. */
static int open_repo(const ggfs_folder *f, const char *hub, const char *dirname, const char *const *anc,
                     size_t n_anc, repo *r)
{
    char snaps[PATH_MAX];
    struct stat st;
    if (!ggfs_path_join(r->path, sizeof r->path, hub, dirname))
        return ENAMETOOLONG;
    int err = resolve_dir(f, r->path, anc, n_anc, r->real, sizeof r->real, &r->st);
    if (err)
        return err;
    if (!ggfs_path_join(snaps, sizeof snaps, r->real, "snapshots"))
        return ENAMETOOLONG;
    err = resolve_dir(f, snaps, anc, n_anc, r->snapshots, sizeof r->snapshots, &st);
    // snapshots/ must be the repository's own, or its commits could be
    // any directory of the folder.
    if (!err && (!ggfs_path_within(r->snapshots, r->real) || strcmp(r->snapshots, r->real) == 0))
        err = EXDEV;
    return err;
}

/* Whether the directory at real (relative to the folder) holds a
 * directory `sub` (followed inside the folder). */
static bool holds_dir(const ggfs_folder *f, const char *real, const char *sub)
{
    char path[PATH_MAX], resolved[PATH_MAX];
    struct stat st;
    return ggfs_path_join(path, sizeof path, real, sub) &&
           ggfs_resolve_beneath(f, path, resolved, sizeof resolved, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ==== Tidying a scan ==== */

bool ggfs_hf_tidy_scan(const ggfs_folder *f, const char *real_dir, ggfs_scan *scan)
{
    const char *base = strrchr(real_dir, '/');
    base = base ? base + 1 : real_dir;
    const ggfs_scan_entry *blobs = ggfs_scan_find(scan, "blobs");
    if (blobs && blobs->kind == GGFS_SCAN_DIR) {
        const ggfs_scan_entry *snaps = ggfs_scan_find(scan, "snapshots");
        char marker[PATH_MAX];
        struct stat st;
        // A repository's blobs are its snapshots' files under hash names;
        // the shared store's are the same again.
        const bool repo_blobs = ggfs_hf_is_repo(base) && snaps && snaps->kind == GGFS_SCAN_DIR;
        const bool shared = !repo_blobs &&
                            ggfs_path_join(marker, sizeof marker, blobs->real, GGFS_HF_SHARED_MARKER) &&
                            fstatat(f->fd, marker, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
        if (repo_blobs || shared)
            ggfs_scan_drop(scan, "blobs");
    }
    if (ggfs_scan_find(scan, GGFS_HF_VIEW))
        return true; // a real entry of that name wins
    for (size_t i = 0; i < scan->count; i++) {
        const ggfs_scan_entry *e = &scan->entries[i];
        char org[NAME_MAX + 1], name[NAME_MAX + 1];
        if (e->kind != GGFS_SCAN_DIR || !ggfs_hf_model_repo(e->name, org, name) ||
            !holds_dir(f, e->real, "snapshots"))
            continue;
        struct stat st;
        if (fstatat(f->fd, real_dir[0] ? real_dir : ".", &st, AT_SYMLINK_NOFOLLOW) != 0)
            return true; // gone meanwhile
        if (!ggfs_scan_add(scan, GGFS_SCAN_HF, GGFS_HF_VIEW, real_dir, "", NULL, &st, 0))
            return false;
        ggfs_scan_finish(scan);
        return true;
    }
    return true;
}

/* ==== The view ==== */

typedef struct view {
    const ggfs_folder *f;
    const char *hub;
    const char *const *anc;
    size_t n_anc;
    ggfs_scan *out;
} view;

/* Directories of the view are walked without the names starting with a
 * dot (what tools keep hidden), and a readdir that fails part-way lists
 * what came before it. */
#define VIEW_WALK (GGFS_EACH_SKIP_HIDDEN | GGFS_EACH_KEEP_PARTIAL)

typedef struct repos_ctx {
    const char *org; // NULL: list the ORGs; else the NAMEs of this one
    struct stat hub_st;
    bool any;
} repos_ctx;

static bool add_repo(const view *v, const char *dirname, void *p)
{
    repos_ctx *c = p;
    char org[NAME_MAX + 1], name[NAME_MAX + 1], place[2 * NAME_MAX + 2];
    repo r;
    if (!ggfs_hf_model_repo(dirname, org, name) || (c->org && strcmp(org, c->org) != 0) ||
        open_repo(v->f, v->hub, dirname, v->anc, v->n_anc, &r) != 0)
        return true;
    c->any = true;
    if (!c->org)
        return ggfs_scan_add(v->out, GGFS_SCAN_HF, org, v->hub, org, NULL, &c->hub_st, 0);
    snprintf(place, sizeof place, "%s/%s", org, name);
    return ggfs_scan_add(v->out, GGFS_SCAN_HF, name, v->hub, place, NULL, &r.st, 0);
}

typedef struct commits_ctx {
    const view *v;
    const repo *r;
} commits_ctx;

static bool add_commit(void *p, const char *name, unsigned char type)
{
    (void)type;
    const commits_ctx *c = p;
    const view *v = c->v;
    const repo *r = c->r;
    char path[PATH_MAX], real[PATH_MAX];
    struct stat st;
    if (!ggfs_path_join(path, sizeof path, r->snapshots, name) ||
        ggfs_resolve_beneath(v->f, path, real, sizeof real, &st) != 0 || !S_ISDIR(st.st_mode) ||
        !ggfs_path_within(real, r->snapshots) || strcmp(real, r->snapshots) == 0)
        return true; // not a directory of this repository's snapshots/
    return ggfs_scan_add(v->out, GGFS_SCAN_DIR, name, path, real, NULL, &st, 0);
}

/* Names a ref's snapshot into snap and snap_real (PATH_MAX bytes each),
 * or writes why not into msg. */
static bool ref_snapshot(const view *v, const repo *r, const char *ref, const char *ref_real, char *snap,
                         char *snap_real, struct stat *st, char *msg, size_t cap)
{
    char data[GGFS_HF_MAX_REF + 1], commit[GGFS_HF_COMMIT_HEX + 1], why[128];
    size_t len = 0, offset = 0;
    unsigned long long size = 0;
    int err = read_ref(v->f, ref_real, data, &len, &size);
    if (err) {
        snprintf(msg, cap, "%s: %s", ref, err == EINVAL ? "not a regular file" : strerror(err));
        return false;
    }
    if (!ggfs_hf_parse_ref(data, len, size, commit, &offset, why, sizeof why)) {
        snprintf(msg, cap, "%s: offset 0x%zx: %s", ref, offset, why);
        return false;
    }
    if (!ggfs_path_join(snap, PATH_MAX, r->snapshots, commit)) {
        snprintf(msg, cap, "%s: offset 0x0: commit %s: the snapshot's path is too long", ref, commit);
        return false;
    }
    err = ggfs_resolve_beneath(v->f, snap, snap_real, PATH_MAX, st);
    if (!err && !S_ISDIR(st->st_mode))
        err = ENOTDIR;
    const char *problem = err == EXDEV ? "leads out of the folder" : err ? strerror(err) : NULL;
    if (!err && (!ggfs_path_within(snap_real, r->snapshots) || strcmp(snap_real, r->snapshots) == 0))
        problem = "leads out of the repository's snapshots";
    if (problem) {
        snprintf(msg, cap, "%s: offset 0x0: commit %s: %s: %s", ref, commit, snap, problem);
        return false;
    }
    return true;
}

typedef struct refs_ctx {
    const view *v;
    const repo *r;
    const char *dir;   // the real path of the refs directory listed
    const char *place; // its place in the view
} refs_ctx;

static bool add_ref(void *p, const char *name, unsigned char type)
{
    (void)type;
    const refs_ctx *c = p;
    const view *v = c->v;
    char path[PATH_MAX], real[PATH_MAX], place[PATH_MAX];
    struct stat st;
    if (!ggfs_path_join(path, sizeof path, c->dir, name) ||
        ggfs_resolve_beneath(v->f, path, real, sizeof real, &st) != 0)
        return true; // leaves the folder, dangles, loops or cannot be read
    if (S_ISDIR(st.st_mode)) {
        // A directory of refs (refs/pr/ of refs/refs/pr/1): followed only
        // when it is no link, so that the view cannot go round in circles.
        if (strcmp(real, path) != 0 || !ggfs_path_join(place, sizeof place, c->place, name))
            return true;
        return ggfs_scan_add(v->out, GGFS_SCAN_HF, name, v->hub, place, NULL, &st, 0);
    }
    if (!S_ISREG(st.st_mode))
        return true;
    char snap[PATH_MAX], snap_real[PATH_MAX], msg[GGFS_HF_MSG_MAX];
    struct stat snap_st;
    if (!ref_snapshot(v, c->r, path, real, snap, snap_real, &snap_st, msg, sizeof msg)) {
        ggfs_one_line(msg);
        return ggfs_scan_add(v->out, GGFS_SCAN_MODEL, name, path, real, msg, &st, 0);
    }
    return ggfs_scan_add(v->out, GGFS_SCAN_DIR, name, snap, snap_real, NULL, &snap_st, 0);
}

/* Lists the refs in refs/SUB of repository r at place. Returns 0, ENOENT
 * when there is no such directory, or ENOMEM. */
static int list_refs(const view *v, const repo *r, const char *sub, const char *place)
{
    char path[PATH_MAX], refs[PATH_MAX], dir[PATH_MAX], want[PATH_MAX];
    struct stat st;
    if (!ggfs_path_join(path, sizeof path, r->real, "refs") ||
        ggfs_resolve_beneath(v->f, path, refs, sizeof refs, &st) != 0 || !S_ISDIR(st.st_mode) ||
        !ggfs_path_within(refs, r->real) || strcmp(refs, r->real) == 0)
        return ENOENT;
    // refs/SUB must be a directory of refs/ itself, reached without links.
    if (!sub[0])
        strcpy(want, refs);
    else if (!ggfs_path_join(want, sizeof want, refs, sub))
        return ENOENT;
    if (ggfs_resolve_beneath(v->f, want, dir, sizeof dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
        strcmp(dir, want) != 0)
        return ENOENT;
    refs_ctx c = {.v = v, .r = r, .dir = dir, .place = place};
    const int err = ggfs_folder_each(v->f, dir, VIEW_WALK, add_ref, &c);
    return err == ENOMEM ? ENOMEM : err ? ENOENT : 0;
}

int ggfs_hf_list(const ggfs_folder *f, ggfs_hf_index *idx, const char *hub, const char *place,
                 const char *const *ancestors, size_t n_ancestors, ggfs_scan *out)
{
    memset(out, 0, sizeof *out);
    view v = {.f = f, .hub = hub, .anc = ancestors, .n_anc = n_ancestors, .out = out};
    char dirname[NAME_MAX + 1];
    const size_t olen = strcspn(place, "/");
    const char *rest = place + olen;
    int err = 0;
    if (!place[0] || !rest[0]) {
        // hf/ lists the ORGs, hf/ORG its NAMEs: a place nothing is under
        // does not exist, but hf/ itself always does.
        repos_ctx c = {.org = place[0] ? place : NULL};
        char **names;
        size_t count;
        if (fstatat(f->fd, hub[0] ? hub : ".", &c.hub_st, AT_SYMLINK_NOFOLLOW) != 0 ||
            ggfs_hf_index_repos(idx, f, hub, c.org, &names, &count) != 0)
            return ENOENT;
        for (size_t i = 0; i < count && !err; i++)
            if (!add_repo(&v, names[i], &c))
                err = ENOMEM;
        free(names);
        if (err != ENOMEM)
            err = !place[0] ? 0 : c.any ? 0 : ENOENT;
    } else {
        const char *n = rest + 1;
        const size_t nlen = strcspn(n, "/");
        const char *sub = n[nlen] == '/' ? n + nlen + 1 : "";
        repo r;
        char sorg[NAME_MAX + 1], sname[NAME_MAX + 1];
        // The repository's directory name, checked to split back the same.
        if (olen > NAME_MAX || nlen > NAME_MAX ||
            (size_t)snprintf(dirname, sizeof dirname, "models--%.*s--%.*s", (int)olen, place, (int)nlen, n) >=
                sizeof dirname ||
            !ggfs_hf_model_repo(dirname, sorg, sname) || strlen(sorg) != olen || strlen(sname) != nlen ||
            (n[nlen] == '/' && !sub[0]) || open_repo(f, hub, dirname, ancestors, n_ancestors, &r) != 0) {
            return ENOENT;
        }
        if (!sub[0]) {
            // Commits first: a ref of the same name is hidden by the commit.
            commits_ctx c = {.v = &v, .r = &r};
            err = ggfs_folder_each(f, r.snapshots, VIEW_WALK, add_commit, &c);
            if (err != ENOMEM) {
                const int refs_err = list_refs(&v, &r, "", place);
                err = refs_err == ENOMEM ? ENOMEM : 0;
            }
        } else {
            err = list_refs(&v, &r, sub, place);
        }
    }
    if (err) {
        ggfs_scan_free(out);
        return err;
    }
    ggfs_scan_finish(out);
    return 0;
}

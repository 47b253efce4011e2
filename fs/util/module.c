/*
 * Finding and loading a module (module.h). GGFS_MODULE_DIR_FROM_BIN is
 * where meson installs the modules, relative to where it installs the
 * program ("../lib/x86_64-linux-gnu/gguf-fs"), or absolute when either
 * lies outside the prefix.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/module.h"

/* The folder of the running program (symbolic links resolved), in dir;
 * 0 or an errno. */
static int program_dir(char *dir, size_t size)
{
    const ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    if (n < 0)
        return errno;
    if ((size_t)n >= size - 1)
        return ENAMETOOLONG;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return ENOENT;
    *slash = '\0';
    return 0;
}

const void *ggfs_module_load(const char *file, const char *entry, char *why, size_t why_size)
{
    char dir[PATH_MAX], installed[PATH_MAX], beside[PATH_MAX];
    const int err = program_dir(dir, sizeof dir);
    if (err) {
        snprintf(why, why_size, "cannot load the module %s: /proc/self/exe: %s", file, strerror(err));
        return NULL;
    }
    const char *from_bin = GGFS_MODULE_DIR_FROM_BIN;
    bool fits = (size_t)snprintf(beside, sizeof beside, "%s/%s", dir, file) < sizeof beside;
    if (from_bin[0] == '/') {
        fits &= (size_t)snprintf(installed, sizeof installed, "%s/%s", from_bin, file) < sizeof installed;
    } else {
        // Each leading "../" takes the last folder off, so that messages
        // name /usr/lib/..., not /usr/bin/../lib/...
        for (; strncmp(from_bin, "../", 3) == 0; from_bin += 3) {
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = '\0';
        }
        fits &= (size_t)snprintf(installed, sizeof installed, "%s/%s/%s", dir, from_bin, file) < sizeof installed;
    }
    if (!fits) {
        snprintf(why, why_size, "cannot load the module %s: %s", file, strerror(ENAMETOOLONG));
        return NULL;
    }
    // Where it is installed; else, if it is there, beside the program.
    const char *path = access(installed, F_OK) != 0 && access(beside, F_OK) == 0 ? beside : installed;
    // Never unloaded: libcurl and OpenSSL keep process-wide state and threads.
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    const void *sym = handle ? dlsym(handle, entry) : NULL;
    if (!sym) {
        // dlerror starts with the path when the module itself is at fault,
        // and names the library it needs when that one is missing.
        const char *reason = dlerror();
        if (!reason)
            reason = "no such entry";
        const size_t len = strlen(path);
        if (strncmp(reason, path, len) == 0 && reason[len] == ':')
            reason += len + 1 + (reason[len + 1] == ' ');
        snprintf(why, why_size, "cannot load the module %s: %s", path, reason);
        if (handle)
            dlclose(handle);
    }
    return sym;
}

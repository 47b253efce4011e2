/*
 * Parts of the daemon built as modules of their own, loaded when first
 * needed: the remote engine (libcurl, and through it OpenSSL, HTTP/2, SSH,
 * LDAP, Kerberos, ...) and the hashes (libxxhash, libcrypto). A mount
 * that never needs them never loads those libraries, nor runs their
 * constructors, which cost more than the rest of starting the program.
 *
 * A module is a shared object installed in the package's private library
 * directory, $libdir/gguf-fs, and looked for relative to the running
 * program: there ($bindir/../$libdir/gguf-fs, so that a relocated or staged
 * install finds its own), else beside the program (the build tree, where
 * meson builds the modules next to build/fs/gguf-fs). No RUNPATH: that
 * would make the loader search its folders for every library the program
 * links, at every start. A module exports one symbol, a table of its
 * entry points; the layers' code it links stays inside it.
 */
#ifndef GGFS_UTIL_MODULE_H
#define GGFS_UTIL_MODULE_H

#include <stddef.h>

/* Loads the module `file` ("gguf-fs-remote.so") and returns its symbol
 * `entry`. NULL, with why filled in one line naming the module's path and
 * the loader's reason (dlerror), when it cannot. Safe from any thread; a
 * module once loaded stays for the life of the process (loading it again
 * finds it loaded). */
const void *ggfs_module_load(const char *file, const char *entry, char *why, size_t why_size);

#endif

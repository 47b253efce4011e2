# Sourced, from the tree's root, by the scripts that compile (build, fuzz,
# package): with ccache installed (meson then compiles through it), the
# tree's paths are hashed as relative ones and the build directory not at
# all, so a checkout elsewhere (a clean clone, as CI builds) reuses what
# an earlier build of the same sources compiled. An object taken from the
# cache keeps in its debug information the directory it was first built
# in; nothing else differs.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
# meson prefixes ccache only to the compilers it finds itself, not to one
# named in CC.
compiler_cache=()
command -v ccache >/dev/null 2>&1 && compiler_cache=(ccache)

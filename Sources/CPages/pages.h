// Sources/CPages/pages.h - page calls Swift cannot make directly, imported as CPages
#ifndef GRIDSTORE_CPAGES_H
#define GRIDSTORE_CPAGES_H

#if defined(__linux__)
#include <stddef.h>

// glibc and musl declare mremap only under _GNU_SOURCE, and with variadic arguments, which
// Swift does not import: this prototype is theirs, and the wrapper makes the call in C, where
// a variadic call is made the way the platform's calling convention says.
extern void *mremap(void *old_address, size_t old_size, size_t new_size, int flags, ...);

/// Grows (or moves) a mapping of `old_size` bytes to `new_size`, keeping its pages: the
/// mapped address, or MAP_FAILED ((void *)-1) with errno set.
static inline void *gridstore_remap_growing(void *old_address, size_t old_size, size_t new_size) {
    return mremap(old_address, old_size, new_size, 1 /* MREMAP_MAYMOVE */);
}
#endif

#endif

// Sources/CPages/pages.h - page and cache calls Swift cannot make directly, imported as CPages
#ifndef GRIDSTORE_CPAGES_H
#define GRIDSTORE_CPAGES_H

#if defined(__linux__)
#include <stddef.h>
#include <sys/mman.h>

// glibc and musl declare mremap only under _GNU_SOURCE, and with variadic arguments, which
// Swift does not import: this prototype is theirs, and the wrapper makes the call in C, where
// a variadic call is made the way the platform's calling convention says.
extern void *mremap(void *old_address, size_t old_size, size_t new_size, int flags, ...);

/// Grows (or moves) a mapping of `old_size` bytes to `new_size`, keeping its pages: the
/// mapped address, or MAP_FAILED ((void *)-1) with errno set.
static inline void *gridstore_remap_growing(void *old_address, size_t old_size, size_t new_size) {
    return mremap(old_address, old_size, new_size, 1 /* MREMAP_MAYMOVE */);
}

/// Makes the pages of `length` bytes from `address` (a page boundary) resident and writable,
/// zeroed as a write would find them, without writing them: madvise(MADV_POPULATE_WRITE),
/// Linux 5.14 on, whose number the C libraries of older systems do not define. 0, or -1 with
/// errno set (EINVAL on an older kernel).
static inline int gridstore_populate_writable(void *address, size_t length) {
    return madvise(address, length, 23 /* MADV_POPULATE_WRITE */);
}
#endif

/// Asks the processor to bring the cache line holding `address` in, for writing, without
/// waiting for it: a hint, which never faults (any address will do) and may do nothing.
static inline void gridstore_prefetch_for_write(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif

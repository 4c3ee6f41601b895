// Tests/TestSupport/Sanitizers.swift - whether this test process runs under a sanitizer

import Foundation

/// Whether this test process runs under AddressSanitizer (`swift test --sanitize=address`): its
/// runtime's entry point is then among the process's symbols. Its shadow memory reserves
/// terabytes of address space and its allocator ignores glibc's settings, so tests of
/// `RLIMIT_AS` and of the heap's thresholds are skipped under it.
public let runsUnderAddressSanitizer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

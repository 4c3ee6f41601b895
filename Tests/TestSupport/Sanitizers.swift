// Tests/TestSupport/Sanitizers.swift - whether this test process runs under a sanitizer

import Foundation

/// Whether this test process runs under AddressSanitizer (`swift test --sanitize=address`). Its
/// shadow memory reserves terabytes of address space, so tests that set `RLIMIT_AS` and expect
/// figures derived from it cannot hold there; they are skipped under it.
public let runsUnderAddressSanitizer: Bool = {
    if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil { return true }
    // Where the runtime's symbols are not exported, the options the sanitizer needs under
    // `swift test` (ASAN_OPTIONS=detect_leaks=0) tell.
    return ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil
}()

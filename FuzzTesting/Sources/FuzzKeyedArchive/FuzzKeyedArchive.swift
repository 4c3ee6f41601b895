// FuzzTesting/Sources/FuzzKeyedArchive/FuzzKeyedArchive.swift - libFuzzer target: NSKeyedArchiver archives

import FuzzSupport

/// Reads the input as an NSKeyedArchiver binary property list (archive info, the keyed
/// unarchiver and the any-archive detector). No checksum guards this format, so every mutation
/// reaches the bplist scanner and the transcoder. The seeds are the keyed-archive test fixtures
/// (Foundation- and Python-written, hostile ones included).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyedArchive(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzDecoding.decodeAllKeyed(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

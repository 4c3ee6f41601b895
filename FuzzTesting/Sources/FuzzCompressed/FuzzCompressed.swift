// FuzzTesting/Sources/FuzzCompressed/FuzzCompressed.swift - libFuzzer target: zstd archives

import FuzzSupport

/// Treats the input's payload as a stored zstd frame: sets the zstd flag, fixes the stored
/// length and both checksums, so every input reaches the decompressor and, when it yields
/// bytes, the payload checks behind it. The seeds are zstd-compressed archives.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCompressed(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    FuzzDecoding.decodeAll(FuzzDecoding.asCompressed(bytes))
    return 0
}

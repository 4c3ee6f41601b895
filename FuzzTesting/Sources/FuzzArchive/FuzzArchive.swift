// FuzzTesting/Sources/FuzzArchive/FuzzArchive.swift - libFuzzer target: uncompressed archives

import FuzzSupport

/// Decodes the input as it is (magic, header, checksum paths), then resealed with correct
/// checksums (every structural check of the payload).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArchive(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    FuzzDecoding.decodeAll(bytes)
    FuzzDecoding.decodeAll(FuzzDecoding.resealed(bytes))
    return 0
}

// FuzzTesting/Sources/FuzzCompressed/FuzzCompressed.swift - libFuzzer target: zstd archives

import Foundation
import FuzzSupport

/// Treats the input's payload as a stored zstd frame: sets the zstd flag, fixes the stored
/// length and both checksums, so every input reaches the decompressor and, when it yields
/// bytes, the payload checks behind it; in memory and from a file (the file readers decompress
/// in pieces, another road). The seeds are zstd-compressed archives.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCompressed(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let archive = FuzzDecoding.asCompressed(Array(UnsafeRawBufferPointer(start: start, count: count)))
    FuzzDecoding.decodeAll(archive)
    FuzzDecoding.decodeAllFromFile(archive, path: scratchFile)
    return 0
}

/// One file per fuzzing process, in memory when /dev/shm exists.
let scratchFile: String = {
    let folder = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return "\(folder)/gridstore-fuzz-\(ProcessInfo.processInfo.processIdentifier).archive"
}()

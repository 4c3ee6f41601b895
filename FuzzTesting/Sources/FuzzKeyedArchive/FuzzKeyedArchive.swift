// FuzzTesting/Sources/FuzzKeyedArchive/FuzzKeyedArchive.swift - libFuzzer target: NSKeyedArchiver archives

import FuzzSupport

/// Reads the input as an NSKeyedArchiver archive, binary or XML property list (archive info, the
/// keyed unarchiver, the any-archive detector and ``ArchiveGraph``). No checksum guards this
/// format, so every mutation reaches the bplist scanner or the XML parser and the transcoder. The
/// seeds are the keyed-archive test fixtures (Foundation-, Apple- and Python-written, XML and
/// hostile ones included); Dictionaries/FuzzKeyedArchive.dict gives the XML and keyed tokens.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyedArchive(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzDecoding.decodeAllKeyed(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

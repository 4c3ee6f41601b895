// Sources/GraphArchive/KeyedArchive/KeyedArchive+Renamed.swift - the conversions' earlier names, deprecated

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The conversions are named by direction now (what they produce, then what they read); these
// forward the earlier names, so that code written against them gets a fix-it rather than an error.
extension KeyedArchive {
    @available(*, deprecated, renamed: "gridstoreArchiveData(fromKeyedArchive:compression:options:)")
    @_documentation(visibility: internal)
    public static func archiveData(
        fromKeyedArchive data: Data,
        compression: ArchiveCompression = .none,
        options: GraphUnarchiver.Options = .init()
    ) throws -> Data {
        try gridstoreArchiveData(fromKeyedArchive: data, compression: compression, options: options)
    }

    @available(*, deprecated, renamed: "writeGridstoreArchive(fromKeyedArchiveFile:toFile:compression:options:)")
    @_documentation(visibility: internal)
    public static func writeArchive(
        fromKeyedArchiveFile input: String,
        toFile output: String,
        compression: ArchiveCompression = .none,
        options: GraphUnarchiver.Options = .init()
    ) throws {
        try writeGridstoreArchive(
            fromKeyedArchiveFile: input,
            toFile: output,
            compression: compression,
            options: options
        )
    }

    @available(*, deprecated, renamed: "keyedArchiveData(fromGridstoreArchive:options:decodingOptions:)")
    @_documentation(visibility: internal)
    public static func keyedArchiveData(
        fromArchive data: Data,
        options: Options = Options(),
        decodingOptions: GraphUnarchiver.Options = .init()
    ) throws -> Data {
        try keyedArchiveData(fromGridstoreArchive: data, options: options, decodingOptions: decodingOptions)
    }

    @available(*, deprecated, renamed: "writeKeyedArchive(fromGridstoreArchiveFile:toFile:options:decodingOptions:)")
    @_documentation(visibility: internal)
    public static func writeKeyedArchive(
        fromArchiveFile input: String,
        toFile output: String,
        options: Options = Options(),
        decodingOptions: GraphUnarchiver.Options = .init()
    ) throws {
        try writeKeyedArchive(
            fromGridstoreArchiveFile: input,
            toFile: output,
            options: options,
            decodingOptions: decodingOptions
        )
    }
}

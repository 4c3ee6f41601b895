// Tests/GraphArchiveTests/Files/FileInputTests.swift - what is opened as an archive file, and what is read of it

import Foundation
import Testing

@testable import GraphArchive

#if canImport(Glibc)
import Glibc
#endif

/// Every way the engine opens an archive file, each run on `path`.
private let fileReaders: [(String, @Sendable (String) throws -> Void)] = [
    ("unarchivedObject(fromFile:)", { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: $0) }),
    (
        "unarchivedObject(fromKeyedArchiveFile:)",
        { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromKeyedArchiveFile: $0) }
    ),
    (
        "unarchivedObject(fromAnyArchiveFile:)",
        { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromAnyArchiveFile: $0) }
    ),
    ("archiveInfo(fromFile:)", { _ = try GraphUnarchiver.archiveInfo(fromFile: $0) }),
    ("archiveInfo(fromAnyArchiveFile:)", { _ = try GraphUnarchiver.archiveInfo(fromAnyArchiveFile: $0) }),
    ("verify(file:)", { _ = try GraphUnarchiver.verify(file: $0) }),
    ("verify(anyArchiveFile:)", { _ = try GraphUnarchiver.verify(anyArchiveFile: $0) }),
    ("KeyedArchive.archiveInfo(fromKeyedArchiveFile:)", { _ = try KeyedArchive.archiveInfo(fromKeyedArchiveFile: $0) }),
    ("ArchiveKind.detect(fileAt:)", { _ = try ArchiveKind.detect(fileAt: $0) }),
]

@Suite("Archive files")
struct FileInputTests {
    /// A FIFO with no writer: opening it for reading waits for one, so a reader that opened it
    /// plainly would hang. The child process is killed by SIGALRM if any reader blocks.
    @Test func namedPipeIsRefusedWithoutWaitingForAWriter() async throws {
        try await withTemporaryFolderAsync { folder in
            let fifo = folder + "/pipe"
            #expect(mkfifo(fifo, 0o600) == 0)
            await #expect(processExitsWith: .success) { [fifo = fifo as String] in
                alarm(20)
                for (name, read) in fileReaders {
                    let error = archiveError { try read(fifo) }
                    #expect(error?.code == .ioError, "\(name)")
                    #expect(error?.message.contains("named pipe (FIFO), not a regular file") == true, "\(name)")
                }
            }
        }
    }

    @Test(arguments: [("/", "a directory"), ("/dev/zero", "a character device"), ("/dev/null", "a character device")])
    func foldersAndDevicesAreRefused(path: String, kind: String) {
        for (name, read) in fileReaders {
            let error = archiveError { try read(path) }
            #expect(error?.code == .ioError, "\(name)")
            #expect(error?.message == "cannot read \(path): it is \(kind), not a regular file", "\(name)")
        }
    }

    @Test func missingFileIsFileNotFound() {
        for (name, read) in fileReaders {
            #expect(archiveError { try read("/nonexistent/archive") }?.code == .fileNotFound, "\(name)")
        }
    }

    /// A valid archive extended to 3 GB with `truncate` (a sparse file: nothing on disk) fails on
    /// its header's storedLength before its body is read. The child may grow its address space
    /// by 256 MiB only, so reading the body would kill it.
    @Test func extendedArchiveFailsBeforeItsBodyIsRead() async throws {
        try await withTemporaryFolderAsync { folder in
            for compression in [ArchiveCompression.none] + (ArchiveCompression.isZstdAvailable ? [.zstd] : []) {
                let path = folder + "/extended-\(compression)"
                let records = (0..<1_000).map { Record(name: "record \($0)", color: $0, date: "2024") }
                try GraphArchiver.archiveRootObject(
                    records,
                    toFile: path,
                    options: GraphArchiver.Options(compression: compression)
                )
                let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
                #expect(truncate(path, 3 << 30) == 0)
                await #expect(processExitsWith: .success) { [path = path as String, size = size as Int] in
                    limitAddressSpaceGrowth(to: 256 << 20)
                    for (name, read) in fileReaders where !name.contains("Keyed") && !name.contains("detect") {
                        let error = archiveError { try read(path) }
                        #expect(error?.code == .trailingGarbage, "\(name)")
                        #expect(error?.offset == size, "\(name)")
                    }
                }
            }
        }
    }

    /// The same for a keyed archive: its trailer, the last 32 bytes (zeros after the extension),
    /// is read and checked first.
    @Test func extendedKeyedArchiveFailsOnItsTrailerBeforeItsBodyIsRead() async throws {
        try await withTemporaryFolderAsync { folder in
            let path = folder + "/extended.plist"
            try keyedFixture("foundation-gridstates").write(to: URL(fileURLWithPath: path))
            #expect(truncate(path, 3 << 30) == 0)
            await #expect(processExitsWith: .success) { [path = path as String] in
                limitAddressSpaceGrowth(to: 256 << 20)
                for (name, read) in fileReaders where !name.contains("(fromFile:)") && !name.contains("verify(file:)") {
                    guard !name.contains("detect") else {
                        #expect((try? read(path)) != nil)
                        continue
                    }
                    let error = archiveError { try read(path) }
                    #expect(error?.code == .corrupt, "\(name)")
                    #expect(error?.message.hasPrefix("binary property list trailer is damaged") == true, "\(name)")
                }
            }
        }
    }

    /// An XML keyed archive has no trailer: its last bytes, which must close its value, are
    /// checked before its body is read.
    @Test func extendedXMLKeyedArchiveFailsOnItsEndBeforeItsBodyIsRead() async throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>$archiver</key><string>NSKeyedArchiver</string><key>$version</key><integer>100000</integer>
            <key>$top</key><dict><key>root</key><dict><key>CF$UID</key><integer>1</integer></dict></dict>
            <key>$objects</key><array><string>$null</string><string>hi</string></array>
            </dict></plist>
            <!-- a comment may follow -->\n\n
            """
        try await withTemporaryFolderAsync { folder in
            let path = folder + "/extended.plist"
            try Data(xml.utf8).write(to: URL(fileURLWithPath: path))
            #expect(try KeyedArchive.archiveInfo(fromKeyedArchiveFile: path).topLevelKeys == ["root"])
            #expect(truncate(path, 3 << 30) == 0)
            await #expect(processExitsWith: .success) { [path = path as String] in
                limitAddressSpaceGrowth(to: 256 << 20)
                for (name, read) in fileReaders where !name.contains("(fromFile:)") && !name.contains("verify(file:)") {
                    guard !name.contains("detect") else {
                        #expect((try? read(path)) != nil)
                        continue
                    }
                    let error = archiveError { try read(path) }
                    #expect(error?.code == .corrupt, "\(name)")
                    #expect(
                        error?.message == "XML property list ends with byte 0x0, not with the closing tag of its value",
                        "\(name)"
                    )
                    #expect(error?.offset == (3 << 30) - 1, "\(name)")
                }
            }
        }
    }

    /// A file of another kind is refused on its first bytes, not read whole first.
    @Test func foreignFileIsRefusedOnItsFirstBytes() async throws {
        try await withTemporaryFolderAsync { folder in
            let path = folder + "/notes.txt"
            try Data("hello, this is not an archive\n".utf8).write(to: URL(fileURLWithPath: path))
            #expect(truncate(path, 3 << 30) == 0)
            await #expect(processExitsWith: .success) { [path = path as String] in
                limitAddressSpaceGrowth(to: 256 << 20)
                for (name, read) in fileReaders where !name.contains("detect") {
                    #expect(archiveError { try read(path) }?.code == .badMagic, "\(name)")
                }
                #expect((try? ArchiveKind.detect(fileAt: path)) == .unknown)
            }
        }
    }

    /// A read that fails while the format is being told apart is reported as that failure, never
    /// as a file of an unknown format. The open file's descriptor is replaced by a folder's, so
    /// the read fails with EISDIR.
    @Test func readErrorWhileDetectingTheFormatIsReported() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/archive"
            try GraphArchiver.archiveRootObject([Record(name: "a", color: 1, date: "d")], toFile: path)
            let file = try ArchiveFile(path: path, maximumBytes: .max)
            let descriptor = try #require(Self.descriptor(of: path))
            let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY)
            defer { close(folderDescriptor) }
            #expect(dup2(folderDescriptor, descriptor) == descriptor)
            let error = archiveError { _ = try file.kind() }
            #expect(error?.code == .ioError)
            #expect(error?.message == "cannot read \(path): Is a directory")
        }
    }

    /// The descriptor this process has open on `path`, from /proc/self/fd.
    private static func descriptor(of path: String) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for entry in entries {
            if (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")) == path {
                return Int32(entry)
            }
        }
        return nil
    }
}

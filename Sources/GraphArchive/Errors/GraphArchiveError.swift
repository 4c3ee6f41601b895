// Sources/GraphArchive/Errors/GraphArchiveError.swift - the one public error type

/// The error every GraphArchive operation throws.
///
/// A `code` says what went wrong in a form code can switch on, `message` says it for people,
/// and where they apply, `offset` is the byte offset in the (uncompressed) payload and `keyPath`
/// the keys leading to the value being coded, e.g. `["root", "[12]", "kEncodeKeyName"]`.
/// New codes are new static members, so adding one breaks no client code.
public struct GraphArchiveError: Error, Hashable, CustomStringConvertible, Sendable {
    /// A machine-readable error condition.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // MARK: - Reading archives
        /// The input ended before the structure it promised.
        public static let truncated = Code("truncated")
        /// The input does not start with the archive magic.
        public static let badMagic = Code("badMagic")
        /// The archive's major format version or a required flag is newer than this reader.
        public static let unsupportedVersion = Code("unsupportedVersion")
        /// The header's own checksum does not match: the header was damaged.
        public static let headerChecksumMismatch = Code("headerChecksumMismatch")
        /// The payload checksum does not match: the archive was damaged.
        public static let checksumMismatch = Code("checksumMismatch")
        /// A structural rule of FORMAT.md is broken (bad tag, bad varint, inconsistent counts).
        public static let corrupt = Code("corrupt")
        /// An object reference points outside the object table.
        public static let badObjectReference = Code("badObjectReference")
        /// Bytes follow the end of the archive.
        public static let trailingGarbage = Code("trailingGarbage")
        /// A string is not valid UTF-8.
        public static let invalidUTF8 = Code("invalidUTF8")
        /// A decoding limit (``GraphUnarchiver/Options``) was exceeded; the message names it.
        public static let limitExceeded = Code("limitExceeded")
        /// The archive is compressed and this build has no support for that compression.
        public static let compressionUnavailable = Code("compressionUnavailable")
        /// The compression library reported an error; the message carries its text.
        public static let compressionFailed = Code("compressionFailed")

        // MARK: - Decoding values
        /// The archive names a type that is not in the registry.
        public static let unknownType = Code("unknownType")
        /// A required key is absent.
        public static let keyNotFound = Code("keyNotFound")
        /// The stored value has another type than the one asked for.
        public static let typeMismatch = Code("typeMismatch")
        /// The stored number does not fit the type asked for.
        public static let valueOutOfRange = Code("valueOutOfRange")
        /// A reference closes a cycle: decoding, a plain `decode` cannot restore it (use
        /// `decodeLater`); encoding, the cycle has no back link (mark one with
        /// `encodeConditionalObject` or `encodeLater`).
        public static let unresolvedCycle = Code("unresolvedCycle")

        // MARK: - Encoding and API use
        /// The same key was encoded twice in one container.
        public static let duplicateKey = Code("duplicateKey")
        /// A value cannot be encoded (for example nesting deeper than the limit).
        public static let invalidValue = Code("invalidValue")
        /// The API was used out of order, e.g. reading `encodedData` before `finishEncoding()`.
        public static let invalidState = Code("invalidState")

        // MARK: - Files
        /// The file does not exist.
        public static let fileNotFound = Code("fileNotFound")
        /// A system call failed; the message carries `strerror`.
        public static let ioError = Code("ioError")
        /// Another owner held the archive's lock (``ArchiveLock``) past the time allowed to wait.
        public static let locked = Code("locked")
    }

    public var code: Code
    public var message: String
    /// Byte offset in the payload (or the file, for header errors) where the problem was found.
    public var offset: Int?
    /// Keys from the top of the archive to the value in question.
    public var keyPath: [String]

    public init(_ code: Code, _ message: String, offset: Int? = nil, keyPath: [String] = []) {
        self.code = code
        self.message = message
        self.offset = offset
        self.keyPath = keyPath
    }

    public var description: String {
        var text = message
        if !keyPath.isEmpty {
            text += " (at \(keyPath.joined(separator: ".")))"
        }
        if let offset {
            text += " [byte \(offset)]"
        }
        return text
    }
}

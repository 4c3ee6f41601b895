// Sources/GraphArchive/Internals/ArchiveBytes+Output.swift - a finished archive as input bytes, in one copy

extension ArchiveBytes {
    /// The bytes of a finished archive (header, then every payload piece) in one allocation:
    /// one copy, where `ArchiveBytes(copying: output.contiguousBytes())` makes two. Used to
    /// read an archive that was just assembled in memory (keyed archives are transcoded, then
    /// decoded).
    convenience init(joining output: StoredArchive) {
        let count = output.count
        self.init(count: count) { (buffer: UnsafeMutableRawBufferPointer) -> Int in
            var offset = 0
            output.header.withUnsafeBytes { header in
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + header.count)]).copyMemory(
                    from: header
                )
                offset += header.count
            }
            for piece in output.payload {
                piece.writer.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + bytes.count)]).copyMemory(
                        from: bytes
                    )
                    offset += bytes.count
                }
            }
            return offset
        }
    }
}

extension ArchiveBytes {
    /// The bytes of a finished archive that nothing else reads: joined in the buffer of its
    /// largest piece (`StoredArchive.joinedInPlace()`), which is then taken over. Where
    /// ``init(joining:)`` allocates the archive's size once more and copies it all into fresh
    /// pages (a keyed read of 100k grid-state slots: 10 MB), this moves the largest piece up
    /// within pages already written. The pieces are left empty.
    convenience init(joiningInPlace output: StoredArchive) {
        self.init(takingOver: output.joinedInPlace())
    }
}

extension ArchiveBytes {
    /// A copy of the bytes `writer` holds (a property list made from XML, to be read).
    convenience init(copying writer: borrowing ByteWriter) {
        let count = writer.count
        self.init(count: count) { (buffer: UnsafeMutableRawBufferPointer) -> Int in
            writer.withUnsafeBytes { bytes in buffer.copyMemory(from: bytes) }
            return count
        }
    }
}

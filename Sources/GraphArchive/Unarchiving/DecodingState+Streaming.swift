// Sources/GraphArchive/Unarchiving/DecodingState+Streaming.swift - an archive file read as its objects are built

extension DecodingState {
    /// Makes `stream`, the rest of a file whose tables and top section the reader holds, the
    /// input of the object table: construction asks for its records a window at a time.
    mutating func stream(_ stream: FilePayloadStream?) {
        guard let stream else { return }
        input = stream
        stream.keep(below: reader.offset)
        recordsRead = 0
    }

    /// Keeps the input from `offset` on until the end of decoding: a deferred value there is
    /// read after construction has moved on.
    @inline(__always)
    mutating func keepsInput(from offset: Int) {
        if offset < inputKeptFrom { inputKeptFrom = offset }
    }

    /// Reads the next window of the file, from record `index` (where the reader is) on: gives
    /// back what construction has passed, reads a piece, and steps over the records it holds
    /// whole, which construction then builds without asking again. A record larger than a
    /// piece doubles the window until it fits.
    ///
    /// - Throws: `.limitExceeded` past the memory budget, `.ioError`, `.truncated` when the
    ///   file ends early; a damaged record is left to the decoder to report.
    mutating func readRecords(from index: Int) throws(GraphArchiveError) {
        guard let input else { return }
        let start = reader.offset
        input.discard(below: min(start, inputKeptFrom), memory: &memory)
        if input.hasDiscarded { objectInputDiscarded = true }
        var target = input.loadedEnd + FilePayloadStream.pieceSize
        while true {
            try input.load(upTo: target, memory: &memory)
            reader = input.bytes.reader(start..<input.loadedEnd)
            var walker = reader
            var ready = index
            scanning: while ready < objectCount {
                do {
                    try scanner.skipRecord(&walker, depth: stack.count)
                } catch  where error.code == .truncated && input.loadedEnd < input.end {
                    break scanning
                } catch {
                    // Built up to this record, whose error the decoder reports as its own.
                    ready += 1
                    break scanning
                }
                ready += 1
            }
            if ready > index {
                recordsRead = ready
                return
            }
            target = input.loadedEnd + max(FilePayloadStream.pieceSize, input.loadedEnd - start)
        }
    }

    /// After the last object: reads what is left of the file (bytes after the last record
    /// are then found by the reader), compares the payload checksum, and gives back every
    /// object byte no deferred value needs.
    ///
    /// - Throws: `.checksumMismatch`, and what ``readRecords(from:)`` throws.
    mutating func finishStream() throws(GraphArchiveError) {
        guard let input else { return }
        let offset = reader.offset
        input.discard(below: min(offset, inputKeptFrom), memory: &memory)
        try input.load(upTo: input.end, memory: &memory)
        try input.verifyChecksum()
        reader = input.bytes.reader(offset..<input.end)
        input.discard(below: min(input.end, inputKeptFrom), memory: &memory)
        if input.hasDiscarded { objectInputDiscarded = true }
        recordsRead = objectCount
        self.input = nil
    }

    /// `loaded` with all of the file read, for what needs the whole payload before the objects
    /// are built (a keyed archive's class fallbacks, FORMAT.md §12).
    mutating func readWholeStream(of loaded: LoadedArchive) throws(GraphArchiveError) -> LoadedArchive {
        guard let input else { return loaded }
        try input.load(upTo: input.end, memory: &memory)
        return LoadedArchive(
            header: loaded.header,
            archiveBytes: loaded.archiveBytes,
            payload: loaded.payload,
            payloadRange: loaded.payloadRange.lowerBound..<input.end,
            memory: loaded.memory
        )
    }
}

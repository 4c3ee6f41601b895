// Sources/GraphArchive/Unarchiving/DecodingState+Streaming.swift - a payload read and given back as its objects are built

extension DecodingState {
    /// Makes `stream`, a payload whose tables and top section the reader holds, the input of
    /// the object table: construction asks for its records a window at a time.
    mutating func stream(_ stream: PayloadWindow?) {
        guard let stream else { return }
        input = stream
        stream.keep(below: reader.offset)
        recordsRead = 0
    }

    /// Keeps the input from `offset` on until the end of decoding: a deferred value there (one
    /// not copied, see `decodeLater`) is read after construction has moved on.
    @inline(__always)
    mutating func keepsInput(from offset: Int) {
        if offset < inputKeptFrom { inputKeptFrom = offset }
    }

    /// Reads the next window of the payload, from record `index` (where the reader is) on:
    /// gives back what construction has passed, reads a piece, and steps over the records it
    /// holds whole, which construction then builds without asking again. A record larger than
    /// a piece doubles the window until it fits. A payload held whole is not stepped over:
    /// construction asks again after about a piece's worth of records.
    ///
    /// - Throws: `.limitExceeded` past the memory budget, `.ioError`, `.truncated` when the
    ///   file ends early; a damaged record is left to the decoder to report.
    mutating func readRecords(from index: Int) throws(GraphArchiveError) {
        guard let input else { return }
        let start = reader.offset
        input.discard(below: min(start, inputKeptFrom), memory: &memory)
        if input.hasDiscarded { objectInputDiscarded = true }
        // About a piece's worth of records, so that construction comes back to give pages back.
        let perRecord = index > 0 ? max(1, (start - objectSectionStart) / index) : 64
        let piece = index + max(1, FilePayloadStream.pieceSize / perRecord)
        if input.isWhole {
            recordsRead = min(objectCount, piece)
            return
        }
        var target = input.loadedEnd + FilePayloadStream.pieceSize
        if let loaded = input.recordsLoaded {
            // A payload rebuilt beside the decoder publishes whole records: with records past
            // `index` in hand, take what has been published since without waiting; else wait
            // for the next ones, however few.
            target = input.loadedEnd + (loaded > index ? 0 : 1)
        }
        while true {
            try input.load(upTo: target, memory: &memory)
            reader = input.bytes.reader(start..<input.loadedEnd)
            // A payload rebuilt beside the decoder knows where its records end.
            if let loaded = input.recordsLoaded, loaded > index {
                recordsRead = min(loaded, piece)
                return
            }
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
        try input.verify()
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

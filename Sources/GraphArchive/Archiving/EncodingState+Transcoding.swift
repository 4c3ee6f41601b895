// Sources/GraphArchive/Archiving/EncodingState+Transcoding.swift - tables for writers that copy another archive's records

extension EncodingState {
    /// The id of `shape`, added to the shape table if new: for the writers that build records
    /// from another archive's (the keyed reader, the archive graph's writer); the encoder's own
    /// records get theirs when they close.
    mutating func shapeID(_ shape: EncodedShape) -> Int {
        if let known = shapeIndex[shape] { return known }
        let id = shapes.count
        shapes.append(shape)
        shapeIndex[shape] = id
        return id
    }
}

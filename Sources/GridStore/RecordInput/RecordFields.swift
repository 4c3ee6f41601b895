// Sources/GridStore/RecordInput/RecordFields.swift - one input record before it becomes a GridState

/// The fields one input record gave, each `nil` when absent (or `null` in JSON, or an unquoted
/// empty CSV field), and the line it started on.
struct RecordFields {
    var name: String?
    var color: Int?
    var date: String?
    /// Identity: records with the same id are one shared instance.
    var id: String?
    var line: Int
    /// The byte offset in the input where the record starts, for progress.
    var offset: Int

    init(line: Int, offset: Int) {
        self.line = line
        self.offset = offset
    }
}

/// A message-only failure inside a scanner; the importer adds the source and the line.
struct RecordProblem: Error {
    var line: Int
    var message: String
}

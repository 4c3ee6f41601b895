// Sources/GridStore/RecordInput/RecordInputError.swift - a bad record in JSON, JSON Lines or CSV input

/// A record that cannot be read, with where it is: `"states.csv, line 12: color is not an integer: \"red\""`.
public struct RecordInputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The input's name as the user gave it (a path, or "standard input").
    public var source: String
    /// The 1-based line the problem was found on; 0 when the problem is the input as a whole
    /// (it is empty).
    public var line: Int
    /// What is wrong, for people.
    public var message: String

    public init(source: String, line: Int, message: String) {
        self.source = source
        self.line = line
        self.message = message
    }

    public var description: String {
        line > 0 ? "\(source), line \(line): \(message)" : "\(source): \(message)"
    }
}

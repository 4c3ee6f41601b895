// Sources/GridStoreCLI/StandardInput.swift - all of standard input, within a size limit

import Foundation
import GridStore

/// Reads standard input to its end, whether a file, a pipe or a terminal.
enum StandardInput {
    /// Bytes asked for per read: large enough that a big archive takes few system calls.
    private static let pieceSize = 1 << 20

    /// All of standard input, failing once it holds more than `limit` bytes (`what` says what
    /// it should be, for that message). Memory grows with what actually arrives, never with a
    /// size announced in advance. `progress` hears the bytes read so far.
    static func readAll(limit: Int, what: String, progress: Progress? = nil) throws -> Data {
        var data = Data()
        progress?.phase("reading standard input", unit: .bytes)
        do {
            while let piece = try FileHandle.standardInput.read(upToCount: pieceSize), !piece.isEmpty {
                guard piece.count <= limit - data.count else {
                    throw ToolError(
                        "standard input holds more than \(limit) bytes, more than \(what) may have"
                    )
                }
                data.append(piece)
                progress?.advance(to: data.count)
            }
        } catch let error as ToolError {
            throw error
        } catch {
            throw ToolError("cannot read standard input: \(FileErrorReason.reason(of: error))")
        }
        return data
    }
}

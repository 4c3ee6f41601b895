// Sources/GridStoreCLI/GridStoreTool+Inspect.swift - `gridstore inspect`

import Foundation
import GraphArchive
import GridStore

extension GridStoreTool {
    /// Opens any archive as an ``ArchiveGraph`` (no model types, no registry) and prints it as a
    /// tree, as JSON or as counts, streaming: the output is written as it is made.
    static func inspect(_ options: InspectOptions, console: Console) throws {
        let path = archivePath(options.file)
        let displayName = name(of: path)
        let progress = console.progress()
        defer { progress.finish() }
        let decoding = decodingOptions(memoryLimit: options.memoryLimit)
        let graph = try withArchive(displayName) {
            try openGraph(archiveSource(path, progress: progress, options: decoding), options: decoding)
        }
        progress.finish()
        var output = OutputBuffer()
        let write: ([UInt8]) throws -> Void = { chunk in
            output.append { $0.append(contentsOf: chunk) }
            try output.flush()
        }
        try withArchive(displayName) {
            if options.summary {
                output.append(try graph.summary().text)
            } else if options.json {
                try graph.writeJSON(to: write)
            } else {
                try graph.writeTree(maximumDepth: options.depth, to: write)
            }
        }
        try output.flush()
    }
}

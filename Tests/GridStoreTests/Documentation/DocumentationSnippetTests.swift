// Tests/GridStoreTests/Documentation/DocumentationSnippetTests.swift - every Swift block of the docs is compiled by a test

import Foundation
import Testing

/// README.md and the DocC articles teach by example, so their examples must keep compiling and
/// working as the API changes. Each ```swift block of those documents is copied into a test file
/// of this folder, where it is compiled and (where it can be) run; this suite checks that every
/// block is there, line for line. Package manifests are the one exception: SwiftPM, not a test,
/// would compile them.
@Suite("Documentation snippets")
struct DocumentationSnippetTests {
    /// A fenced Swift block of a document, with the line its fence opens on.
    struct Block: Equatable {
        var line: Int
        var lines: [String]
    }

    /// The package's root folder: this file is Tests/GridStoreTests/Documentation/<name>.swift.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// README.md and every Markdown file of every DocC catalog under Sources/, as paths from the root.
    static func documents() throws -> [String] {
        var paths = ["README.md"]
        let sources = root.appendingPathComponent("Sources")
        let fileManager = FileManager.default
        for module in try fileManager.contentsOfDirectory(atPath: sources.path).sorted() {
            let modulePath = sources.appendingPathComponent(module).path
            for entry in try fileManager.contentsOfDirectory(atPath: modulePath).sorted() where entry.hasSuffix(".docc")
            {
                let catalog = "Sources/\(module)/\(entry)"
                let files = fileManager.enumerator(atPath: root.appendingPathComponent(catalog).path)
                while let file = files?.nextObject() as? String {
                    if file.hasSuffix(".md") { paths.append("\(catalog)/\(file)") }
                }
            }
        }
        return paths.sorted()
    }

    /// The ```swift blocks of `markdown`, fences at any indentation (inside list items too).
    static func swiftBlocks(in markdown: String) -> [Block] {
        var blocks: [Block] = []
        var open: Block?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = open {
                if trimmed == "```" {
                    blocks.append(block)
                    open = nil
                } else {
                    block.lines.append(String(line))
                    open = block
                }
            } else if trimmed == "```swift" {
                open = Block(line: index + 1, lines: [])
            }
        }
        return blocks
    }

    /// Lines as they are compared: without indentation (a test nests a block in a type or a
    /// function), blank lines or imports (a test file imports at its top), and with every run of
    /// spaces as one (a document may align its comments; `swift format` does not).
    static func comparable(_ lines: [Substring]) -> [Substring] {
        lines.map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ")[...] }
            .filter { !$0.isEmpty && !$0.hasPrefix("import ") }
    }

    /// Whether `block` is a package manifest, which SwiftPM checks rather than a test: it
    /// starts with the `swift-tools-version` line.
    static func isManifest(_ block: Block) -> Bool {
        block.lines.first?.trimmingCharacters(in: .whitespaces).hasPrefix("// swift-tools-version:") ?? false
    }

    /// Whether `block` appears in `text` as consecutive lines.
    static func contains(_ text: [Substring], _ block: [Substring]) -> Bool {
        guard !block.isEmpty else { return true }
        guard block.count <= text.count else { return false }
        return (0...(text.count - block.count)).contains { start in
            text[start..<(start + block.count)].elementsEqual(block)
        }
    }

    @Test func everySwiftBlockOfTheDocsIsCompiledByATest() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let testFiles = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }
            .map { Self.comparable($0.split(separator: "\n", omittingEmptySubsequences: false)) }
        let documents = try Self.documents()
        #expect(documents.contains("README.md"))
        var blockCount = 0
        for document in documents {
            let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
            for block in Self.swiftBlocks(in: text) where !Self.isManifest(block) {
                blockCount += 1
                let lines = Self.comparable(block.lines.map { $0[...] })
                if !testFiles.contains(where: { Self.contains($0, lines) }) {
                    Issue.record(
                        """
                        \(document):\(block.line): this Swift block is in no test of Tests/GridStoreTests/Documentation; \
                        copy it into one, where it compiles and runs
                        """
                    )
                }
            }
        }
        #expect(blockCount > 0)
    }

    @Test func findsIndentedBlocksAndSkipsOtherLanguages() {
        let markdown = """
            Text.

            ```swift
            let a = 1
            ```

            ```sh
            swift test
            ```

            - A list item:

              ```swift
              let b = 2

              let c = 3
              ```
            """
        #expect(
            Self.swiftBlocks(in: markdown) == [
                Block(line: 3, lines: ["let a = 1"]), Block(line: 13, lines: ["  let b = 2", "", "  let c = 3"]),
            ]
        )
    }

    @Test func manifestsAreLeftToSwiftPM() {
        #expect(Self.isManifest(Block(line: 1, lines: ["// swift-tools-version: 6.2", "import PackageDescription"])))
        #expect(!Self.isManifest(Block(line: 1, lines: ["import PackageDescription"])))
    }

    @Test func blocksMatchWhateverTheirIndentationButLineForLine() {
        let file = Self.comparable(["import Foundation", "enum Docs {", "    let a = 1", "", "    let b = 2", "}"])
        #expect(Self.contains(file, Self.comparable(["import GraphArchive", "let a = 1", "let b = 2"])))
        #expect(!Self.contains(file, Self.comparable(["let b = 2", "let a = 1"])))
        #expect(!Self.contains(file, Self.comparable(["let a = 1", "let c = 3"])))
        let formatted = Self.comparable(["let a = 1  // one", "let b = 2  // two"])
        #expect(Self.contains(formatted, Self.comparable(["let a = 1      // one", "let b = 2      // two"])))
    }
}

// Tests/GridStoreCLITests/InspectCLITests.swift - `gridstore inspect`: parsing and end to end

import Foundation
import GraphArchive
import Testing

@testable import GridStoreCLI

/// The committed keyed-archive fixtures of the engine's tests.
private let fixtures = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("GraphArchiveTests/Fixtures/KeyedArchives").path

/// Apple-written fixtures (swift-corelibs-foundation's, see the README beside them).
private let appleFixtures = fixtures + "/swift-corelibs-foundation"

@Suite("CLI: inspect")
struct InspectCLITests {
    // MARK: - Parsing

    @Test func everyFormParses() throws {
        #expect(try parse(["inspect"]).command == .inspect(InspectOptions()))
        #expect(try parse(["inspect", "a.plist"]).command == .inspect(InspectOptions(file: "a.plist")))
        #expect(try parse(["inspect", "--file", "a"]).command == .inspect(InspectOptions(file: "a")))
        #expect(try parse(["inspect", "-"]).command == .inspect(InspectOptions(file: "-")))
        #expect(try parse(["inspect", "--json", "a"]).command == .inspect(InspectOptions(file: "a", json: true)))
        #expect(try parse(["inspect", "a", "--summary"]).command == .inspect(InspectOptions(file: "a", summary: true)))
        #expect(try parse(["inspect", "a", "--depth=2"]).command == .inspect(InspectOptions(file: "a", depth: 2)))
        #expect(try parse(["inspect", "-q", "--", "-odd"]).command == .inspect(InspectOptions(file: "-odd")))
        #expect(try parse(["inspect", "--help"]).command == .help(.inspect))
    }

    @Test(arguments: [
        (["inspect", "a", "b"], "inspect takes one archive"),
        (["inspect", "a", "--file", "b"], "not both"),
        (["inspect", "--json", "--summary"], "cannot be used together"),
        (["inspect", "--json", "--depth", "2"], "--depth goes with the tree"),
        (["inspect", "--depth", "-1"], "--depth takes a whole number"),
        (["inspect", "--jsn"], "did you mean '--json'?"),
        (["inspect", ""], "needs a path"),
    ])
    func usageErrorsAreNamed(arguments: [String], message: String) {
        #expect {
            _ = try parse(arguments)
        } throws: { error in
            guard let usage = error as? UsageError else { return false }
            return usage.message.contains(message) && usage.hint == "see 'gridstore inspect --help'"
        }
    }

    // MARK: - End to end

    @Test func treeOfAnAppleArchiveResolvesReferences() throws {
        let result = try ToolSandbox().run(["inspect", appleFixtures + "/NSKeyedUnarchiver-ComplexTest.plist"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.hasPrefix("keyed archive (NSKeyedArchiver 100000, binary property list), "))
        #expect(result.output.contains("\"url\" => #16 NSURL {"))
        #expect(result.output.contains("\"NS.relative\" => \"https://www.swift.org\""))
        #expect(result.output.contains("\"uuid\" => #21 NSUUID {"))
        #expect(result.errors.isEmpty)
    }

    /// Every `$ gridstore inspect …` example of README.md and docs/CLI.md is what the tool prints
    /// for that Apple fixture, line for line.
    @Test func theDocsShowRealInspectOutput() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sandbox = try ToolSandbox()
        var examples = 0
        for document in ["README.md", "docs/CLI.md"] {
            let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
            for block in text.components(separatedBy: "```\n").enumerated().filter({ $0.offset % 2 == 1 }) {
                var lines = block.element.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                guard let command = lines.first, command.hasPrefix("$ gridstore inspect ") else { continue }
                lines.removeFirst()
                var arguments = command.dropFirst("$ gridstore ".count).split(separator: " ").map(String.init)
                arguments[arguments.count - 1] = appleFixtures + "/" + arguments[arguments.count - 1]
                let result = try sandbox.run(arguments)
                #expect(result.status == 0, "\(document): \(command): \(result.errors)")
                #expect(result.output == lines.joined(separator: "\n"), "\(document): \(command)")
                examples += 1
            }
        }
        #expect(examples >= 4)
    }

    @Test func sharedRecordsPrintOnceAndCyclesAreMarked() throws {
        let sandbox = try ToolSandbox()
        let shared = try sandbox.run(["inspect", "--file", fixtures + "/python-gridstates.plist"])
        #expect(shared.output.components(separatedBy: " UAGridState {").count - 1 == 3)
        #expect(shared.output.contains("→ #4 UAGridState"))
        let ring = try sandbox.run(["inspect", fixtures + "/foundation-ring.plist"])
        #expect(ring.output.contains("(cycle)"))
    }

    @Test func jsonOfAGridstoreArchiveOfAnyModel() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "g.gridstore", "--generate", "300", "--shared", "0.5"]).status == 0)
        let result = try sandbox.run(["inspect", "--json", "g.gridstore"])
        #expect(result.status == 0, "\(result.errors)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        )
        #expect(document["format"] as? String == "gridstore")
        let objects = try #require(document["objects"] as? [[String: Any]])
        #expect(objects.count == 150)
        #expect(objects[0]["class"] as? String == "GridState" && objects[0]["classes"] as? [String] == ["GridState"])
        let root = try #require((document["top"] as? [String: Any])?["root"] as? [[String: Int]])
        #expect(root.count == 300 && Set(root.compactMap { $0["$ref"] }).count == 150)
    }

    @Test func readsStandardInputAndXML() throws {
        let sandbox = try ToolSandbox()
        let process = try sandbox.process(["inspect", "--summary", "-"])
        let output = Pipe()
        process.standardInput = FileHandle(forReadingAtPath: appleFixtures + "/NSKeyedUnarchiver-URLTest.plist")
        process.standardOutput = output
        try sandbox.runToEnd(process)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(text.contains("XML property list"))
        #expect(text.contains("NSURL") && text.contains("2 (1 class)"))
    }

    @Test func summaryCountsByClass() throws {
        let result = try ToolSandbox().run([
            "inspect", "--summary", appleFixtures + "/macOS-10.14/NSAttributedString.archive",
        ])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("NSAttributedString"))
        #expect(result.output.contains("CLASS"))
    }

    @Test func depthLimitsTheTree() throws {
        let result = try ToolSandbox().run(["inspect", "--depth", "1", fixtures + "/python-gridstates.plist"])
        #expect(result.status == 0)
        #expect(result.output.contains("[… 5 items]") && !result.output.contains("Living room"))
    }

    @Test(arguments: [
        ("python-hostile-uid-out-of-range.plist", "out of range"),
        ("python-hostile-wrong-archiver.plist", "archiver"),
        ("python-hostile-wrong-version.plist", "$version"),
    ])
    func damagedArchivesFailWithAMessage(file: String, message: String) throws {
        let result = try ToolSandbox().run(["inspect", fixtures + "/" + file])
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("gridstore: error: ") && result.errors.contains(message), "\(result.errors)")
        #expect(result.reason == .exit)
    }

    @Test func missingAndForeignFilesFail() throws {
        let sandbox = try ToolSandbox()
        let missing = try sandbox.run(["inspect", "nothing.gridstore"])
        #expect(missing.status == 1 && missing.errors.contains("nothing.gridstore"))
        try sandbox.write("just text", to: "notes.txt")
        let foreign = try sandbox.run(["inspect", "notes.txt"])
        #expect(foreign.status == 1 && foreign.errors.contains("magic"))
    }
}

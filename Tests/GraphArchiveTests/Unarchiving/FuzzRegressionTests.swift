// Tests/GraphArchiveTests/Unarchiving/FuzzRegressionTests.swift - what the fuzzer found, kept found

import Foundation
import Testing

@testable import GraphArchive

/// A node whose cycle-closing key is decoded later but is not its last key: the shape of the
/// fuzzer's `FuzzNode` seed that first showed the bug below.
final class LaterFirstNode: GraphCoding {
    var next: LaterFirstNode?
    var label: Int

    init(_ label: Int) { self.label = label }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encodeLater(next, forKey: "next")
        try archiver.encode(label, forKey: "label")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        try unarchiver.decodeLater(LaterFirstNode?.self, forKey: "next") { [unowned self] in self.next = $0 }
    }
}

@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// Found by FuzzArchive on its own seed corpus: the deferred assignments moved the reader back
    /// before the end-of-objects check, so a valid archive of such a ring failed with
    /// `.trailingGarbage` (and leaked the ring built so far).
    @Test func deferredKeyBeforeOtherKeysDecodes() throws {
        let ring = (0..<3).map(LaterFirstNode.init)
        for (index, node) in ring.enumerated() { node.next = ring[(index + 1) % ring.count] }
        defer { for node in ring { node.next = nil } }
        let data = try GraphArchiver.archivedData(withRootObject: ring)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [LaterFirstNode].self, from: data)
        defer { for node in back { node.next = nil } }
        #expect(back.map(\.label) == [0, 1, 2])
        #expect(back[0].next === back[1] && back[1].next === back[2] && back[2].next === back[0])
    }

    /// Found by reading the header code for the fuzzer (a fuzzer rarely forges a checksum): a
    /// checksum-valid header with a reference count past `Int.max` trapped in `ArchiveInfo`.
    @Test func forgedReferenceCountDoesNotTrap() {
        let archive = HandBuilt.sharedRecords(referenceCount: UInt64.max)
        expectArchiveError(.corrupt) { _ = try GraphUnarchiver.archiveInfo(from: archive.data) }
    }

    /// Found reading the table parser for costs a small file can force: a shape of n keys was
    /// checked for repeats by searching its keys so far, n²/2 steps; a 180 KB archive with one
    /// 60,000-key shape ran for minutes. The repeat check is one pass now.
    @Test(arguments: [false, true])
    func wideShapeIsCheckedInOnePass(repeatLastKey: Bool) {
        let keys = 60_000
        var payload = varint(UInt64(keys)) + Array(repeating: 0, count: keys)  // key table: 60,000 empty names
        payload += varint(1) + [TypeKind.value] + name("Wide")  // type table: one value type
        payload += varint(1) + varint(0) + varint(UInt64(keys))  // shape 0: type 0, 60,000 keys
        for key in 0..<keys {
            payload += varint(UInt64(repeatLastKey && key == keys - 1 ? 0 : key))
        }
        payload += varint(0)  // no top-level values
        let archive = HandBuiltArchive(payload, typeCount: 1, objectCount: 0)
        if repeatLastKey {
            expectArchiveError(.corrupt, mentioning: "twice") { _ = try GraphUnarchiver.verify(archive.data) }
        } else {
            #expect(throws: Never.self) { _ = try GraphUnarchiver.verify(archive.data) }
        }
    }

    /// Found by FuzzKeyedArchive: 750-byte archives of arrays sharing arrays (a slow unit of
    /// 14 s, then a timeout of 11 s, under ASan on a loaded machine). The reader's expansion
    /// budget refuses the first after about a million steps (its fixed 1 MiB allowance): 0.2 s
    /// in a release build, 5 s in a debug one. In the second the fuzzer also moved an object
    /// into an array's class definition, whose `$classes` then names object 234 of 112: that
    /// is refused before any array is expanded.
    @Test(arguments: [
        [
            "YnBsaXN0MDDUAQIDBAUGBwpYJHZlcnNpb25ZJGFyY2hpdmVyVCR0b3BYJG9iamVjdHMSAAGGoF8QD05TS2V5ZWRBcmNoaXZlctEI",
            "CVRyb290gCCvECELDA0TGRwfIiUoKy4xNDc6PUBDRklMT1JVWFteYWRnam1VJG51bGxTbG9s0g4PEBFYJGNsYXNzZXNaJGNsYXNz",
            "bmFtZaIREldOU0FycmF5WE5TT2JqZWN00hQVFhhaTlMub2JqZWN0c1YkY2xhc3OiFxeAAYAC0hQVGhiiGxuAA9IUFR0Yoh4egATS",
            "FBUgGKIhIYAF0hQVIxiiJCSABtIUFSYYoicngAfSFBUpGKIqKoAI0hQVLBiiLS2ACdIUFS8YojAwgArSFBUyGKIzM4AL0hQVNRii",
            "NjaADNIUFTgYojk5gA3SFBU7GKI8PIAO0hQVPhiiPz+AD9IUFUEYokJCgBDSFBVEGKJFRYAR0hQVRxiiSEiAEtIUFUoYoktLgBPS",
            "FBVNGKJOToAU0hQVUBiiUVGAFdIUFVMYolRUgBbSFBVWGKJXV4AX0hQVWRiiWlqAGNIUFVwYol1dgBnSFBVfGKJgYIAa0hQVYhii",
            "Y2OAG9IUFWUYomZmgBzSFBVoGKJpaYAd0hQVaxiibGyAHtIUFW4Yom9vgB8ACAARABoAJAApADIANwBJAEwAUQBTAHcAfQCBAIYA",
            "jwCaAJ0ApQCuALMAvgDFAMgAygDMANEA1ADWANsA3gDgAOUA6ADqAO8A8gD0APkA/AD+AQMBBgEIAQ0BEAESARcBGgEcASEBJAEm",
            "ASsBLgEwATUBOAE6AT8BQgFEAUkBTAFOAVMBVgFYAV0BYAFiAWcBagFsAXEBdAF2AXsBfgGAAYUBiAGKAY8BkgGUAZkBnAGeAaMB",
            "pgGoAa0BsAGyAbcBugG8AcEBxAHGAcsBzgHQAdUB2AHaAd8B4gHkAekB7AAAAAAAAAIBAAAAAAAAAHAAAAAAAAAAAAAAAAAAAAHu",
        ],
        [
            "YnBsaXN0MDDUAQIDBAUGBwpYJHZlcnNpb25ZJGFyY2hpdmVyVCR0b3BYJG9iamVjdHMSAAGGoF8QD05TS2V5ZWRBcmNoaXZlctEI",
            "CVRyb290gCCvECELDA0TGRwfIiUoKy4xNDc6PUBDRklMT1JVWFteYWRnam1VJG51bGxTbG9s0g4P6hFYJGNsYXNzZXNaJGNsYXNz",
            "bmFtZaIREldOU0FycmF5WE5TT2JqZWN00hQVFhhaTlMub2JqZWN0c1YkY2xhc3OiFxeAAYAC0hQVGhiiGxuAA9IUFR0Yoh4egATS",
            "FBUgGKIhIYAF0hQVIxiiJCSABtIUFSYYoicngAfSFBUpGKIqKoAI0hQVLBiiLS2ACdIUFS8YojAwgArSFBUyGKIzM4AL0hQVNRii",
            "NjaADNIUFTgYojk5gA3SFBU7GKI8PIAO0hQVPhiiPz+AD9IUFUEYokJCgBDSFBVEGKJFRYAR0hQVRxiiSEiAEtIUFUoYoktLgBPS",
            "FBVNGKJOToAU0hQVUBiiUVGAFdIUFVMYolRUgBbSFBVWGKJXV4AX0hQVWRiiWlqAGNIUFVwYol1dgBnSFBVfGKJgYIAa0hQVYhii",
            "Y2OAG9IUFWUYomZmgBzSFBVoGKJpaYAd0hQVaxiibGyAHtIUFW4Yom9vgB8ACAARABoAJAApADIANwBJAEwAUQBTAHcAfQCBAIYA",
            "jwCaAJ0ApQAuALMAvgDFAMgAygDMANEA1ADWANsA3gDgAOUA6ADqAO8A8gD0APkA/AD+AQMBBgEIAQ0BEAESARcBGgEcASEBJAEm",
            "ASsBLgEwATUBOAE6AT8BQgFEAUkBTAFOAVMBVgFYAV0BYAFiAWcBagFsAXEBdAF2AXsBfgGAAYUBiAGKAY8BkgGUAZkBnAGeAaMB",
            "pgGoAa0BsAGyAbcBugG8AcEBxAHGAcsBzgHQAdUB2AHaAd8B4gHkAekB7AAAAAAAAAIBAAAAAAAAAHAAAAAAAAAAAAAAAAAAAAHu",
        ],
    ])
    func keyedArchiveOfWidelySharedArraysIsRefused(base64: [String]) throws {
        let data = try #require(Data(base64Encoded: base64.joined()))
        #expect(data.count == 750)
        let error = archiveError {
            _ = try GraphUnarchiver(forReadingKeyedArchive: data, registry: GraphTypeRegistry())
        }
        if !base64[1].contains("0g4P6hFY") {
            #expect(
                error?.code == .limitExceeded && error?.message.contains("times its size") == true,
                "\(String(describing: error))"
            )
        } else {
            #expect(
                error?.message == "object 13 refers to object 234, but the property list has 112",
                "\(String(describing: error))"
            )
        }
    }
}

// Tests/GraphArchiveTests/Unarchiving/WrongTypeErrorTests.swift - asking for the wrong type says what the archive holds

import Foundation
import Testing

@testable import GraphArchive

@Suite("Wrong types")
struct WrongTypeErrorTests {
    /// Four notes, one class.
    static func notesArchive() throws -> Data {
        try GraphArchiver.archivedData(withRootObject: fourNoteTree(parentLink: .conditional))
    }

    /// Asking an archive of notes for strings names both, not a registry problem: through every
    /// one-call decode.
    @Test func stringsFromAnArchiveOfNotesSayWhatTheRootIs() throws {
        let data = try Self.notesArchive()
        let expected = "the archive's root is an array of 4 OutlineNote objects; asked for [String]"
        let fromData = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [String].self, from: data)
        }
        #expect(fromData?.message == expected, "\(String(describing: fromData))")
        #expect(fromData?.keyPath == ["root"])

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wrong-type-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.gs").path
        try data.write(to: URL(fileURLWithPath: path))
        let fromFile = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [String].self, fromFile: path)
        }
        #expect(fromFile?.message == expected)
        let fromAnyFile = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [String].self, fromAnyArchiveFile: path)
        }
        #expect(fromAnyFile?.message == expected)

        let keyed = try KeyedArchive.archivedData(withRootObject: fourNoteTree(parentLink: .conditional))
        let fromKeyed = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [String].self, fromKeyedArchive: keyed)
        }
        #expect(fromKeyed?.message == expected, "\(String(describing: fromKeyed))")
    }

    @Test func aValueFromAnArchiveOfOneObjectSaysWhatTheRootIs() throws {
        let data = try GraphArchiver.archivedData(withRootObject: OutlineNote("alone"))
        let error = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: String.self, from: data)
        }
        #expect(error?.message == "the archive's root is an OutlineNote object (#0); asked for String")
    }

    /// Mixed classes are listed, each once.
    @Test func mixedClassesAreListed() throws {
        let data = try GraphArchiver.archivedData(withRootObject: mixedNotes())
        let error = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Int].self, from: data)
        }
        #expect(
            error?.message
                == "the archive's root is an array of 5 objects (Note, Checklist, Reminder, UrgentReminder); "
                + "asked for [Int]",
            "\(String(describing: error))"
        )
    }

    /// Asking for classes the archive does not hold is still about registration (they could
    /// be subclasses, or renamed), and says what the root is and what was asked for.
    @Test func otherClassesAreAnUnknownTypeErrorThatSaysWhatTheRootIs() throws {
        let data = try Self.notesArchive()
        let error = expectArchiveError(.unknownType) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data)
        }
        let message = error?.message ?? ""
        #expect(message.contains("\"OutlineNote\", which is not registered"), "\(message)")
        #expect(message.contains("(the archive's root is an array of 4 OutlineNote objects; asked for [Record])"))
    }

    /// With the classes registered, the objects are built and the root's decode reports the
    /// mismatch where it is.
    @Test func registeredClassesReadAsValuesAreATypeMismatchAtTheRoot() throws {
        let data = try Self.notesArchive()
        let error = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [String].self,
                from: data,
                registry: GraphTypeRegistry([OutlineNote.self])
            )
        }
        #expect(error?.message == "expected [String], found an array of 4 OutlineNote objects")
        #expect(error?.keyPath == ["root"])
    }

    @Test func valuesReadAsOtherValuesNameWhatIsStored() throws {
        let strings = try GraphArchiver.archivedData(withRootObject: ["a", "b", "c"])
        let asInt = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: Int.self, from: strings)
        }
        #expect(asInt?.message == "expected Int, found an array of 3 values")
        let asNotes = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [OutlineNote].self, from: strings)
        }
        #expect(asNotes?.message == "expected OutlineNote, found String", "\(String(describing: asNotes))")

        let record = try GraphArchiver.archivedData(withRootObject: Everything())
        let asStrings = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [String].self, from: record)
        }
        #expect(asStrings?.message == "expected [String], found an Everything value")
    }

    /// The Codable bridge names the class of an object found where a value was asked for.
    @Test func codableDecoderNamesTheClassFoundWhereAValueWasAskedFor() throws {
        #expect {
            _ = try GraphArchiveDecoder().decode([String].self, from: Self.notesArchive())
        } throws: { error in
            guard case .typeMismatch(_, let context) = error as? DecodingError else { return false }
            return context.debugDescription.contains("expected String, found an OutlineNote object (#")
        }
    }

    /// A reference where a value was asked for names the object's class.
    @Test func aReferenceReadAsAValueNamesItsClass() throws {
        let note = OutlineNote("n")
        let data = try GraphArchiver.archivedData(withRootObject: [note, note])
        let error = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [String].self,
                from: data,
                registry: GraphTypeRegistry([OutlineNote.self])
            )
        }
        #expect(error?.message == "expected [String], found an array of 2 OutlineNote objects")
    }
}

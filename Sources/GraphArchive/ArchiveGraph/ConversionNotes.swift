// Sources/GraphArchive/ArchiveGraph/ConversionNotes.swift - what a keyed archive converted to gridstore keeps beside its values
//
// A gridstore archive converted from a keyed archive holds, besides its top-level keys, the
// entry `$keyedArchive` (FORMAT.md §12): the `$classes` list of each class, and where a value
// was stored otherwise than a keyed writer stores it by default (a number by UID, bytes
// inline, an NSArray rather than an NSMutableArray, an NSNull…). Converting back applies them,
// so the keyed archive that comes out holds what went in.

/// A value's note: its form, and whether bytes stand for a 16-byte integer.
struct NoteForm: Hashable {
    var form = ValueForm.unspecified
    /// Bytes (16, big endian) that stand for an integer outside both 64-bit ranges.
    var isInteger128 = false

    var isEmpty: Bool { form == .unspecified && !isInteger128 }

    /// The notes' words for this form, one or two.
    var words: [String] {
        var words: [String] = []
        switch form.storage {
        case .inline: words.append(ConversionNotes.inlineWord)
        case .reference: words.append(ConversionNotes.referenceWord)
        case .unspecified: break
        }
        switch form.instance {
        case .plain: words.append(ConversionNotes.plainWord)
        case .instance(let name): words.append(name)
        case .unspecified: break
        }
        if isInteger128 { words.append(ConversionNotes.integer128Word) }
        return words
    }

    /// Adds the meaning of one word.
    mutating func add(_ word: String) {
        switch word {
        case ConversionNotes.inlineWord: form.storage = .inline
        case ConversionNotes.referenceWord: form.storage = .reference
        case ConversionNotes.plainWord: form.instance = .plain
        case ConversionNotes.integer128Word: isInteger128 = true
        default: form.instance = .instance(word)
        }
    }
}

/// The notes of one field: forms by path (element positions from the field's value; a
/// dictionary's entry `i` is `2i` for its key and `2i + 1` for its value).
struct FieldNotes {
    var forms: [(path: [Int], form: NoteForm)] = []

    var isEmpty: Bool { forms.isEmpty }

    func form(at path: [Int]) -> NoteForm? {
        forms.first { $0.path == path }?.form
    }
}

/// The `$keyedArchive` entry of a converted archive.
struct ConversionNotes {
    /// The reserved top-level key.
    static let topLevelKey = "$keyedArchive"
    static let classesKey = "classes"
    static let formsKey = "forms"
    static let inlineWord = "$inline"
    static let referenceWord = "$reference"
    static let plainWord = "$plain"
    static let integer128Word = "$int128"
    /// The object index notes of the top level are filed under.
    static let topLevel = -1

    /// The `$classes` list of each class by name; an inner nil: the class entry had none.
    var classChains: [String: [String]?] = [:]
    /// Forms by object index (``topLevel`` for the top level), then key.
    var fields: [Int: [String: FieldNotes]] = [:]

    init() {}

    var isEmpty: Bool { classChains.isEmpty && fields.isEmpty }

    /// Reads notes from the value of a `$keyedArchive` entry.
    ///
    /// - Throws: `.corrupt` naming what is malformed.
    init(parsing value: ArchiveValue) throws(GraphArchiveError) {
        guard case .dictionary(let entries) = value else { throw Self.malformed("is not a dictionary") }
        for entry in entries {
            switch entry.key {
            case .string(Self.classesKey):
                guard case .dictionary(let classes) = entry.value else { throw Self.malformed("classes") }
                for item in classes {
                    guard case .string(let name) = item.key else { throw Self.malformed("a class name") }
                    switch item.value {
                    case .null: classChains[name] = .some(nil)
                    case .array(let chain): classChains[name] = .some(try chain.map(Self.string))
                    default: throw Self.malformed("the classes of \(name)")
                    }
                }
            case .string(Self.formsKey):
                guard case .array(let notes) = entry.value else { throw Self.malformed("forms") }
                for note in notes {
                    guard case .array(let parts) = note, parts.count == 4, case .integer(let object) = parts[0],
                        object >= Int64(Self.topLevel), case .string(let key) = parts[1],
                        case .array(let path) = parts[2], case .string(let word) = parts[3]
                    else { throw Self.malformed("a form") }
                    let positions = try path.map { (element) throws(GraphArchiveError) -> Int in
                        guard case .integer(let position) = element, position >= 0 else {
                            throw Self.malformed("a form's path")
                        }
                        return Int(position)
                    }
                    add(word, object: Int(object), key: key, path: positions)
                }
            default:
                // Later writers may add entries; they are not ours to read.
                break
            }
        }
    }

    private static func string(_ value: ArchiveValue) throws(GraphArchiveError) -> String {
        guard case .string(let string) = value else { throw malformed("a class name") }
        return string
    }

    private static func malformed(_ what: String) -> GraphArchiveError {
        GraphArchiveError(.corrupt, "the archive's \(topLevelKey) entry is malformed: \(what)")
    }

    /// Files `word` for the value at `path` of field `key` of `object`.
    mutating func add(_ word: String, object: Int, key: String, path: [Int]) {
        var notes = fields[object, default: [:]][key, default: FieldNotes()]
        if let index = notes.forms.firstIndex(where: { $0.path == path }) {
            notes.forms[index].form.add(word)
        } else {
            var form = NoteForm()
            form.add(word)
            notes.forms.append((path, form))
        }
        fields[object, default: [:]][key] = notes
    }

    /// The notes of field `key` of `object`, if any.
    func notes(object: Int, key: String) -> FieldNotes? {
        fields[object]?[key]
    }

    /// Whether `object` has notes at all (most objects have none: a quick test first).
    func hasNotes(object: Int) -> Bool {
        !fields.isEmpty && fields[object] != nil
    }

    /// The notes as the value of a `$keyedArchive` entry.
    var value: ArchiveValue {
        var entries: [ArchiveDictionaryEntry] = []
        if !classChains.isEmpty {
            let classes = classChains.keys.sorted().map { name in
                ArchiveDictionaryEntry(
                    key: .string(name),
                    value: classChains[name]!.map { .array($0.map(ArchiveValue.string)) } ?? .null
                )
            }
            entries.append(ArchiveDictionaryEntry(key: .string(Self.classesKey), value: .dictionary(classes)))
        }
        if !fields.isEmpty {
            var notes: [ArchiveValue] = []
            for object in fields.keys.sorted() {
                for (key, field) in fields[object]!.sorted(by: { $0.key < $1.key }) {
                    for (path, form) in field.forms {
                        for word in form.words {
                            notes.append(
                                .array([
                                    .integer(Int64(object)), .string(key), .array(path.map { .integer(Int64($0)) }),
                                    .string(word),
                                ])
                            )
                        }
                    }
                }
            }
            entries.append(ArchiveDictionaryEntry(key: .string(Self.formsKey), value: .array(notes)))
        }
        return .dictionary(entries)
    }
}

/// What kind of value a visitor event carries, for the defaults of ``ValueForm``.
enum ValueKind {
    case null, number, string, data, date, array, dictionary, record, object
}

extension ValueForm {
    /// How a keyed writer stores a value of `kind` when nothing says otherwise, as
    /// NSKeyedArchiver does: under a key (`inField`), numbers and booleans in place
    /// (`encodeInteger(_:forKey:)`) and everything else by UID; in a container, everything by
    /// UID. Strings, numbers and data are plain property list values, dates NSDate instances,
    /// arrays NSMutableArray, dictionaries NSMutableDictionary, nil UID 0.
    static func keyedDefault(for kind: ValueKind, inField: Bool) -> ValueForm {
        let storage: Storage = inField && kind == .number ? .inline : .reference
        switch kind {
        case .date: return ValueForm(storage: storage, instance: .instance("NSDate"))
        case .array: return ValueForm(storage: storage, instance: .instance("NSMutableArray"))
        case .dictionary: return ValueForm(storage: storage, instance: .instance("NSMutableDictionary"))
        case .record, .object: return ValueForm(storage: storage, instance: .unspecified)
        default: return ValueForm(storage: storage, instance: .plain)
        }
    }

    /// This form with its unspecified parts taken from `defaults`.
    func filled(from defaults: ValueForm) -> ValueForm {
        ValueForm(
            storage: storage == .unspecified ? defaults.storage : storage,
            instance: instance == .unspecified ? defaults.instance : instance
        )
    }
}

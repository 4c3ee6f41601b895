// Benchmarks/Peers/KeyedArchiving.swift - Foundation's NSKeyedArchiver as the peer models call it

import Foundation

/// The calls an iOS app makes, on Linux's Foundation: archive a root object, read it back.
enum KeyedArchiving {
    static func archive(_ root: NSObject) throws -> Data {
        try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: false)
    }

    /// The root object of `data` as `T`. Decoding errors are returned, not trapped on.
    static func unarchive<T>(_ data: Data, as _: T.Type) throws -> T {
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.requiresSecureCoding = false
        // The default policy traps on a decoding error; a benchmark must fail, not crash.
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        let root = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
        unarchiver.finishDecoding()
        if let error = unarchiver.error { throw error }
        guard let typed = root as? T else {
            throw VerificationError(
                "NSKeyedUnarchiver returned \(root.map { "\(type(of: $0))" } ?? "nil"), not \(T.self)"
            )
        }
        return typed
    }
}

/// The Codable encoders users reach for, each with its decoder.
enum CodableFormat: Sendable {
    case json
    case binaryPropertyList

    var encoderName: String {
        switch self {
        case .json: "JSONEncoder"
        case .binaryPropertyList: "PropertyListEncoder (binary)"
        }
    }

    var decoderName: String {
        switch self {
        case .json: "JSONDecoder"
        case .binaryPropertyList: "PropertyListDecoder (binary)"
        }
    }

    var group: String {
        switch self {
        case .json: "json"
        case .binaryPropertyList: "plist"
        }
    }

    func encode<Value: Encodable>(_ value: Value) throws -> Data {
        switch self {
        case .json:
            return try JSONEncoder().encode(value)
        case .binaryPropertyList:
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            return try encoder.encode(value)
        }
    }

    /// Whether `archive` holds what `reference` does: the same bytes, or for JSON the same
    /// values with each object's members in another order (see ``JSONText``).
    func isSameArchive(_ archive: Data, as reference: Data) -> Bool {
        archive == reference || (self == .json && JSONText.isReordering(archive, of: reference))
    }

    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        switch self {
        case .json: try JSONDecoder().decode(type, from: data)
        case .binaryPropertyList: try PropertyListDecoder().decode(type, from: data)
        }
    }
}

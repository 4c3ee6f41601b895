// Sources/GraphArchive/Unarchiving/KeyReadOrders.swift - the order each class's initializer reads its keys in

/// The order in which each model class's ``GraphCoding/init(from:)`` was seen to read its
/// keys, kept for the life of the process.
///
/// A keyed archive stores each instance's keys in the order of its dictionary (Foundation's
/// hash order), which is seldom the order an initializer reads them in. A record read in
/// another order than stored costs the decoder a walk over its values and a slower lookup
/// per key, so the keyed reader writes a class's fields in the order noted here: once one
/// archive has shown how a class reads, later keyed archives decode in stored order. Only
/// the order of a record's values changes, never what they are.
package enum KeyReadOrders {
    /// At most this many classes are noted (later ones are not), and of each this many keys of
    /// at most so many UTF-8 bytes in all: neither an initializer that makes up its keys nor an
    /// archive's long key names (an order noted may include keys stored between those read)
    /// can grow the table without bound.
    static let maximumClasses = 1024
    static let maximumKeys = 64
    static let maximumKeyBytes = 4096

    private static let orders = Locked<[ObjectIdentifier: [String]]>([:])

    /// Notes that `type` read `keys`, in that order, unless the order noted already agrees
    /// (holds `keys` in the same order, and maybe more: read from records with more keys).
    static func note(_ keys: [String], for type: AnyObject.Type) {
        var bytes = 0
        let keys = Array(
            keys.prefix(maximumKeys).prefix {
                bytes += $0.utf8.count
                return bytes <= maximumKeyBytes
            }
        )
        orders.withLock { orders in
            if let noted = orders[ObjectIdentifier(type)] {
                guard !isSubsequence(keys, of: noted) else { return }
            } else if orders.count >= maximumClasses {
                return
            }
            orders[ObjectIdentifier(type)] = keys
        }
    }

    private static func isSubsequence(_ keys: [String], of noted: [String]) -> Bool {
        var rest = noted[...]
        for key in keys {
            guard let found = rest.firstIndex(of: key) else { return false }
            rest = rest[(found + 1)...]
        }
        return true
    }

    /// Forgets how `type` reads, as if this process had never decoded it: for the benchmark's
    /// row of a process's first read.
    package static func forget(_ type: AnyObject.Type) {
        _ = orders.withLock { $0.removeValue(forKey: ObjectIdentifier(type)) }
    }

    /// The keys `type` was last seen to read, in order; nil if no read of it was noted.
    static func keys(for type: AnyObject.Type) -> [String]? {
        orders.withLock { $0[ObjectIdentifier(type)] }
    }
}

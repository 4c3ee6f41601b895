// Benchmarks/Harness/Comparisons.swift - gridstore's times against each peer and each floor

/// Ratios gridstore/other for encode and decode: below 1 gridstore is faster than a peer or a
/// reference row; against a floor, how many times the limit gridstore takes.
enum Comparisons {
    /// Floors are sums of measured parts (``floorParts``), and for a zstd row zstd alone
    /// compressing or decompressing, so that it is held to zstd's own speed too.
    static func make(_ results: [CaseResult]) -> [Comparison] {
        var comparisons: [Comparison] = []
        func median(_ subject: String, _ operation: OperationKind, _ compression: String = "-") -> Double? {
            results.first {
                $0.status == .ok && $0.role == .floor && $0.subject == subject && $0.operation == operation
                    && $0.compression == compression
            }?.seconds?.median
        }
        for gridstore in results where gridstore.role == .gridstore && gridstore.status == .ok {
            guard let gridstoreSeconds = gridstore.seconds?.median,
                gridstore.operation == .encode || gridstore.operation == .decode
            else { continue }
            func compare(_ against: String, _ role: Role, _ seconds: Double, scaledFrom: Int? = nil) {
                comparisons.append(
                    Comparison(
                        workload: gridstore.workload,
                        operation: gridstore.operation,
                        compression: gridstore.compression,
                        against: against,
                        againstRole: role,
                        gridstoreSeconds: gridstoreSeconds,
                        otherSeconds: seconds,
                        ratio: gridstoreSeconds / seconds,
                        otherScaledFrom: scaledFrom,
                        subject: results.isMainGridstoreRow(gridstore) ? nil : gridstore.subject
                    )
                )
            }
            if gridstore.compression == "none" {
                for peer in results
                where peer.role == .peer && peer.status == .ok && peer.operation == gridstore.operation {
                    guard let seconds = peer.seconds?.median else { continue }
                    compare(peer.subject, .peer, seconds, scaledFrom: peer.isScaled ? peer.measuredRecords : nil)
                }
            }
            for reference in results
            where reference.role == .reference && reference.status == .ok
                && reference.operation == gridstore.operation && reference.compression == gridstore.compression
            {
                guard let seconds = reference.seconds?.median else { continue }
                compare(reference.subject, .reference, seconds)
            }
            let isZstd = gridstore.compression != "none"
            let zstdPart: Double? =
                isZstd
                ? median("zstd alone", gridstore.operation == .encode ? .compress : .decompress, gridstore.compression)
                : 0
            let parts = floorParts.filter { $0.of == gridstore.operation }
            let partSeconds = parts.compactMap { median($0.subject, $0.operation) }
            if !parts.isEmpty, partSeconds.count == parts.count, let zstdPart {
                let names = parts.map(\.subject) + (isZstd ? ["zstd alone"] : [])
                compare(
                    "\(gridstore.operation.rawValue) floor (\(names.joined(separator: " + ")))",
                    .floor,
                    partSeconds.reduce(0, +) + zstdPart
                )
            }
        }
        return comparisons
    }

    /// The measured parts whose sum is each operation's floor without compression: encode =
    /// traversal + memcpy, decode = build from arrays. The size growth sums the same parts.
    static let floorParts: [FloorPart] = [
        FloorPart(subject: "traversal", operation: .traverse, of: .encode),
        FloorPart(subject: "memcpy", operation: .memcpy, of: .encode),
        FloorPart(subject: "build from arrays", operation: .build, of: .decode),
    ]
}

/// One measured part of a floor: the floor row `subject`, timing `operation`, is part of the
/// floor of gridstore's operation `of`.
struct FloorPart {
    var subject: String
    var operation: OperationKind
    var of: OperationKind
}

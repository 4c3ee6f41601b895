// Benchmarks/Harness/Comparisons.swift - gridstore's times against each peer and each floor

/// Ratios gridstore/other for encode and decode: below 1 gridstore is faster than a peer;
/// against a floor, how many times the limit gridstore takes.
enum Comparisons {
    /// Floors are sums of measured parts: encode = traversal + memcpy (+ zstd compress), decode
    /// = build from arrays (+ zstd decompress), so a zstd row is held to zstd's own speed too.
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
            let isZstd = gridstore.compression != "none"
            let zstdPart: Double? =
                isZstd
                ? median("zstd alone", gridstore.operation == .encode ? .compress : .decompress, gridstore.compression)
                : 0
            let zstdName = isZstd ? " + zstd alone" : ""
            switch gridstore.operation {
            case .encode:
                if let traversal = median("traversal", .traverse), let copy = median("memcpy", .memcpy), let zstdPart {
                    compare("encode floor (traversal + memcpy\(zstdName))", .floor, traversal + copy + zstdPart)
                }
            default:
                if let build = median("build from arrays", .build), let zstdPart {
                    compare("decode floor (build from arrays\(zstdName))", .floor, build + zstdPart)
                }
            }
        }
        return comparisons
    }
}

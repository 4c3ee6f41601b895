// swift-tools-version: 6.2
// gridstore: fast, typed, safe object-graph archives (the NSKeyedArchiver job) for Swift on Linux.

import PackageDescription

/// Settings every Swift target shares: Swift 6 mode comes from `swiftLanguageModes`,
/// these add the upcoming features that keep existentials explicit and imports honest.
let sharedSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "gridstore",
    products: [
        .library(name: "GraphArchive", targets: ["GraphArchive"]),
    ],
    targets: [
        // The generic engine: format, keyed coding, references, files. No domain knowledge.
        .target(
            name: "GraphArchive",
            swiftSettings: sharedSwiftSettings
        ),
        .testTarget(
            name: "GraphArchiveTests",
            dependencies: ["GraphArchive"],
            swiftSettings: sharedSwiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

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
        .library(name: "GridStore", targets: ["GridStore"]),
        .executable(name: "gridstore", targets: ["GridStoreCLI"]),
        .executable(name: "Benchmarks", targets: ["Benchmarks"]),
    ],
    traits: [
        // zstd compression through the system libzstd (Debian: libzstd-dev). Disable with
        // `--disable-default-traits` to build where libzstd is missing; compressed archives
        // then fail to load with `.compressionUnavailable`.
        .trait(name: "Zstd", description: "Compress archives with zstd through the system libzstd"),
        .default(enabledTraits: ["Zstd"]),
    ],
    targets: [
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        // Page calls the engine makes in C: mremap is variadic, which Swift does not import.
        .systemLibrary(name: "CPages"),
        // The generic engine: format, keyed coding, references, files. No domain knowledge.
        .target(
            name: "GraphArchive",
            dependencies: [.target(name: "CZstd", condition: .when(traits: ["Zstd"])), "CPages"],
            swiftSettings: sharedSwiftSettings
        ),
        // The grid-state domain: records, the shared data source, import/export, generation.
        .target(
            name: "GridStore",
            dependencies: ["GraphArchive"],
            swiftSettings: sharedSwiftSettings
        ),
        // The `gridstore` command-line tool (module name differs from GridStore in more than case).
        .executableTarget(
            name: "GridStoreCLI",
            dependencies: ["GridStore", "GraphArchive"],
            swiftSettings: sharedSwiftSettings
        ),
        // `swift run -c release Benchmarks`: gridstore against Foundation's archivers and floors.
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "GridStore", "GraphArchive",
                // zstd's own speed on the archive payload is one of the floors.
                .target(name: "CZstd", condition: .when(traits: ["Zstd"])),
            ],
            path: "Benchmarks",
            // The checked-in run that --baseline compares with and docs/BENCHMARKS.md shows.
            exclude: ["baseline.json"],
            swiftSettings: sharedSwiftSettings
        ),
        // Helpers every test target shares (scratch folders); no test of its own.
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport",
            swiftSettings: sharedSwiftSettings
        ),
        .testTarget(
            name: "GraphArchiveTests",
            dependencies: ["GraphArchive", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: sharedSwiftSettings
        ),
        .testTarget(
            name: "GridStoreTests",
            dependencies: ["GridStore", "GraphArchive", "TestSupport"],
            swiftSettings: sharedSwiftSettings
        ),
        // Parses command lines in-process (@testable import of the executable target) and runs
        // the built `gridstore` end to end.
        .testTarget(
            name: "GridStoreCLITests",
            dependencies: ["GridStoreCLI", "GridStore", "GraphArchive", "TestSupport"],
            swiftSettings: sharedSwiftSettings
        ),
        // The harness's own logic: flags, checks that catch wrong results, scaling, every case at small N.
        .testTarget(
            name: "BenchmarksTests",
            dependencies: ["Benchmarks", "GridStore", "GraphArchive", "TestSupport"],
            swiftSettings: sharedSwiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

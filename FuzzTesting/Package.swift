// swift-tools-version: 6.2
// Fuzzing and crash-safety harness for gridstore, kept out of the root package so its normal
// `swift build` never needs libFuzzer. Build and run through `scripts/fuzz` (see FuzzTesting/README.md).

import PackageDescription

let sharedSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "FuzzTesting",
    dependencies: [.package(name: "gridstore", path: "..")],
    targets: [
        // Models and the "run every reader on these bytes" routine the fuzz targets share.
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "GraphArchive", package: "gridstore"),
                .product(name: "GridStore", package: "gridstore"),
            ],
            swiftSettings: sharedSwiftSettings
        ),
        // libFuzzer targets: no main of their own (libFuzzer's `main` drives them), so they link
        // only with `--sanitize=fuzzer`.
        .executableTarget(name: "FuzzArchive", dependencies: ["FuzzSupport"], swiftSettings: sharedSwiftSettings),
        .executableTarget(name: "FuzzCompressed", dependencies: ["FuzzSupport"], swiftSettings: sharedSwiftSettings),
        .executableTarget(name: "FuzzKeyedArchive", dependencies: ["FuzzSupport"], swiftSettings: sharedSwiftSettings),
        // Seed corpus writer, crash-safe save torture and concurrent-writer checks.
        .executableTarget(
            name: "FuzzTool",
            dependencies: ["FuzzSupport", .product(name: "GraphArchive", package: "gridstore")],
            swiftSettings: sharedSwiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

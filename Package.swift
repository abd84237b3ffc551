// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Folio",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Folio", targets: ["Folio"]),
        .library(name: "FolioTesting", targets: ["FolioTesting"]),
        .library(name: "FolioProviders", targets: ["FolioProviders"]),
        // The drive's sync engine: a product so that the fuzz targets reach its formats.
        .library(name: "FolioSync", targets: ["FolioSync"]),
        // The daemon: a product so that the wire-frame fuzz target decodes frames through its routes.
        .library(name: "FolioDaemon", targets: ["FolioDaemon"]),
        // `folio`: a small front without Foundation that answers `folio search` itself and hands
        // every other command to `folio-tool` beside it (the whole CLI and the daemon).
        .executable(name: "folio", targets: ["folio"]),
        .executable(name: "folio-tool", targets: ["folio-tool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // SHA-256 for the content-addressed version store (later: HMAC for signed bookmarks, SigV4).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // HTTP for the WebDAV and S3 providers (TLS included, for real servers).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // The browser and picker page the daemon serves on loopback (issue 18); no optional traits.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    ],
    targets: [
        // C declarations Swift's Glibc module lacks: xattrs, OFD locks.
        .target(name: "CFolioShims"),
        // Thin, documented syscall wrappers; errno becomes `Errno`. The inotify watcher logs its errors.
        .target(
            name: "FolioSystem",
            dependencies: [
                "CFolioShims",
                "FolioWire",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // UTType, the type database, declarations, handler choice.
        .target(
            name: "UniformTypes",
            dependencies: [
                "CFolioShims",
                "FolioSystem",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The wire protocol's JSON values, parsed and written without Foundation (for the `folio` front).
        .target(name: "FolioWire"),
        // The library apps import: `import Folio` gives the whole public API.
        .target(
            name: "Folio",
            dependencies: [
                "FolioWire",
                "UniformTypes",
                "FolioSystem",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The drive's sync: the journal, planner and engine, and the drive's formats (its configuration,
        // shared conflicts). It needs only the `FileProvider` protocol, never a provider's HTTP.
        .target(
            name: "FolioSync",
            dependencies: [
                "Folio",
                "FolioSystem",
                "UniformTypes",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The per-user daemon's services and `buildDaemon(configuration:)`.
        .target(
            name: "FolioDaemon",
            dependencies: [
                "CFolioShims",
                "Folio",
                "FolioSync",
                "FolioSystem",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The page's guard on raw HTTP/1 heads (`RequestTargetGuard`).
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The C collation that orders names as Finder does (`NaturalNameOrder`).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            // The web page's HTML, CSS and JavaScript modules (no npm, nothing fetched from elsewhere).
            resources: [.copy("Web/Static")]
        ),
        // Providers: the local folder, WebDAV (S3 follows), out-of-process providers and the validation suite.
        .target(
            name: "FolioProviders",
            dependencies: [
                "Folio",
                "FolioSystem",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Folio's version, and the commit it was built from (written before each build by BuildCommit).
        .target(name: "FolioVersion", plugins: ["BuildCommit"]),
        .plugin(name: "BuildCommit", capability: .buildTool()),
        // `folio`'s front: starts in a few milliseconds (no Foundation), answers `folio search`, and
        // executes `folio-tool` for everything else.
        // Run from a build folder where `folio-tool` is not built yet (`swift run folio daemon` on a
        // fresh clone builds only this), it builds the tool first. (Depending on `folio-tool` here
        // would link the tool's libraries, Foundation among them, into the front.)
        .executableTarget(name: "folio", dependencies: ["FolioWire"]),
        // The `folio` command's whole: daemon, types, drive, bench…
        .executableTarget(
            name: "folio-tool",
            dependencies: [
                "CFolioShims",
                "Folio",
                "FolioDaemon",
                "FolioProviders",
                "FolioSync",
                "FolioVersion",
                // The benchmarks start the same real servers the tests use (`folio bench sync`).
                "FolioServers",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/FolioTool"
        ),
        // Real servers on loopback (Apache, WsgiDAV, rclone, moto) and a headless Chromium over WebDriver, with
        // the scratch folders and process runs they need: for the tests (through FolioTesting) and `folio bench`.
        .target(name: "FolioServers", dependencies: [.product(name: "AsyncHTTPClient", package: "async-http-client")]),
        // Fixtures shared by the project's tests and by apps' tests; re-exports FolioServers.
        .target(name: "FolioTesting", dependencies: ["Folio", "FolioSystem", "FolioServers", .product(name: "Crypto", package: "swift-crypto")]),
        // Swift Testing traits for the project's tests (a target of their own, so FolioTesting needs no Testing):
        // the elastic executor, and the stall watchdog's report per test.
        .target(name: "FolioTestTraits", dependencies: ["FolioTesting"]),
        // Runs coordination scripts from stdin: the other process in cross-process tests.
        .executableTarget(name: "FolioCoordinationHelper", dependencies: ["Folio", "FolioTesting"]),
        .executableTarget(name: "FolioAppHelper", dependencies: ["Folio", "FolioSystem"]),
        .testTarget(
            name: "FolioSystemTests",
            dependencies: ["FolioSystem", "FolioWire", "FolioTesting", "FolioTestTraits", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "UniformTypesTests", dependencies: ["UniformTypes", "Folio", "FolioTesting", "FolioTestTraits"]),
        .testTarget(name: "FolioDaemonTests", dependencies: ["FolioDaemon", "FolioTesting", "FolioTestTraits", "folio", "folio-tool"]),
        .testTarget(name: "MetadataTests", dependencies: ["Folio", "FolioTesting", "FolioTestTraits", "folio", "folio-tool"]),
        .testTarget(name: "AccessTests", dependencies: ["Folio", "FolioTesting", "FolioTestTraits", "folio", "folio-tool", "FolioAppHelper", "FolioCoordinationHelper"]),
        // Attacks on the isolation layer, each asserting its refusal (issue 17).
        .testTarget(name: "SecurityTests", dependencies: ["Folio", "FolioDaemon", "FolioSystem", "FolioTesting", "FolioTestTraits", "folio", "folio-tool"]),
        .testTarget(name: "DocumentTests", dependencies: ["Folio", "FolioTesting", "FolioTestTraits", "FolioCoordinationHelper"]),
        .testTarget(
            name: "ProviderTests", dependencies: ["Folio", "FolioProviders", "FolioTesting", "FolioTestTraits", "folio", "folio-tool"], exclude: ["Fixtures"]),
        .testTarget(
            name: "SyncTests",
            dependencies: [
                "Folio", "FolioDaemon", "FolioProviders", "FolioSync", "FolioSystem", "FolioTesting", "FolioTestTraits", "folio", "folio-tool",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        // The browser page in a real headless Chromium over WebDriver, and attacks on its gate (issue 18).
        .testTarget(
            name: "WebTests",
            dependencies: [
                "Folio", "FolioTesting", "FolioTestTraits", "folio", "folio-tool", "FolioAppHelper",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),
        // Apple's published samples, ported with only their import and UI lines changed (issue 21):
        // one folder of sources, compiled in Swift 6 mode here and in Swift 5 mode by
        // ApplePortTests5 (whose Samples folder is a symbolic link to this one).
        .testTarget(name: "ApplePortTests", dependencies: ["Folio", "FolioTesting", "FolioTestTraits", "folio", "folio-tool"]),
        .testTarget(name: "ApplePortTests5", dependencies: ["Folio", "FolioTesting", "FolioTestTraits", "folio", "folio-tool"]),
        .testTarget(
            name: "CoordinationTests", dependencies: ["Folio", "FolioSystem", "FolioTesting", "FolioTestTraits", "folio", "folio-tool", "FolioCoordinationHelper"]),
    ]
)

for target in package.targets where target.type != .system && target.type != .plugin {
    guard target.name != "CFolioShims" else { continue }
    // Apple's samples are compiled as Apple wrote them: without the project's upcoming features.
    if target.name.hasPrefix("ApplePortTests") {
        target.swiftSettings = [.swiftLanguageMode(target.name == "ApplePortTests5" ? .v5 : .v6)]
        continue
    }
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}

// AddressSanitizer over the project's own code only (`scripts/test` sets FOLIO_SANITIZE=address for
// its run of the suites that touch raw memory): the dependencies, already built for the debug run,
// are reused as they are rather than compiled again instrumented.
if Context.environment["FOLIO_SANITIZE"] == "address" {
    for target in package.targets where target.type != .system && target.type != .plugin {
        if target.name == "CFolioShims" {
            target.cSettings = (target.cSettings ?? []) + [.unsafeFlags(["-fsanitize=address"])]
        } else {
            target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=address"])]
        }
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=address"])]
    }
}

// swift-tools-version: 6.1
// libFuzzer targets for every parser of untrusted bytes. Build and run with ../scripts/fuzz, which
// compiles everything with -sanitize=fuzzer,address so the parsers themselves are instrumented.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, whatever the checkout is called.
let folio = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "FolioFuzz",
    dependencies: [.package(path: "..")],
    targets: [
        // libFuzzer's driver entry, shared by the targets.
        .target(name: "FuzzSupport"),
        // App manifests: XML/binary plist and JSON Info.plist keys.
        .executableTarget(
            name: "FuzzManifest", dependencies: ["FuzzSupport", .product(name: "Folio", package: folio)]),
        // shared-mime-info database files (globs2, subclasses, aliases, magic), dynamic identifiers, mimeapps.list.
        .executableTarget(
            name: "FuzzMimeDatabase", dependencies: ["FuzzSupport", .product(name: "Folio", package: folio)]),
        // The daemon's wire protocol: client frames, decoded through the daemon's routes into every
        // request type, and daemon events.
        .executableTarget(
            name: "FuzzWireFrame", dependencies: ["FuzzSupport", .product(name: "FolioDaemon", package: folio)]),
        .executableTarget(
            name: "FuzzTrashInfo", dependencies: ["FuzzSupport", .product(name: "FolioDaemon", package: folio)]),
        // The provider protocol: replies of out-of-process providers (items, pages, anchors, errors).
        .executableTarget(
            name: "FuzzProviderFrame", dependencies: ["FuzzSupport", .product(name: "Folio", package: folio)]),
        // WebDAV PROPFIND replies (multistatus XML) and the hrefs in them.
        .executableTarget(
            name: "FuzzMultistatus", dependencies: ["FuzzSupport", .product(name: "FolioProviders", package: folio)]),
        // S3 replies: ListObjectsV2 listings, errors and results.
        .executableTarget(
            name: "FuzzS3Reply", dependencies: ["FuzzSupport", .product(name: "FolioProviders", package: folio)]),
        // HTTP/1.1 replies read by the plain client: heads, framings, chunked bodies.
        .executableTarget(
            name: "FuzzHTTPReply", dependencies: ["FuzzSupport", .product(name: "FolioProviders", package: folio)]),
        // Placeholder stubs (`name.folio-cloud`) in the drive's replica, and shared conflict manifests.
        .executableTarget(
            name: "FuzzPlaceholder",
            dependencies: ["FuzzSupport", .product(name: "Folio", package: folio), .product(name: "FolioSync", package: folio)]),
        // Bookmark data: the signed envelope and the payload behind it.
        .executableTarget(
            name: "FuzzBookmark", dependencies: ["FuzzSupport", .product(name: "Folio", package: folio)]),
        // Metadata query predicates in Apple's format syntax.
        .executableTarget(
            name: "FuzzPredicate", dependencies: ["FuzzSupport", .product(name: "Folio", package: folio)]),
        // GTK's recently-used.xbel, read into the index's recents.
        .executableTarget(
            name: "FuzzRecentlyUsed", dependencies: ["FuzzSupport", .product(name: "Folio", package: folio)]),
        // FileWrapper's serialized representation (pasteboards and drags).
        .executableTarget(
            name: "FuzzFileWrapper", dependencies: ["FuzzSupport", .product(name: "Folio", package: folio)]),
        // ELF dynamic sections: the libraries a sandboxed app's executable loads from its folder.
        .executableTarget(
            name: "FuzzELF", dependencies: ["FuzzSupport", .product(name: "Folio", package: folio)]),
        // The version store's manifests and document identity attributes.
        .executableTarget(
            name: "FuzzVersionStore", dependencies: ["FuzzSupport", .product(name: "Folio", package: folio)]),
    ]
)

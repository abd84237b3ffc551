// swift-tools-version: 6.1
// An example document-based app built only on Folio's public API: the seeds' text-document sample.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, whatever the checkout is called.
let folio = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "TextDocuments",
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(name: "textdoc", dependencies: [.product(name: "Folio", package: folio)]),
        .testTarget(name: "TextDocumentsTests", dependencies: ["textdoc"]),
    ]
)

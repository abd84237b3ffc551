import Foundation
import FolioSystem
import FolioTesting
import FolioTestTraits
import SystemPackage
import Testing
@testable import UniformTypes

/// A corpus of real files, generated here, whose type Folio decides and `gio info` / `xdg-mime`
/// decide too: the differential oracle for content detection.
enum Corpus {
    static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41,
        0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0, 0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00,
        0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xFF, 0xD9]
    static let gif: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x21, 0xF9, 4, 1, 0, 0, 0, 0, 0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 1, 0, 0x3B]
    static let pdf = Array("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n".utf8)
    static let gzip: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03, 0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]
    static let zip: [UInt8] = [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 18)
    static let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0] + [UInt8](repeating: 0, count: 8) + [2, 0, 0x3E, 0] + [UInt8](repeating: 0, count: 44)

    /// name → bytes; names with and without telling extensions, so both globs and magic are tested.
    static let files: [(String, [UInt8])] = [
        ("image.png", png), ("image-no-extension", png), ("photo.jpg", jpeg), ("photo-noext", jpeg), ("anim.gif", gif),
        ("anim-noext", gif), ("doc.pdf", pdf), ("doc-noext", pdf), ("archive.gz", gzip), ("archive-noext", gzip),
        ("bundle.tar.gz", gzip), ("empty.zip", zip), ("zip-noext", zip), ("program", elf),
        ("notes.txt", Array("hello, world\n".utf8)), ("notes-noext", Array("plain words and more words\n".utf8)),
        ("page.html", Array("<!DOCTYPE html><html><head><title>x</title></head><body>x</body></html>\n".utf8)),
        ("page-noext", Array("<!DOCTYPE html>\n<html><head><title>x</title></head><body></body></html>\n".utf8)),
        ("data.json", Array("{\"a\": [1, 2, 3]}\n".utf8)), ("data.xml", Array("<?xml version=\"1.0\"?>\n<root/>\n".utf8)),
        ("xml-noext", Array("<?xml version=\"1.0\"?>\n<root><child/></root>\n".utf8)),
        ("script.sh", Array("#!/bin/sh\necho hi\n".utf8)), ("script-noext", Array("#!/bin/sh\necho hi\n".utf8)),
        ("tool.py", Array("#!/usr/bin/env python3\nprint(1)\n".utf8)), ("python-noext", Array("#!/usr/bin/env python3\nprint(1)\n".utf8)),
        ("main.c", Array("#include <stdio.h>\nint main(void) { return 0; }\n".utf8)), ("Makefile", Array("all:\n\ttrue\n".utf8)),
        ("README", Array("Read me.\n".utf8)), ("table.csv", Array("a,b\n1,2\n".utf8)), ("style.css", Array("body { color: red; }\n".utf8)),
        ("empty-file", []), ("binary-noext", [0x00, 0x01, 0x02, 0x03, 0xFE, 0xFF, 0x00, 0x10]),
        ("png-named.txt", png), ("song.mp3", [0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 32)),
        ("movie.mp4", [0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8)),
        ("font.ttf", [0, 1, 0, 0, 0, 0x0A, 0, 0x80, 0, 3, 0, 0x20]), ("sheet.ods", zip), ("book.epub", zip),
        ("vector.svg", Array("<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n".utf8)), ("UPPER.JPG", jpeg),
    ]

    static func make(in dir: TemporaryDirectory) throws -> [URL] {
        try files.map { try dir.write($0.0, Data($0.1)) }
    }

    static func gioType(_ url: URL) throws -> String? {
        guard let gio = ProcessRunner.which("gio") else { return nil }
        let out = try ProcessRunner.run(URL(fileURLWithPath: gio), ["info", "-a", "standard::content-type", url.path])
        return out.stdout.split(separator: "\n").first { $0.contains("standard::content-type:") }
            .map { String($0.split(separator: ":").dropFirst(2).joined(separator: ":")).trimmingCharacters(in: .whitespaces) }
    }
}

let hasGio = ProcessRunner.which("gio") != nil && hasSharedMimeInfo

@Suite("Content type of files on disk", .elasticPool)
struct ContentDetectionTests {
    let registry = TypeRegistry(configuration: .init(mimeDirectories: [systemMimeDirectory]))

    func detect(_ url: URL) throws -> (type: UTType, source: UTType.DetectionSource) {
        try UTType.contentType(ofItemAt: url, database: registry.database)
    }

    /// Folio's answer agrees with GIO's when GIO's MIME type is one of the type's MIME tags.
    @Test(.enabled(if: hasGio)) func corpusAgreesWithGio() throws {
        let dir = try TemporaryDirectory("corpus")
        var disagreements: [String] = []
        for url in try Corpus.make(in: dir) {
            let folio = try detect(url).type
            let gio = try #require(try Corpus.gioType(url))
            let gioType = registry.type(tag: gio, tagClass: .mimeType, conformingTo: nil)
            if folio != gioType { disagreements.append("\(url.lastPathComponent): folio \(folio.identifier), gio \(gio)") }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }

    /// `xdg-mime` uses libmagic here, a different database: Folio's type must equal or be related to
    /// its answer (one conforms to the other) wherever it gives one.
    @Test(.enabled(if: ProcessRunner.which("xdg-mime") != nil && hasSharedMimeInfo)) func corpusIsCompatibleWithXdgMime() throws {
        let dir = try TemporaryDirectory("corpus")
        let xdg = URL(fileURLWithPath: ProcessRunner.which("xdg-mime")!)
        var compared = 0
        var conflicts: [String] = []
        for name in ["image.png", "photo.jpg", "anim.gif", "doc.pdf", "archive.gz", "notes.txt", "page.html", "script.sh", "data.xml"] {
            let bytes = try #require(Corpus.files.first { $0.0 == name }?.1)
            let url = try dir.write(name, Data(bytes))
            let answer = try ProcessRunner.run(xdg, ["query", "filetype", url.path]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !answer.isEmpty, answer != "application/octet-stream",
                let theirs = registry.type(tag: answer, tagClass: .mimeType, conformingTo: nil), theirs.isDeclared
            else { continue }
            compared += 1
            let ours = try detect(url).type
            if !(ours.conforms(to: theirs) || theirs.conforms(to: ours)) { conflicts.append("\(name): folio \(ours), xdg-mime \(answer)") }
        }
        #expect(compared >= 5)
        #expect(conflicts.isEmpty, "\(conflicts)")
    }

    @Test(.enabled(if: hasSharedMimeInfo)) func nameFirstThenContent() throws {
        let dir = try TemporaryDirectory()
        _ = try Corpus.make(in: dir)
        #expect(try detect(dir.child("photo.jpg")) == (.jpeg, .name))
        #expect(try detect(dir.child("UPPER.JPG")).type == .jpeg)
        #expect(try detect(dir.child("image-no-extension")) == (.png, .content))
        #expect(try detect(dir.child("doc-noext")) == (.pdf, .content))
        #expect(try detect(dir.child("notes-noext")) == (.plainText, .textHeuristic))
        #expect(try detect(dir.child("binary-noext")) == (.data, .fallback))
        #expect(try detect(dir.child("png-named.txt")).type == .plainText)
        #expect(try detect(dir.child("bundle.tar.gz")).type.identifier == "org.freedesktop.mime.application.x-compressed-tar")
    }

    @Test func directoriesPackagesSymlinksAndMissingFiles() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.child("folder"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dir.child("Notes.rtfd"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dir.child("Tool.app"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dir.child("odd.jpg"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.child("link").path, withDestinationPath: "folder")
        #expect(try detect(dir.child("folder")).type == .folder)
        #expect(try detect(dir.child("Notes.rtfd")).type == .rtfd)
        #expect(try detect(dir.child("Tool.app")).type == .applicationBundle)
        #expect(try detect(dir.child("odd.jpg")).type == .folder)  // .jpg is not a package type
        #expect(try detect(dir.child("link")).type == .symbolicLink)
        do {
            _ = try detect(dir.child("missing"))
            Issue.record("expected an error")
        } catch let error as CocoaError {
            #expect(error.code == .fileReadNoSuchFile)
        }
    }

    @Test(.enabled(if: hasSharedMimeInfo)) func mimeTypeExtendedAttributeWins() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.write("labelled.txt", "not really text")
        do {
            try FilePath(url.path).setExtendedAttribute(named: "user.mime_type", to: Array("application/pdf".utf8))
        } catch {
            return  // The file system has no user xattrs; nothing to test.
        }
        #expect(try detect(url) == (.pdf, .extendedAttribute))
    }
}

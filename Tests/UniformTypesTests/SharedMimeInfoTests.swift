import Foundation
import FolioTesting
import FolioTestTraits
import Testing
@testable import UniformTypes

let systemMimeDirectory = "/usr/share/mime"
let hasSharedMimeInfo = FileManager.default.fileExists(atPath: systemMimeDirectory + "/types")

@Suite("shared-mime-info", .elasticPool)
struct SharedMimeInfoTests {
    let registry = TypeRegistry(configuration: .init(mimeDirectories: [systemMimeDirectory]))

    @Test(.enabled(if: hasSharedMimeInfo)) func everyMIMETypeOnTheMachineResolves() throws {
        let info = SharedMimeInfo.load(directories: [systemMimeDirectory])
        #expect(info.mimeTypes.count > 500)
        var unresolved: [String] = []
        for mime in info.mimeTypes {
            guard let type = registry.type(tag: mime, tagClass: .mimeType, conformingTo: nil), type.isDeclared,
                type.tags[.mimeType]?.contains(where: { $0.lowercased() == mime }) == true
            else {
                unresolved.append(mime)
                continue
            }
        }
        #expect(unresolved.isEmpty, "unresolved: \(unresolved.prefix(10))")
        // Aliases resolve to the canonical type.
        for (alias, canonical) in info.aliases.prefix(50) {
            #expect(registry.type(tag: alias, tagClass: .mimeType, conformingTo: nil) == registry.type(tag: canonical, tagClass: .mimeType, conformingTo: nil))
        }
    }

    @Test(.enabled(if: hasSharedMimeInfo)) func subclassEdgesBecomeConformance() throws {
        let info = SharedMimeInfo.load(directories: [systemMimeDirectory])
        var checked = 0
        var broken: [String] = []
        for (child, parents) in info.parents {
            guard let c = registry.type(tag: child, tagClass: .mimeType, conformingTo: nil) else { continue }
            for parent in parents {
                guard let p = registry.type(tag: parent, tagClass: .mimeType, conformingTo: nil), p.isDeclared else { continue }
                // Between two of Apple's declared types, Apple's declarations decide.
                if c.origin == .system && p.origin == .system { continue }
                checked += 1
                if !c.conforms(to: p) { broken.append("\(child) → \(parent)") }
            }
        }
        #expect(checked > 300)
        #expect(broken.isEmpty, "\(broken.prefix(10))")
        let compressedTar = try #require(registry.type(tag: "application/x-compressed-tar", tagClass: .mimeType, conformingTo: nil))
        #expect(compressedTar.identifier == "org.freedesktop.mime.application.x-compressed-tar")
        #expect(compressedTar.conforms(to: try #require(registry.type(withIdentifier: "org.gnu.gnu-zip-archive"))))
        #expect(compressedTar.conforms(to: .archive))
        #expect(registry.type(tag: "tar.gz", tagClass: .filenameExtension) == compressedTar)
    }

    @Test(.enabled(if: hasSharedMimeInfo)) func declaredTypesGainLinuxTagsAndImportedTypesJoinTheTrees() throws {
        let markdown = try #require(registry.type(tag: "text/markdown", tagClass: .mimeType, conformingTo: nil))
        #expect(markdown.identifier == "net.daringfireball.markdown")
        let opus = try #require(registry.type(tag: "opus", tagClass: .filenameExtension))
        #expect(opus.conforms(to: .audio))
        let wad = try #require(registry.type(tag: "application/x-doom-wad", tagClass: .mimeType, conformingTo: nil))
        #expect(wad.origin == .sharedMimeInfo)
        #expect(wad.conforms(to: .data))
        #expect(wad.localizedDescription == "Doom WAD file")
        let svgIdentifier = TypeDatabase.identifier(forMimeType: "image/x-foo+bar")
        #expect(svgIdentifier == "org.freedesktop.mime.image.x-foo-2Bbar")
        #expect(TypeIdentifier.isValid(svgIdentifier))
    }

    @Test func builtInTableWorksWithoutSharedMimeInfo() throws {
        let bare = TypeRegistry(configuration: .init(mimeDirectories: ["/nonexistent/mime"]))
        #expect(bare.type(tag: "jpg", tagClass: .filenameExtension) == .jpeg)
        #expect(bare.type(tag: "application/pdf", tagClass: .mimeType) == .pdf)
        #expect(bare.type(tag: "wad", tagClass: .filenameExtension)?.isDynamic == true)
        #expect(bare.typeCount < 200)
    }

    @Test func globMatchingFollowsWeightsAndLength() {
        let globs = GlobMatcher(globs: [
            .init(weight: 50, mimeType: "application/gzip", pattern: "*.gz", caseSensitive: false),
            .init(weight: 50, mimeType: "application/x-compressed-tar", pattern: "*.tar.gz", caseSensitive: false),
            .init(weight: 50, mimeType: "text/x-makefile", pattern: "Makefile", caseSensitive: false),
            .init(weight: 60, mimeType: "text/x-readme", pattern: "README*", caseSensitive: false),
            .init(weight: 50, mimeType: "text/x-c++src", pattern: "*.C", caseSensitive: true),
            .init(weight: 50, mimeType: "text/x-csrc", pattern: "*.c", caseSensitive: false),
        ])
        #expect(globs.mimeTypes(forFileName: "a.tar.gz") == ["application/x-compressed-tar"])
        #expect(globs.mimeTypes(forFileName: "a.GZ") == ["application/gzip"])
        #expect(globs.mimeTypes(forFileName: "makefile") == ["text/x-makefile"])
        #expect(globs.mimeTypes(forFileName: "README.md") == ["text/x-readme"])
        #expect(globs.mimeTypes(forFileName: "x.C") == ["text/x-c++src", "text/x-csrc"])
        #expect(globs.mimeTypes(forFileName: "x.c") == ["text/x-csrc"])
        #expect(globs.mimeTypes(forFileName: "nothing") == [])
    }

    @Test func magicParsesNestsAndMatches() throws {
        var bytes = Array("MIME-Magic\0\n".utf8)
        func rule(_ indent: String, _ offset: Int, _ value: [UInt8], range: Int? = nil) {
            bytes += Array("\(indent)>\(offset)=".utf8) + [UInt8(value.count >> 8), UInt8(value.count & 0xFF)] + value
            if let range { bytes += Array("+\(range)".utf8) }
            bytes.append(0x0A)
        }
        bytes += Array("[80:application/x-outer]\n".utf8)
        rule("", 0, Array("OUT".utf8))
        rule("1", 4, Array("IN".utf8))
        bytes += Array("[50:text/x-range]\n".utf8)
        rule("", 0, Array("KEY".utf8), range: 10)
        let magic = try MimeMagic(bytes: bytes)
        #expect(magic.match(Array("OUT IN".utf8))?.mimeType == "application/x-outer")
        #expect(magic.match(Array("OUT xx".utf8)) == nil)
        #expect(magic.match(Array("....KEY".utf8))?.mimeType == "text/x-range")
        #expect(magic.match(Array("...........KEY".utf8)) == nil)
    }

    @Test(arguments: [
        Array("not magic".utf8), Array("MIME-Magic\0\n[50:a/b]\n>0=".utf8) + [0xFF, 0xFF],
        Array("MIME-Magic\0\n[x:a/b]\n".utf8), Array("MIME-Magic\0\n[50:a/b]\n>99999999999=".utf8),
        Array("MIME-Magic\0\n[50:a/b]\n>0=".utf8) + [0, 2] + Array("ab&a".utf8),
    ])
    func malformedMagicIsRefused(_ bytes: [UInt8]) {
        #expect(throws: MimeMagic.FormatError.self) { try MimeMagic(bytes: bytes) }
    }

    @Test(.enabled(if: hasSharedMimeInfo)) func systemMagicParses() throws {
        let bytes = try #require(SharedMimeInfo.readFile(systemMimeDirectory + "/magic"))
        let magic = try MimeMagic(bytes: bytes)
        #expect(magic.sections.count > 300)
        #expect(magic.match(Array("%PDF-1.7\n".utf8))?.mimeType == "application/pdf")
        #expect(magic.match([0x89] + Array("PNG\r\n".utf8) + [0x1A, 0x0A])?.mimeType == "image/png")
    }

    @Test func hostileDatabaseFilesAreSkippedLineByLine() throws {
        let dir = try TemporaryDirectory("mime")
        try dir.write("mime/types", "application/x-good\nnot a type\n\u{0}\u{1}/\u{2}\napplication/x-good\n")
        try dir.write("mime/globs2", "50:application/x-good:*.good\nxx:bad:*.bad\n500:application/x-good:*.heavy\n50::*.empty\n")
        try dir.write("mime/subclasses", "application/x-good application/x-good\napplication/x-good\n")
        try dir.write("mime/aliases", "a b c\n")
        try dir.write("mime/magic", "garbage")
        let registry = TypeRegistry(configuration: .init(mimeDirectories: [dir.path + "/mime"]))
        let good = try #require(registry.type(tag: "good", tagClass: .filenameExtension))
        #expect(good.identifier == "org.freedesktop.mime.application.x-good")
        #expect(good.conforms(to: .data))
        #expect(registry.type(tag: "heavy", tagClass: .filenameExtension)?.isDynamic == true)
        // A broken magic file means no content sniffing, not a failure.
        let file = try dir.write("blob", Data([0, 1, 2, 3]))
        #expect(try UTType.contentType(ofItemAt: file, database: registry.database).type == .data)
    }
}

import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

@Suite("File wrappers", .elasticPool)
struct FileWrapperTests {
    /// `serializedRepresentation` and `init?(serializedRepresentation:)` as Apple's: a package
    /// read from disk (a file, a folder, a relative link, permissions) goes through its bytes and
    /// is written back the same, relative link included; the bytes read back are the bytes written.
    @Test func aPackageGoesThroughItsSerializedRepresentation() throws {
        let dir = try TemporaryDirectory("filewrapper-serialized")
        let package = dir.child("Notes.pkg")
        try FileManager.default.createDirectory(at: package.appendingPathComponent("Data"), withIntermediateDirectories: true)
        try Data("the index".utf8).write(to: package.appendingPathComponent("index.txt"))
        try Data([0, 1, 2, 255]).write(to: package.appendingPathComponent("Data/blob.bin"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: package.appendingPathComponent("Data/blob.bin").path)
        try FileManager.default.createSymbolicLink(atPath: package.appendingPathComponent("Data/link").path, withDestinationPath: "../index.txt")
        let wrapper = try FileWrapper(url: package)
        wrapper.fileWrappers?["Data"]?.fileWrappers?["blob.bin"]?.fileAttributes[FileAttributeKey.posixPermissions.rawValue] = 0o600
        let bytes = try #require(wrapper.serializedRepresentation)
        let copy = try #require(FileWrapper(serializedRepresentation: bytes))
        #expect(copy.preferredFilename == "Notes.pkg" && copy.isDirectory)
        #expect(copy.fileWrappers?["index.txt"]?.regularFileContents == Data("the index".utf8))
        #expect(copy.fileWrappers?["Data"]?.fileWrappers?["link"]?.symbolicLinkDestinationURL?.relativePath == "../index.txt")
        #expect(copy.serializedRepresentation == bytes)
        let written = dir.child("Copy.pkg")
        try copy.write(to: written, options: .atomic)
        #expect(copy.matchesContents(of: package))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: written.path + "/Data/link") == "../index.txt")
        #expect(try FileManager.default.attributesOfItem(atPath: written.path + "/Data/blob.bin")[.posixPermissions] as? Int == 0o600)
        // A lone file keeps its name and contents.
        let file = FileWrapper(regularFileWithContents: Data("one".utf8))
        file.preferredFilename = "one.txt"
        let single = try #require(file.serializedRepresentation.flatMap(FileWrapper.init(serializedRepresentation:)))
        #expect(single.preferredFilename == "one.txt" && single.regularFileContents == Data("one".utf8))
    }

    /// Bytes from another program are refused whole when they are not a wrapper: paths that
    /// climb out or name nothing, items before their folder, a name twice, a file's bad contents,
    /// wrong modes, another format.
    @Test(arguments: [
        #"not json"#,
        #"{"format":"other","version":1,"entries":[{"p":"","k":"folder"}]}"#,
        #"{"format":"folio.filewrapper","version":2,"entries":[{"p":"","k":"folder"}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"a","k":"folder"}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"folder"},{"p":"../x","k":"file","d":""}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"folder"},{"p":"a/./b","k":"file","d":""}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"folder"},{"p":"a//b","k":"file","d":""}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"folder"},{"p":"a/b","k":"file","d":""}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"folder"},{"p":"a","k":"file","d":""},{"p":"a","k":"file","d":""}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"folder"},{"p":"a","k":"file","d":""},{"p":"a/b","k":"file","d":""}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"file","d":"!!"}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"file","d":"","m":70000}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"link","t":""}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"file","d":"","n":"a/b"}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"folder"},{"p":"a\u0000b","k":"file","d":""}]}"#,
        #"{"format":"folio.filewrapper","version":1,"entries":[{"p":"","k":"pipe"}]}"#,
    ])
    func malformedBytesAreRefused(_ text: String) {
        #expect(FileWrapper(serializedRepresentation: Data(text.utf8)) == nil)
    }
}

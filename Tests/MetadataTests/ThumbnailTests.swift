@testable import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

@Suite("Thumbnails from the machine's thumbnailers", .elasticPool)
struct ThumbnailTests {
    /// A 1×1 red PNG.
    static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
        0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xDE, 0x00, 0x00, 0x00, 0x0C, 0x49, 0x44, 0x41, 0x54, 0x08, 0xD7, 0x63,
        0xF8, 0xCF, 0xC0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xDD, 0x8D, 0xB0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ]
    /// A one-page PDF (no cross-reference table; readers rebuild it).
    static let pdf = """
        %PDF-1.1
        1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj
        2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj
        3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj
        trailer<</Root 1 0 R>>
        %%EOF
        """

    @Test func imagesAndPDFsGetThumbnailsInTheFreedesktopCache() throws {
        let dir = try TemporaryDirectory("thumbnails")
        let cache = dir.path + "/cache"
        let image = dir.child("red.png")
        try Data(Self.png).write(to: image)
        let document = dir.child("page.pdf")
        try Data(Self.pdf.utf8).write(to: document)
        let text = try dir.write("notes.txt", "no thumbnail for text")
        try Thumbnails.$cacheOverride.withValue(cache) {
            for url in [image, document] {
                let values = try url.promisedItemResourceValues(forKeys: [.thumbnailDictionaryKey])
                let thumbnail = values.thumbnailDictionary?[.NSThumbnail1024x1024SizeKey]
                #expect(thumbnail?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true, "no thumbnail for \(url.lastPathComponent)")
                #expect(FileManager.default.fileExists(atPath: Thumbnails.cachePath(for: url, in: cache)))
            }
            #expect(try text.promisedItemResourceValues(forKeys: [.thumbnailDictionaryKey]).thumbnailDictionary?.isEmpty == true)
            // A thumbnail older than its file is made again.
            let cached = Thumbnails.cachePath(for: image, in: cache)
            let old = Date(timeIntervalSinceNow: -3600)
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: cached)
            _ = try image.promisedItemResourceValues(forKeys: [.thumbnailDictionaryKey])
            let renewed = try FileManager.default.attributesOfItem(atPath: cached)[.modificationDate] as? Date
            #expect((renewed ?? old) > old.addingTimeInterval(60), "the stale thumbnail was kept")
        }
    }

    @Test func thumbnailerFilesAreReadStrictly() {
        let good = ThumbnailGenerator.Thumbnailer(text: """
            # a comment
            [Thumbnailer Entry]
            TryExec=/usr/bin/gdk-pixbuf-thumbnailer
            Exec=/usr/bin/gdk-pixbuf-thumbnailer -s %s %u %o
            MimeType=image/png;image/jpeg;
            """)
        #expect(good?.exec == ["/usr/bin/gdk-pixbuf-thumbnailer", "-s", "%s", "%u", "%o"])
        #expect(good?.mimeTypes == ["image/png", "image/jpeg"])
        #expect(ThumbnailGenerator.Thumbnailer(text: "[Thumbnailer Entry]\nMimeType=image/png;") == nil, "no Exec")
        #expect(ThumbnailGenerator.Thumbnailer(text: "[Other]\nExec=/bin/x\nMimeType=image/png;") == nil, "not in the group")
        #expect(ThumbnailGenerator.Thumbnailer(text: "[Thumbnailer Entry]\nExec=bin/x %o\nMimeType=image/png;") == nil, "a relative path")
    }
}

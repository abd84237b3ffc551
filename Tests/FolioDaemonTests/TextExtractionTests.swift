@testable import FolioDaemon
import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The content index's text extraction, in its sandboxed worker process (`folio extract-worker`),
/// on files each test writes itself: every format read, hostile files refused within the limits.
@Suite("Text extraction for the content index", .elasticPool)
struct TextExtractionTests {
    /// A one-page PDF with its text in Helvetica, cross-reference table and all.
    static func pdf(_ text: String) -> Data {
        let stream = "BT /F1 24 Tf 72 700 Td (\(text)) Tj ET"
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
            "<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
        var body = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(body.utf8.count)
            body += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = body.utf8.count
        body += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { body += String(format: "%010d 00000 n \n", offset) }
        body += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Data(body.utf8)
    }

    /// A zip of `files` (names to contents), made with Info-ZIP's `zip`, stored first (as ODF and
    /// EPUB want `mimetype`).
    static func zip(_ files: [(String, Data)], at path: String, in dir: TemporaryDirectory) throws {
        let folder = dir.child("zip-\(UUID().uuidString)")
        for (name, data) in files {
            let file = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: file)
        }
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "cd \"$1\" && zip -q -X -r \"$2\" . ", "sh", folder.path, path])
        guard result.status == 0 else { throw TestFailure("zip: \(result.stderr)") }
    }

    static func worker(timeLimit: Duration = .seconds(20)) -> TextExtractionWorker {
        TextExtractionWorker(executable: ProcessRunner.folioExecutable().path, timeLimit: timeLimit)
    }

    @Test func everyFormatIsRead() throws {
        let dir = try TemporaryDirectory("extract-formats")
        try dir.write("plain.txt", "Grüße aus Köln\n")
        try dir.write("main.swift", "let answer = 42 // the answer\n")
        try dir.write("page.html", """
            <html><head><title>Page title</title><script>var secret = "scripted";</script><style>.x { color: red }</style></head>
            <body><h1>Heading</h1><p>Caf&eacute; &amp; cr&#232;me<br>next line</p><!-- a comment --></body></html>
            """)
        try Self.pdf("Hello PDF world").write(to: dir.child("paper.pdf"))
        let odfContent = """
            <?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" \
            xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text><text:h>Odt heading</text:h>\
            <text:p>First <text:span>paragraph</text:span></text:p><text:p>Second&#160;one</text:p></office:text></office:body></office:document-content>
            """
        try Self.zip([("mimetype", Data("application/vnd.oasis.opendocument.text".utf8)), ("content.xml", Data(odfContent.utf8))], at: dir.child("letter.odt").path, in: dir)
        let docx = """
            <?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>\
            <w:p><w:r><w:t>Docx first</w:t></w:r><w:r><w:tab/><w:t xml:space="preserve">run</w:t></w:r></w:p><w:p><w:r><w:t>Docx second</w:t></w:r></w:p></w:body></w:document>
            """
        try Self.zip([("[Content_Types].xml", Data("<Types/>".utf8)), ("word/document.xml", Data(docx.utf8))], at: dir.child("report.docx").path, in: dir)
        try Self.zip(
            [
                ("mimetype", Data("application/epub+zip".utf8)),
                ("META-INF/container.xml", Data("<container/>".utf8)),
                ("OEBPS/chapter1.xhtml", Data("<html><body><h1>Chapter one</h1><p>Call me Ishmael.</p></body></html>".utf8)),
                ("OEBPS/chapter2.xhtml", Data("<html><body><p>Second chapter</p></body></html>".utf8)),
            ], at: dir.child("book.epub").path, in: dir)
        let mail = """
            From: Ana <ana@example.com>\r
            To: Bo <bo@example.com>\r
            Subject: =?UTF-8?B?UsOpdW5pb24=?= =?UTF-8?Q?_de_lundi?=\r
            MIME-Version: 1.0\r
            Content-Type: multipart/mixed; boundary="outer"\r
            \r
            --outer\r
            Content-Type: multipart/alternative; boundary=inner\r
            \r
            --inner\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Transfer-Encoding: quoted-printable\r
            \r
            On se voit =C3=A0 dix heures, long line=\r
             joined.\r
            --inner\r
            Content-Type: text/html\r
            \r
            <p>HTML alternative</p>\r
            --inner--\r
            --outer\r
            Content-Type: application/pdf\r
            Content-Disposition: attachment; filename="x.pdf"\r
            Content-Transfer-Encoding: base64\r
            \r
            JVBERi0xLjQK\r
            --outer--\r
            """
        try dir.write("meeting.eml", mail)

        let expected: [(String, TextExtractor.Format, [String], [String])] = [
            ("plain.txt", .plain, ["Grüße aus Köln"], []),
            ("main.swift", .plain, ["let answer = 42"], []),
            ("page.html", .html, ["Page title", "Heading", "Café & crème", "next line"], ["scripted", "color", "comment"]),
            ("paper.pdf", .pdf, ["Hello PDF world"], []),
            ("letter.odt", .openDocument, ["Odt heading\nFirst paragraph\nSecond\u{A0}one"], ["urn:oasis"]),
            ("report.docx", .wordDocument, ["Docx first\trun\nDocx second"], ["schemas"]),
            ("book.epub", .epub, ["Chapter one", "Call me Ishmael.", "Second chapter"], ["container"]),
            ("meeting.eml", .mail, ["Réunion de lundi", "Ana <ana@example.com>", "On se voit à dix heures, long line joined."], ["HTML alternative", "JVBER"]),
        ]
        let worker = Self.worker()
        for (name, format, contains, lacks) in expected {
            let path = dir.child(name).path
            // The format comes from the type content detection gives the file.
            #expect(TextExtractor.format(of: try UTType.contentType(ofItemAt: URL(fileURLWithPath: path)).type) == format, "\(name)")
            let text = try worker.text(ofFileAt: path, format: format)
            for piece in contains { #expect(text.contains(piece), "\(name): \(piece) not in \(text.debugDescription)") }
            for piece in lacks { #expect(!text.contains(piece), "\(name): \(piece) in \(text.debugDescription)") }
        }
        #expect(TextExtractor.format(of: .png) == nil)
    }

    /// A zip bomb, XML nested two hundred thousand deep, a file that blocks the tool reading it and
    /// one that is not what its type says: each refused or cut within the limits, and the worker
    /// carries on with the next file.
    @Test func hostileFilesStayWithinTheLimits() throws {
        let dir = try TemporaryDirectory("extract-hostile")
        // 256 MiB of text inflated from a small zip: inflated only until its text is full (not to
        // the 64 MiB cap), the text cut at 1 MiB.
        // Made without writing the 256 MiB to disk: Python's zipfile deflates it as it streams
        // (the file on disk, and `zip` reading it back, were most of this test's time under CI's load).
        let script = """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
                with z.open('word/document.xml', 'w') as f:
                    f.write(b'<w:document><w:body><w:p><w:t>')
                    block = b'a' * (1 << 20)
                    for _ in range(256): f.write(block)
            """
        let made = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, dir.child("bomb.docx").path])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try FileManager.default.attributesOfItem(atPath: dir.child("bomb.docx").path)[.size] as? Int ?? .max < 2 << 20)
        // Inflated no further than its text needs: a few MiB of the 256 (the look at each doubling
        // past the first 2 MiB), not the 64 MiB cap. Counted in bytes, not seconds: the bomb takes
        // 0.15 s alone, yet under CI's load (eight tests at once on two cores, Chromium, crash
        // loops) it outlasted the daemon's 10 s more than once.
        let markup = try MarkupText(blocks: ["p"]).markup(ofTool: "unzip", ["-p", dir.child("bomb.docx").path, "word/document.xml"])
        #expect(markup.count >= TextExtractor.textLimit && markup.count <= 4 << 20, "\(markup.count) bytes inflated")
        // Through the worker, the text is cut at its limit. (A worker given time: what is checked
        // here is the result, and a loaded CI machine has run these past a 3 s and a 10 s limit.)
        let patient = Self.worker(timeLimit: .seconds(120))
        #expect(try patient.text(ofFileAt: dir.child("bomb.docx").path, format: .wordDocument).utf8.count == TextExtractor.textLimit)

        // Nesting neither overflows nor stalls the reader: the text in the middle is found.
        let depth = 200_000
        let nested = String(repeating: "<text:span>", count: depth) + "deep words" + String(repeating: "</text:span>", count: depth)
        try Self.zip([("content.xml", Data(("<office:text><text:p>" + nested + "</text:p></office:text>").utf8))], at: dir.child("nested.odt").path, in: dir)
        #expect(try patient.text(ofFileAt: dir.child("nested.odt").path, format: .openDocument) == "deep words")
        patient.stop()

        let worker = Self.worker(timeLimit: .seconds(3))

        // A tool that never finishes (pdftotext waiting on a FIFO that nobody writes): the worker
        // is stopped at the limit, and the next file gets a new one.
        #expect(mkfifo(dir.child("stuck.pdf").path, 0o600) == 0)
        // The worker started first, so the time below is the limit's, not the worker's start.
        try dir.write("warm.txt", "warm")
        #expect(try worker.text(ofFileAt: dir.child("warm.txt").path, format: .plain) == "warm")
        let waited = ContinuousClock.now
        #expect(throws: TextExtractionWorker.Failure.timedOut) { try worker.text(ofFileAt: dir.child("stuck.pdf").path, format: .pdf) }
        #expect(ContinuousClock.now - waited < .seconds(6))
        // A FIFO as plain text is refused at once (never opened to wait).
        #expect(throws: TextExtractionWorker.Failure.self) { try worker.text(ofFileAt: dir.child("stuck.pdf").path, format: .plain) }
        // Not a PDF at all: refused with the tool's failure.
        try dir.write("fake.pdf", "not a pdf")
        #expect(throws: TextExtractionWorker.Failure.self) { try worker.text(ofFileAt: dir.child("fake.pdf").path, format: .pdf) }
        try dir.write("after.txt", "still working")
        #expect(try worker.text(ofFileAt: dir.child("after.txt").path, format: .plain) == "still working")
    }

    /// A tool's output is read to the cap at most, and no further than `enough` asks: it is
    /// looked at each time it doubles, and the tool is stopped once it answers true.
    @Test func aToolIsStoppedOnceItsOutputIsEnough() throws {
        var looks: [Int] = []
        let output = try #require(CappedCommand.output(["/usr/bin/yes"], limit: 64 << 20, firstLook: 1 << 20) { prefix in
            looks.append(prefix.count)
            return prefix.count >= 4 << 20
        })
        #expect(output.count == looks.last)
        #expect(looks.count == 3 && looks[0] >= 1 << 20 && looks[1] >= 2 * looks[0] && looks[2] >= 2 * looks[1])
        #expect(output.count < 8 << 20)
        // Without `enough`, the cap.
        #expect(CappedCommand.output(["/usr/bin/yes"], limit: 3 << 20)?.count == 3 << 20)
    }

    /// Markup's text: runs of text copied whole up to the next tag, reference or space, white
    /// space folded, blocks and breaks as line breaks, and the limit cutting at a character's
    /// boundary even inside a run.
    @Test func markupTextKeepsRunsAndCutsAtTheLimit() {
        let html = Array("<p>Grüße&nbsp;aus   Köln</p><div>zweite<br/>Zeile &amp; mehr</div>".utf8)
        #expect(MarkupText.html.text(of: html, limit: 1 << 20) == "Grüße aus Köln\nzweite\nZeile & mehr")
        // "Grü" is 4 bytes: a limit of 3 would end inside the ü, which is left out whole.
        #expect(MarkupText.html.text(of: Array("<p>Grüße</p>".utf8), limit: 3) == "Gr")
        #expect(MarkupText.html.text(of: Array("<p>Grüße</p>".utf8), limit: 4) == "Grü")
        #expect(MarkupText.cut(Array("Grüße".utf8), limit: 3) == "Gr")
        #expect(MarkupText.html.text(of: Array("abcdefgh".utf8), limit: 5) == "abcde")
    }
}


import Folio
@testable import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
import UniformTypes

@Suite("Hostile WebDAV replies are refused safely", .elasticPool)
struct HostileServerTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/hostile_dav.py")
    static let request = FileProviderRequest(temporaryDirectory: FileManager.default.temporaryDirectory)

    static func serve(_ mode: String) throws -> TestServer {
        try TestServer(script: script) { port in [mode, "\(port)"] }
    }

    @Test(arguments: ["malformed", "doctype", "huge"])
    func brokenListingsAreRefusedWhole(mode: String) async throws {
        let server = try Self.serve(mode)
        let provider = WebDAVProvider(baseURL: server.baseURL)
        let error = await #expect(throws: FileProviderError.self) {
            try await provider.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: Self.request)
        }
        // A refused listing is an error, never a shorter listing that could read as deletions; the
        // server was reached, so it is not called unreachable but a reply Folio cannot read.
        #expect(error?.code == .cannotSynchronize, "\(mode): \(String(describing: error))")
        let message = error?.message ?? ""
        if mode == "huge" {
            // 85 MB of listing: the reply is cut off at the listing limit (64 MiB), before any of it
            // is parsed (the 200,000-resource limit of the parser is never reached).
            #expect(
                message.hasPrefix("PROPFIND ") && message.hasSuffix("the server's reply is larger than \(WebDAVClient.maximumListing) bytes, more than Folio reads"),
                "\(String(describing: error))")
        } else {
            // Read whole, then refused by the parser.
            #expect(message.hasPrefix("the server's listing of / cannot be read: "), "\(mode): \(String(describing: error))")
        }
        await #expect(throws: FileProviderError.self) { try await provider.currentSyncAnchor(for: .workingSet, request: Self.request) }
    }

    @Test func hostileNamesAreLeftOutAndNothingEscapes() async throws {
        let server = try Self.serve("traversal")
        let provider = WebDAVProvider(baseURL: server.baseURL)
        let page = try await provider.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: Self.request)
        let names = Set(page.items.map(\.filename))
        #expect(names == ["ok.txt", "café.txt"], "\(names)")
        #expect(page.items.allSatisfy { $0.parentItemIdentifier == .rootContainer && !$0.itemIdentifier.rawValue.contains("..") })
    }

    @Test func theParserRefusesWhatItMust() throws {
        func parse(_ text: String) throws(XMLRefusal) -> [DAVResource] { try MultistatusParser.parse(Array(text.utf8)) }
        let good = """
            <?xml version="1.0" encoding="utf-8"?>
            <!-- a comment -->
            <d:multistatus xmlns:d="DAV:" xmlns:x="urn:other" xmlns:a="http://apache.org/dav/props/"><d:response><d:href>/a%20b/c&amp;d.txt</d:href>
            <d:propstat><d:prop><d:getetag>W/"12-ab"</d:getetag><d:getcontentlength>12</d:getcontentlength><x:getetag>ignored</x:getetag>
            <d:resourcetype/><a:executable> T </a:executable></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>
            <d:propstat><d:prop><d:getcontenttype/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>
            <d:response><d:href><![CDATA[/folder/]]></d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop>
            <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>
            """
        let resources = try parse(good)
        #expect(resources == [
            DAVResource(href: "/a%20b/c&d.txt", isCollection: false, etag: "W/\"12-ab\"", contentLength: 12, isExecutable: true),
            DAVResource(href: "/folder/", isCollection: true),
        ])
        let refused = [
            "<d:multistatus xmlns:d=\"DAV:\"><d:response>",  // unterminated
            "<!DOCTYPE x [<!ENTITY a \"b\">]><d:multistatus xmlns:d=\"DAV:\"/>",  // DTD
            "<d:multistatus xmlns:d=\"DAV:\"><d:response><d:href>&a;</d:href></d:response></d:multistatus>",  // unknown entity
            "<d:multistatus xmlns:d=\"DAV:\"></d:other>",  // mismatched
            "<x:multistatus/>",  // undeclared prefix
            "<d:multistatus xmlns:d=\"DAV:\"><d:response><d:propstat/></d:response></d:multistatus>",  // no href
            "<a/><b/>",  // two roots
            String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40),  // too deep
            "<d:multistatus xmlns:d=\"DAV:\"><d:response><d:href>/x</d:href><d:propstat><d:prop><d:getcontentlength>-5</d:getcontentlength></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>",
            "<d:multistatus xmlns:d=\"DAV:\">&#0;</d:multistatus>",
        ]
        for text in refused {
            #expect(throws: XMLRefusal.self, "\(text.prefix(60))") { try parse(text) }
        }
    }

    /// A namespace prefix holds in the element that declares it and within it, an inner declaration
    /// hides an outer one, and a prefix is gone once its element ends (Apache declares its `lp1`
    /// and `lp2` on every response).
    @Test func namespacesHoldWhereTheyAreDeclared() throws {
        func parse(_ text: String) throws(XMLRefusal) -> [DAVResource] { try MultistatusParser.parse(Array(text.utf8)) }
        let scoped = """
            <D:multistatus xmlns:D="DAV:"><D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/"><D:href>/a</D:href>
            <D:propstat><D:prop><lp1:getetag>"1"</lp1:getetag><lp2:executable>T</lp2:executable></D:prop><D:status>HTTP/1.1  200  OK</D:status></D:propstat></D:response>
            <D:response xmlns:lp1="urn:other"><D:href>/b</D:href><D:propstat><D:prop><lp1:getetag>other</lp1:getetag>
            <D:getcontentlength xmlns:D="urn:other">5</D:getcontentlength><D:getcontentlength>7</D:getcontentlength></D:prop>
            <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            <response xmlns="DAV:"><href>/c</href><propstat><prop><getetag>"3"</getetag></prop><status>HTTP/1.1 200 OK</status></propstat></response>
            <D:response><D:href>/d</D:href><D:propstat><D:prop><D:getetag>"4"</D:getetag></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat></D:response>
            </D:multistatus>
            """
        #expect(try parse(scoped) == [
            DAVResource(href: "/a", etag: "\"1\"", isExecutable: true), DAVResource(href: "/b", contentLength: 7), DAVResource(href: "/c", etag: "\"3\""),
            DAVResource(href: "/d"),
        ])
        let refused = [
            // lp1 declared on the first response only.
            "<D:multistatus xmlns:D=\"DAV:\"><D:response xmlns:lp1=\"DAV:\"><D:href>/a</D:href></D:response><D:response><D:href>/b</D:href><lp1:x/></D:response></D:multistatus>",
            // More declarations in scope than any server writes.
            "<D:multistatus xmlns:D=\"DAV:\" " + (0...256).map { "xmlns:p\($0)=\"urn:\($0)\"" }.joined(separator: " ") + "/>",
        ]
        for text in refused {
            #expect(throws: XMLRefusal.self, "\(text.prefix(60))") { try parse(text) }
        }
        // As many as that is read.
        #expect(try parse("<D:multistatus xmlns:D=\"DAV:\" " + (1...255).map { "xmlns:p\($0)=\"urn:\($0)\"" }.joined(separator: " ") + "/>") == [])
    }

    /// A reply reads the same however it writes its texts and names: a text in runs of plain text,
    /// references and CDATA (with a comment between) is one text; a namespace written with a
    /// reference is the one it names; a prefix bound to forty namespaces in turn (more than the
    /// reader numbers) means each in its place, Apache's first bound late among them; and two
    /// hundred names before a known one leave it known.
    @Test func textsAndNamesReadTheSameHoweverTheyAreWritten() throws {
        func parse(_ text: String) throws(XMLRefusal) -> [DAVResource] { try MultistatusParser.parse(Array(text.utf8)) }
        let pieces = """
            <D:multistatus xmlns:D="DAV:"><D:response><D:href>/a<![CDATA[ b<]]>&amp;c<!-- x -->d&#x2F;<![CDATA[]]></D:href></D:response>
            <D:response xmlns:E="DAV&#58;"><E:href>/e</E:href><E:propstat><E:prop><E:getetag>"e"</E:getetag></E:prop>
            <E:status>HTTP/1.1 200 OK</E:status></E:propstat></D:response></D:multistatus>
            """
        #expect(try parse(pieces) == [DAVResource(href: "/a b<&cd/"), DAVResource(href: "/e", etag: "\"e\"")])

        let apache = "http://apache.org/dav/props/"
        func bound(_ number: Int) -> String { number == 20 ? "DAV:" : number >= 35 && number.isMultiple(of: 2) ? apache : "urn:\(number)" }
        let bindings = (0..<40).map { number in
            """
            <D:response xmlns:p="\(bound(number))"><D:href>/\(number)</D:href><D:propstat><D:prop><p:getetag>"\(number)"</p:getetag>
            <p:executable>T</p:executable></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            """
        }
        let rebound = try parse("<D:multistatus xmlns:D=\"DAV:\">" + bindings.joined() + "</D:multistatus>")
        #expect(rebound == (0..<40).map { number in
            DAVResource(href: "/\(number)", etag: bound(number) == "DAV:" ? "\"\(number)\"" : nil, isExecutable: bound(number) == apache ? true : nil)
        })

        let names = (0..<200).map { "<D:unknown\($0)/><x:getetag>\($0)</x:getetag>" }.joined()
        let many = """
            <D:multistatus xmlns:D="DAV:" xmlns:x="urn:x"><D:response><D:href>/m</D:href><D:propstat><D:prop>\(names)<D:getetag>"m"</D:getetag>
            <D:getcontentlength>3</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
            """
        #expect(try parse(many) == [DAVResource(href: "/m", etag: "\"m\"", contentLength: 3)])
    }

    /// Two listings that differ only in the order of a start tag's attributes (Apache's namespace
    /// declarations, in its hash table's order) or the spaces between them have one digest; any
    /// other difference, in a value, a name, the text, a comment or a tag that is not plainly well
    /// formed, gives another.
    @Test func listingDigestsIgnoreOnlyTheOrderOfAttributes() {
        func digest(_ text: String) -> String { "\(ListingDigest.of(Array(text.utf8)))" }
        let apache = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:" xmlns:ns1="http://apache.org/dav/props/" xmlns:ns0="DAV:">
            <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/" xmlns:g0="DAV:" xmlns:g1="http://apache.org/dav/props/">
            <D:href>/a/</D:href><D:propstat><D:prop><lp1:getetag>"1-2"</lp1:getetag></D:prop></D:propstat></D:response></D:multistatus>
            """
        let same = [
            apache.replacingOccurrences(of: #"xmlns:g0="DAV:" xmlns:g1="http://apache.org/dav/props/""#, with: #"xmlns:g1="http://apache.org/dav/props/" xmlns:g0="DAV:""#),
            apache.replacingOccurrences(of: #"<D:multistatus xmlns:D="DAV:" xmlns:ns1"#, with: "<D:multistatus \n xmlns:ns1=\"http://apache.org/dav/props/\" xmlns:D=\"DAV:\"\txmlns:ns1")
                .replacingOccurrences(of: #"xmlns:ns1="http://apache.org/dav/props/" xmlns:ns0"#, with: "xmlns:ns0"),
        ]
        for text in same { #expect(digest(text) == digest(apache), "\(text)") }
        // A weak mark first in an ETag's text is passed over (the version read drops it), and only there.
        #expect(digest(apache.replacingOccurrences(of: #">"1-2"<"#, with: #">W/"1-2"<"#)) == digest(apache))
        let unprefixed = apache.replacingOccurrences(of: "lp1:getetag", with: "getetag")
        #expect(digest(unprefixed.replacingOccurrences(of: #">"1-2"<"#, with: #">W/"1-2"<"#)) == digest(unprefixed))
        let weakElsewhere = [
            apache.replacingOccurrences(of: #">"1-2"<"#, with: #"> W/"1-2"<"#),
            apache.replacingOccurrences(of: "lp1:getetag", with: "lp1:xgetetag").replacingOccurrences(of: #">"1-2"<"#, with: #">W/"1-2"<"#),
            apache.replacingOccurrences(of: "<D:href>/a/", with: "<D:href>W/\"a/"),
        ]
        let unmarked = [
            apache.replacingOccurrences(of: #">"1-2"<"#, with: #"> "1-2"<"#),
            apache.replacingOccurrences(of: "lp1:getetag", with: "lp1:xgetetag"),
            apache.replacingOccurrences(of: "<D:href>/a/", with: "<D:href>\"a/"),
        ]
        for (weak, plain) in zip(weakElsewhere, unmarked) { #expect(digest(weak) != digest(plain), "\(weak)") }
        let other = [
            apache.replacingOccurrences(of: #""1-2""#, with: #""1-3""#),
            apache.replacingOccurrences(of: #"xmlns:g0="DAV:""#, with: #"xmlns:g0="DAV:x""#),
            apache.replacingOccurrences(of: #"xmlns:g0="DAV:""#, with: #"xmlns:g2="DAV:""#),
            apache.replacingOccurrences(of: "<D:href>", with: "<!-- <x b=\"1\" a=\"2\"> --><D:href>"),
            apache.replacingOccurrences(of: "<D:href>", with: "<!-- <x a=\"2\" b=\"1\"> --><D:href>"),
            apache.replacingOccurrences(of: "<D:href>/a/", with: "<D:href><![CDATA[<x b=\"1\" a=\"2\">]]>"),
            apache.replacingOccurrences(of: #"xmlns:g0="DAV:" xmlns:g1"#, with: #"xmlns:g0="DAV:"xmlns:g1"#),
            apache.replacingOccurrences(of: #"xmlns:lp1="DAV:""#, with: #"xmlns:lp1=DAV:"#),
            String(apache.dropLast(20)),
        ]
        let digests = other.map(digest)
        #expect(!digests.contains(digest(apache)))
        #expect(Set(digests).count == other.count, "\(digests)")
        // A comment's or a CDATA section's text counts as it is, whatever it looks like.
        #expect(
            digest(apache.replacingOccurrences(of: "<D:href>/a/", with: "<D:href><![CDATA[<x b=\"1\" a=\"2\">]]>"))
                != digest(apache.replacingOccurrences(of: "<D:href>/a/", with: "<D:href><![CDATA[<x a=\"2\" b=\"1\">]]>")))
        // Cut anywhere, never a trap.
        let weak = apache.replacingOccurrences(of: #">"1-2"<"#, with: #">W/"1-2"<"#)
        for text in [apache, weak] {
            for end in 0...text.utf8.count { _ = ListingDigest.of(Array(text.utf8.prefix(end))) }
        }
    }

    @Test func hrefsDecodeOnlyInsideTheBase() {
        #expect(DAVPath.relative("/dav/a%20b/c.txt", basePath: "/dav/") == "a b/c.txt")
        #expect(DAVPath.relative("http://127.0.0.1:8080/dav/folder/", basePath: "/dav/", origin: "http://127.0.0.1:8080") == "folder")
        #expect(DAVPath.relative("http://elsewhere:8080/dav/folder/", basePath: "/dav/", origin: "http://127.0.0.1:8080") == nil)
        #expect(DAVPath.relative("/dav/", basePath: "/dav/") == "")
        for hostile in ["/other/a.txt", "/dav/../etc/passwd", "/dav/a/%2e%2e/b", "/dav/a%00b", "/dav/%ZZ", "/dav//double", "/dav/%C0%AF"] {
            #expect(DAVPath.relative(hostile, basePath: "/dav/") == nil, "\(hostile)")
        }
        #expect(DAVPath.encode("a b/ü?#%.txt") == "a%20b/%C3%BC%3F%23%25.txt")
        #expect(DAVPath.relative("/dav/caf%C3%A9/x?y#z", basePath: "/dav/") == "café/x")
        #expect(DAVPath.relative("HTTP://127.0.0.1:8080/dav/a", basePath: "/dav/", origin: "http://127.0.0.1:8080") == "a")
        #expect(DAVPath.relative("http://127.0.0.1:8080", basePath: "/dav/", origin: "http://127.0.0.1:8080") == nil)
        #expect(DAVPath.relative("/dav/a%2", basePath: "/dav/") == nil)
    }

    /// An href that begins with the base's own bytes is decoded from there on; any other is
    /// compared decoded, segment by segment. Both ways say the same of every href: a base written
    /// with an escape (`/d%61v/`) is always compared decoded.
    @Test func hrefsReadTheSameWhetherTheBaseIsMatchedAsBytesOrDecoded() {
        let long = String(repeating: "x", count: 256)
        let hrefs = [
            "/dav/a", "/dav/a/", "/dav/", "/dav", "/dav/a/b/c.txt", "/dav//a", "/dav/a//", "/dav/a%2Fb", "/dav/%2e%2e/x", "/dav/./a", "/dav/a%00b",
            "/dav/caf%C3%A9", "/dav/%C3", "/dav/%zz", "/davx/a", "/dav/\(long)", "/dav/\(long.dropLast())", "/dav/a?x=1", "/dav/a#b",
            "http://127.0.0.1:1/dav/a", "http://127.0.0.1:1/dav/", "/",
        ]
        for href in hrefs {
            let asBytes = DAVPath.relative(href, basePath: "/dav/", origin: "http://127.0.0.1:1")
            let decoded = DAVPath.relative(href, basePath: "/d%61v/", origin: "http://127.0.0.1:1")
            #expect(asBytes == decoded, "\(href.prefix(40))")
        }
        #expect(DAVPath.relative("/dav/a/b/c.txt", basePath: "/dav/") == "a/b/c.txt")
        #expect(DAVPath.relative("/a/b/c", basePath: "/") == "a/b/c")
        #expect(DAVPath.relative("//a", basePath: "/") == nil)
    }

    /// Paths split and typed as bytes (read for every listed item), as they were split before.
    @Test func listedPathsSplitAsBefore() {
        for (relative, name, folder) in [
            ("a/b/c.txt", "c.txt", "a/b"), ("c.txt", "c.txt", ""), ("", "", ""), ("a//b", "b", "a"), ("a/b/", "b", "a"), ("/a/b", "b", "a"),
        ] {
            #expect(WebDAVProvider.name(of: relative) == name, "\(relative)")
            #expect(WebDAVProvider.folder(of: relative) == folder, "\(relative)")
        }
        // Types by extension as `URL.pathExtension` finds one.
        for typed in ["notes.txt", "a..txt", "..txt", "x.tar.txt"] { #expect(UTType.ofFile(named: typed) == .plainText, "\(typed)") }
        for untyped in [".bashrc", "README", "trailing.", ".", ".."] { #expect(UTType.ofFile(named: untyped) == .data, "\(untyped)") }
        // A listing's types, each extension looked up once, are those of the names one by one.
        var types = FileNameTypes()
        for name in ["notes.txt", "b.txt", "photo.JPG", "photo.jpg", ".bashrc", "README", "a.pdf", "c.txt", "x.tar.gz", "y.gz", "trailing."] {
            #expect(types.type(ofFile: name) == UTType.ofFile(named: name), "\(name)")
        }
    }
}

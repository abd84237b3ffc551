import Folio
@testable import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// SigV4 against AWS's published example and botocore, the listing parser, and the S3 provider
/// against moto with signatures enforced.
@Suite("The S3 provider", .elasticPool)
struct S3ProviderTests {
    // MARK: SigV4

    /// AWS's GET-object example (S3 API reference, "Signature Calculations for the Authorization Header").
    @Test func signsAWSsPublishedExample() {
        let signer = SigV4Signer(
            accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1", service: "s3")
        let headers = signer.sign(
            method: "GET", path: "/test.txt", query: [], headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")],
            payloadHash: SigV4Signer.emptyPayloadHash, date: Date(timeIntervalSince1970: 1_369_353_600))
        let authorization = headers.first { $0.0 == "Authorization" }?.1
        #expect(
            authorization
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        )
        #expect(headers.contains { $0 == ("x-amz-date", "20130524T000000Z") })
    }

    /// The same requests signed by botocore (AWS's own Python signer) give the same signatures:
    /// unicode and reserved characters in keys and queries, repeated query names, spaced header values.
    @Test(.enabled(if: TestServer.shouldRun(.moto)))
    func agreesWithBotocore() throws {
        let python = try #require(TestServer.motoPython, "botocore comes with moto")
        let cases: [(method: String, key: String, query: [(String, String)], headers: [(String, String)], payload: String)] = [
            ("GET", "", [("list-type", "2"), ("prefix", "a b/ü"), ("max-keys", "1000"), ("delimiter", "/")], [], SigV4Signer.emptyPayloadHash),
            ("PUT", "Ünïcödé ✓/#%?&+;= ,'.txt", [], [("If-None-Match", "*"), ("x-amz-meta-note", "  two   spaces  ")], String(repeating: "ab", count: 32)),
            ("POST", "big/file.bin", [("uploads", "")], [], SigV4Signer.emptyPayloadHash),
            ("PUT", "big/file.bin", [("partNumber", "2"), ("uploadId", "a/b+c=d~")], [("If-Match", "\"abc\"")], SigV4Signer.emptyPayloadHash),
            ("GET", "", [("prefix", "x"), ("prefix", "a"), ("continuation-token", "1/2+3==")], [], SigV4Signer.emptyPayloadHash),
            ("DELETE", "日本語/file", [], [("x-amz-copy-source", "/folio/a%20b")], SigV4Signer.emptyPayloadHash),
        ]
        let signer = SigV4Signer(accessKey: "AKIDEXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "eu-west-3", service: "s3")
        let date = Date(timeIntervalSince1970: 1_795_000_123)
        var lines: [String] = []
        var ours: [String] = []
        for item in cases {
            let path = "/folio" + (item.key.isEmpty ? "" : "/" + SigV4Signer.encode(item.key, keepingSlashes: true))
            let headers = [("host", "127.0.0.1:9000")] + item.headers
            let signed = signer.sign(method: item.method, path: path, query: item.query, headers: headers, payloadHash: item.payload, date: date)
            ours.append(signed.first { $0.0 == "Authorization" }!.1)
            let object: [String: Any] = [
                "method": item.method, "path": path, "key": item.key, "query": item.query.map { [$0.0, $0.1] },
                "headers": (headers + [("x-amz-date", SigV4Signer.timestamp(date)), ("x-amz-content-sha256", item.payload)]).map { [$0.0, $0.1] },
            ]
            lines.append(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        }
        let script = """
            import json, sys, urllib.parse
            from botocore.auth import S3SigV4Auth
            from botocore.awsrequest import AWSRequest
            from botocore.credentials import Credentials
            auth = S3SigV4Auth(Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"), "s3", "eu-west-3")
            for line in open(sys.argv[1]):
                case = json.loads(line)
                # The key's encoding, checked independently of ours.
                expected = "/folio" + ("/" + urllib.parse.quote(case["key"], safe="/~") if case["key"] else "")
                assert case["path"] == expected, (case["path"], expected)
                request = AWSRequest(method=case["method"], url="http://127.0.0.1:9000" + case["path"], params=case["query"])
                for name, value in case["headers"]:
                    request.headers[name] = value
                stamp = dict(case["headers"])["x-amz-date"]
                request.context["timestamp"] = stamp
                canonical = auth.canonical_request(request)
                signature = auth.signature(auth.string_to_sign(request, canonical), request)
                names = ";".join(sorted(n.lower() for n, _ in case["headers"]))
                print("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/%s/eu-west-3/s3/aws4_request,SignedHeaders=%s,Signature=%s" % (stamp[:8], names, signature))
            """
        let scratch = try TemporaryDirectory("folio-sigv4")
        let input = try scratch.write("cases.ndjson", lines.joined(separator: "\n") + "\n")
        let output = try ProcessRunner.run(URL(fileURLWithPath: python), ["-c", script, input.path])
        #expect(output.status == 0, "\(output.stderr)")
        let theirs = output.stdout.split(separator: "\n").map(String.init)
        #expect(theirs.count == ours.count)
        for (mine, botocore) in zip(ours, theirs) { #expect(mine == botocore) }
    }

    /// AWS's presigned-URL example (S3 API reference, "Authenticating Requests: Using Query
    /// Parameters"): GET of test.txt, valid for a day.
    @Test func presignsAWSsPublishedExample() {
        let signer = SigV4Signer(
            accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1", service: "s3")
        let query = signer.presignedQuery(
            method: "GET", path: "/test.txt", host: "examplebucket.s3.amazonaws.com", expires: 86400, date: Date(timeIntervalSince1970: 1_369_353_600))
        #expect(SigV4Signer.canonicalQuery(query) == [
            "X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request",
            "X-Amz-Date=20130524T000000Z", "X-Amz-Expires=86400", "X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
            "X-Amz-SignedHeaders=host",
        ].joined(separator: "&"))
    }

    /// Presigned URLs as botocore makes them (`S3SigV4QueryAuth`), for keys with unicode and
    /// reserved characters on a server with a port.
    @Test(.enabled(if: TestServer.shouldRun(.moto)))
    func presignsAsBotocore() throws {
        let python = try #require(TestServer.motoPython, "botocore comes with moto")
        let signer = SigV4Signer(accessKey: "AKIDEXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "eu-west-3", service: "s3")
        let date = Date(timeIntervalSince1970: 1_795_000_123)
        let keys = ["notes/hello.txt", "Ünïcödé ✓/#%?&+;= ,'.txt", "日本語/file"]
        let ours = keys.map { key in
            let path = "/folio/" + SigV4Signer.encode(key, keepingSlashes: true)
            return Dictionary(uniqueKeysWithValues: signer.presignedQuery(method: "GET", path: path, host: "127.0.0.1:9000", expires: 3600, date: date))["X-Amz-Signature"] ?? ""
        }
        let script = """
            import datetime, json, sys, urllib.parse
            import botocore.auth
            from botocore.auth import S3SigV4QueryAuth
            from botocore.awsrequest import AWSRequest
            from botocore.credentials import Credentials
            auth = S3SigV4QueryAuth(Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"), "s3", "eu-west-3", expires=3600)
            # add_auth signs at the current time: it is given ours.
            stamp = datetime.datetime.strptime(sys.argv[2], "%Y%m%dT%H%M%SZ")
            botocore.auth.get_current_datetime = lambda *arguments, **options: stamp
            for key in json.loads(sys.argv[1]):
                request = AWSRequest(method="GET", url="http://127.0.0.1:9000/folio/" + urllib.parse.quote(key, safe="/~"))
                auth.add_auth(request)
                assert sys.argv[2] in request.url, request.url
                print(urllib.parse.parse_qs(urllib.parse.urlsplit(request.url).query)["X-Amz-Signature"][0])
            """
        let keysJSON = String(decoding: try JSONSerialization.data(withJSONObject: keys), as: UTF8.self)
        let output = try ProcessRunner.run(URL(fileURLWithPath: python), ["-c", script, keysJSON, SigV4Signer.timestamp(date)])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.split(separator: "\n").map(String.init) == ours)
    }

    // MARK: Listings

    @Test func readsListingsAndRefusesDamagedOnes() throws {
        let page = try ListBucketParser.parse(
            Array(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>folio</Name><Prefix></Prefix><KeyCount>2</KeyCount>
                <IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;en</NextContinuationToken>
                <Contents><Key>a &amp; b.txt</Key><LastModified>2026-11-22T08:40:00.000Z</LastModified><ETag>&quot;5d41402abc4b2a76b9719d911017c592&quot;</ETag><Size>5</Size></Contents>
                <CommonPrefixes><Prefix>docs/</Prefix></CommonPrefixes></ListBucketResult>
                """.utf8))
        #expect(page.objects == [S3Object(key: "a & b.txt", etag: "\"5d41402abc4b2a76b9719d911017c592\"", size: 5, lastModified: "2026-11-22T08:40:00.000Z")])
        #expect(page.prefixes == ["docs/"] && page.isTruncated && page.continuationToken == "tok&en")
        let refused = [
            "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",  // truncated, no way on
            "<Error><Code>AccessDenied</Code></Error>",
            "<!DOCTYPE x [<!ENTITY a \"aaaa\">]><ListBucketResult/>",
            "<ListBucketResult><Contents><Key>x</Key><Size>-1</Size></Contents></ListBucketResult>",
            "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
            "<ListBucketResult><Contents><Key>\(String(repeating: "k", count: 1025))</Key></Contents></ListBucketResult>",
            "<ListBucketResult><Contents><Key>a</Key>",
        ]
        for text in refused {
            #expect(throws: XMLRefusal.self, "\(text.prefix(60))") { try ListBucketParser.parse(Array(text.utf8)) }
        }
        let error = S3ErrorReply.parse(Array("<Error><Code>NoSuchKey</Code><Message>gone</Message></Error>".utf8))
        #expect(error.code == "NoSuchKey" && error.message == "gone")
    }

    @Test func keysThatCannotBeFilesAreLeftOut() async {
        let provider = S3Provider(endpoint: URL(string: "http://127.0.0.1:1")!, bucket: "b", prefix: "drive", accessKey: "k", secretKey: "s")
        for key in ["drive/../etc/passwd", "drive/a//b", "drive/./x", "drive/..", "other/x", "drive/", "drive/x/\(String(repeating: "n", count: 256))"] {
            #expect(await provider.record(S3Object(key: key)) == nil, "\(key)")
        }
        let kept = await provider.record(S3Object(key: "drive/docs/a.txt", etag: "\"abc\"", size: 3))
        #expect(kept?.itemIdentifier.rawValue == "docs/a.txt" && kept?.parentItemIdentifier.rawValue == "docs/" && kept?.filename == "a.txt")
    }

    // MARK: Against moto

    static func provider(_ server: TestServer, secret: String? = nil, prefix: String = "", threshold: Int = 64 << 20) throws -> S3Provider {
        let account = try #require(server.s3)
        return S3Provider(
            endpoint: server.baseURL, bucket: account.bucket, prefix: prefix, accessKey: account.accessKey, secretKey: secret ?? account.secretKey,
            pageSize: 10, requestTimeout: .seconds(10), multipartThreshold: threshold, partSize: 5 << 20)
    }

    @Test(.enabled(if: TestServer.shouldRun(.moto)))
    func motoPassesValidation() async throws {
        let server = try TestServer(.moto)
        let scratch = try TemporaryDirectory("folio-s3-validation")
        var options = ProviderValidation.Options()
        options.largeFileSize = 24 << 20
        options.pagingItems = 45
        let provider = try Self.provider(server, prefix: "drive", threshold: 8 << 20)
        let outcomes = await ProviderValidation(provider: provider, temporaryDirectory: scratch.child("tmp"), options: options).run()
        #expect(outcomes.count == ProviderValidation.caseNames.count)
        let failures = outcomes.filter { !$0.passed }.map { "\($0.name): \($0.failure ?? "")" }
        #expect(failures.isEmpty, "\(failures)\n\(server.log.suffix(2000))")
    }

    /// With moto checking signatures: the right key lists the bucket, a wrong secret or an unknown
    /// key is notAuthenticated (back off), and a missing bucket is unreachable, not empty.
    @Test(.enabled(if: TestServer.shouldRun(.moto)))
    func credentialsAreCheckedAndWrongOnesAreNotAuthenticated() async throws {
        let server = try TestServer(.moto, enforcingSignatures: true)
        let account = try #require(server.s3)
        let scratch = try TemporaryDirectory("folio-s3-auth")
        let request = FileProviderRequest(temporaryDirectory: scratch.url)
        // The whole-bucket listing's query holds no “/”, which moto's checker mishandles.
        _ = try await Self.provider(server).currentSyncAnchor(for: .workingSet, request: request)
        for (key, secret, code) in [(account.accessKey, "not-the-secret", "SignatureDoesNotMatch"), ("AKIAUNKNOWNKEY000000", account.secretKey, "InvalidAccessKeyId")] {
            let wrong = S3Provider(endpoint: server.baseURL, bucket: account.bucket, accessKey: key, secretKey: secret)
            let error = await #expect(throws: FileProviderError.self) { try await wrong.currentSyncAnchor(for: .workingSet, request: request) }
            #expect(error?.code == .notAuthenticated && error?.reaction == .backOff, "\(String(describing: error))")
            #expect(error.map { "\($0)" }?.contains(code) == true, "\(String(describing: error))")
        }
        let open = try TestServer(.moto)
        let noBucket = S3Provider(endpoint: open.baseURL, bucket: "no-such-bucket", accessKey: account.accessKey, secretKey: account.secretKey)
        let missing = await #expect(throws: FileProviderError.self) {
            try await noBucket.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: request)
        }
        #expect(missing?.code == .cannotSynchronize && missing?.message?.hasPrefix("no such bucket") == true, "a missing bucket is not an empty one: \(String(describing: missing))")
    }

    @Test(.enabled(if: TestServer.shouldRun(.moto)))
    func largeFilesUploadInPartsAndStayConditional() async throws {
        let server = try TestServer(.moto)
        let scratch = try TemporaryDirectory("folio-s3-multipart")
        let request = FileProviderRequest(temporaryDirectory: scratch.url)
        let provider = try Self.provider(server, threshold: 5 << 20)
        var bytes = [UInt8](repeating: 0, count: 12 << 20 + 17)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }
        let source = scratch.child("big.bin")
        try Data(bytes).write(to: source)
        let template = FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: .rootContainer, filename: "big.bin")
        let created = FileProviderItemRecord(
            try #require(try await provider.createItem(basedOn: template, fields: [.contents], contents: source, options: [], request: request).item))
        let etag = String(decoding: created.itemVersion.contentVersion, as: UTF8.self)
        #expect(etag.hasSuffix("-3"), "a 12 MiB file in 5 MiB parts has a three-part ETag, not \(etag)")
        #expect(created.size == Int64(bytes.count))
        let fetched = try await provider.fetchContents(for: created.itemIdentifier, version: nil, request: request, progress: Progress(totalUnitCount: 0))
        #expect(try Data(contentsOf: fetched.contents) == Data(bytes))
        #expect(fetched.item.itemVersion == created.itemVersion, "the listing and the upload's reply disagree on the version")
        // A second create of the name is a collision; a write against a stale base writes nothing.
        await #expect(throws: FileProviderError.self) {
            try await provider.createItem(basedOn: template, fields: [.contents], contents: source, options: [], request: request)
        }
        _ = try await provider.modifyItem(created, baseVersion: created.itemVersion, changedFields: .contents, contents: scratch.write("small", "now small"), options: [], request: request)
        let stale = await #expect(throws: FileProviderError.self) {
            try await provider.modifyItem(created, baseVersion: created.itemVersion, changedFields: .contents, contents: source, options: [], request: request)
        }
        #expect(stale?.code == .localVersionConflictingWithServer)
        let now = try await provider.fetchContents(for: created.itemIdentifier, version: nil, request: request, progress: Progress(totalUnitCount: 0))
        #expect(try String(contentsOf: now.contents, encoding: .utf8) == "now small")
    }

    /// `folio provider validate s3://…` runs the whole suite against moto (CI's run of the suite
    /// against the S3 provider, through the command); a missing secret is a clear refusal.
    @Test(.enabled(if: TestServer.shouldRun(.moto)))
    func theCommandValidatesS3() throws {
        let server = try TestServer(.moto)
        let account = try #require(server.s3)
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = account.accessKey
        environment["FOLIO_PASSWORD"] = account.secretKey
        let output = try ProcessRunner.folio(
            ["provider", "validate", "s3://\(account.bucket)/validate", "--endpoint", server.baseURL.absoluteString, "--large-size", "9M",
             "--paging-items", "30"], environment: environment)
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.split(separator: "\n").last == "\(ProviderValidation.caseNames.count) passed, 0 failed")
        #expect(!output.stderr.contains(account.secretKey), "the secret was printed")
        environment["FOLIO_PASSWORD"] = nil
        environment["AWS_SECRET_ACCESS_KEY"] = nil
        let refused = try ProcessRunner.folio(["provider", "validate", "s3://folio", "--endpoint", server.baseURL.absoluteString], environment: environment)
        #expect(refused.status != 0 && refused.stderr.contains("needs an access key"), "\(refused.stderr)")
    }
}

import Crypto
import Folio
import Foundation

/// AWS Signature Version 4 (the `Authorization` header form, and presigned URLs), as S3 and every S3-compatible server
/// check it: a canonical request, a string to sign and a key derived from the secret, the date, the
/// region and the service.
struct SigV4Signer: Sendable {
    let accessKey: String
    let secretKey: String
    let region: String
    let service: String

    /// The SHA-256 of an empty payload.
    static let emptyPayloadHash = SHA256.hash(data: Data()).hexadecimal

    /// `headers` with `x-amz-date`, `x-amz-content-sha256` and `Authorization` added: the signature
    /// of `method` on `path` (already percent-encoded, as sent) with `query` (not encoded) and a
    /// payload whose SHA-256 is `payloadHash` (hex, or `UNSIGNED-PAYLOAD`). Every given header is
    /// signed, so `headers` must hold `host` and only headers sent as they are.
    func sign(
        method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String, date: Date = Date()
    ) -> [(String, String)] {
        let stamp = Self.timestamp(date)
        var all = headers
        all.append(("x-amz-date", stamp))
        if service == "s3" { all.append(("x-amz-content-sha256", payloadHash)) }
        let canonicalHeaders = all.map { (name: $0.0.lowercased(), value: Self.trimmed($0.1)) }.sorted { $0.name < $1.name }
        let signedHeaders = canonicalHeaders.map(\.name).joined(separator: ";")
        let canonicalRequest = [
            method,
            path.isEmpty ? "/" : path,
            Self.canonicalQuery(query),
            canonicalHeaders.map { "\($0.name):\($0.value)\n" }.joined(),
            signedHeaders,
            payloadHash,
        ].joined(separator: "\n")
        let signature = signature(of: canonicalRequest, stamp: stamp)
        all.append(("Authorization", "AWS4-HMAC-SHA256 Credential=\(accessKey)/\(scope(stamp)),SignedHeaders=\(signedHeaders),Signature=\(signature)"))
        return all
    }

    /// The query of a presigned URL (the signature in the query string, not a header): `method` on
    /// `path` (percent-encoded, as sent) at `host`, valid for `expires` seconds from `date`, with an
    /// unsigned payload; the only header signed is `host`, so anyone holding the URL can use it
    /// without credentials until it expires.
    func presignedQuery(method: String, path: String, host: String, expires: Int, date: Date = Date()) -> [(String, String)] {
        let stamp = Self.timestamp(date)
        var query = [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", "\(accessKey)/\(scope(stamp))"), ("X-Amz-Date", stamp),
            ("X-Amz-Expires", String(expires)), ("X-Amz-SignedHeaders", "host"),
        ]
        let canonicalRequest = [
            method, path.isEmpty ? "/" : path, Self.canonicalQuery(query), "host:\(Self.trimmed(host))\n", "host", "UNSIGNED-PAYLOAD",
        ].joined(separator: "\n")
        query.append(("X-Amz-Signature", signature(of: canonicalRequest, stamp: stamp)))
        return query
    }

    /// The credential scope of a request made at `stamp`: its day, the region and the service.
    private func scope(_ stamp: String) -> String { "\(stamp.prefix(8))/\(region)/\(service)/aws4_request" }

    /// The signature of `canonicalRequest` made at `stamp`: the string to sign, under a key derived
    /// from the secret, the day, the region and the service.
    private func signature(of canonicalRequest: String, stamp: String) -> String {
        let stringToSign = ["AWS4-HMAC-SHA256", stamp, scope(stamp), SHA256.hash(data: Data(canonicalRequest.utf8)).hexadecimal].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(secretKey)".utf8))
        for part in [String(stamp.prefix(8)), region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key).hexadecimal
    }

    /// The query string as signed and sent: each name and value encoded, sorted by name, then value.
    static func canonicalQuery(_ query: [(String, String)]) -> String {
        let encoded: [(name: String, value: String)] = query.map { (encode($0.0), encode($0.1)) }
        let sorted = encoded.sorted { $0.name == $1.name ? $0.value < $1.value : $0.name < $1.name }
        return sorted.map { $0.name + "=" + $0.value }.joined(separator: "&")
    }

    /// `text` percent-encoded as SigV4 wants (every byte but `A–Z a–z 0–9 - . _ ~`, and `/` when
    /// `keepingSlashes`), with uppercase hex digits.
    static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                out.append("/")
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0xf)]))
            }
        }
        return out
    }

    /// A header value as signed: surrounding space removed, inner runs of spaces made one.
    static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }

    /// `date` as `YYYYMMDD'T'HHMMSS'Z'` in UTC.
    static func timestamp(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour),
            Int(parts.tm_min), Int(parts.tm_sec))
    }
}

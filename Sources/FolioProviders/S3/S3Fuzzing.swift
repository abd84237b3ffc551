/// Entry points for the fuzz targets in `Fuzz/` (not API).
@_spi(Fuzzing)
public enum S3Fuzzing {
    /// Reads `bytes` as an S3 reply (a listing, an error, a result): refused or read, never a trap;
    /// a truncated listing always has a way on, and no key the provider serves escapes its prefix.
    public static func exerciseReply(_ bytes: [UInt8]) {
        _ = S3ErrorReply.parse(bytes)
        _ = try? S3ResultField.parse(bytes, field: "UploadId")
        guard let page = try? ListBucketParser.parse(bytes) else { return }
        precondition(!page.isTruncated || page.continuationToken?.isEmpty == false, "a truncated listing without a token was accepted")
        for key in page.objects.map(\.key) + page.prefixes where S3Provider.isServable(key) {
            var path = Substring(key)
            if path.hasSuffix("/") { path = path.dropLast() }
            precondition(path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }, "a served key escapes")
        }
    }
}

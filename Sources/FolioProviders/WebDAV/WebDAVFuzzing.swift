/// Entry points for the fuzz targets in `Fuzz/` (not API).
@_spi(Fuzzing)
public enum WebDAVFuzzing {
    /// Parses `bytes` as a PROPFIND reply and decodes every href against a base: refused or read,
    /// never a trap, and no decoded path escapes the base.
    public static func exerciseMultistatus(_ bytes: [UInt8]) {
        guard let resources = try? MultistatusParser.parse(bytes) else { return }
        for resource in resources {
            guard let relative = DAVPath.relative(resource.href, basePath: "/dav/", origin: "http://127.0.0.1:1") else { continue }
            let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
            precondition(relative.isEmpty || segments.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }, "a decoded path escapes the base")
        }
    }
}

import CFolioShims

/// Matches file names against shared-mime-info globs the way the spec says: literal names first,
/// then simple `*.suffix` patterns (one hash lookup per dot in the name), then full `fnmatch` patterns;
/// the highest weight wins and, at equal weight, the longest pattern.
struct GlobMatcher: Sendable {
    private struct Candidate: Sendable {
        var mimeType: String
        var weight: Int
        var patternLength: Int
        var caseSensitive: Bool
        var pattern: String
    }

    private var literals: [String: [Candidate]] = [:]
    private var suffixes: [String: [Candidate]] = [:]
    private var patterns: [Candidate] = []
    /// The patterns' bytes, each ending in a zero, for `fnmatch` (converted once, not per name).
    private var patternBytes: [[CChar]] = []

    init(globs: [SharedMimeInfo.Glob]) {
        for glob in globs {
            let candidate = Candidate(
                mimeType: glob.mimeType, weight: glob.weight, patternLength: glob.pattern.utf8.count,
                caseSensitive: glob.caseSensitive, pattern: glob.pattern)
            if let suffix = glob.suffix {
                suffixes[suffix, default: []].append(candidate)
            } else if !glob.pattern.utf8.contains(where: Self.isWildcard) {
                literals[glob.pattern.asciiLowercased(), default: []].append(candidate)
            } else {
                patterns.append(candidate)
                patternBytes.append(Array(glob.pattern.utf8CString))
            }
        }
    }

    /// Returns the extension of a `*.ext` pattern with no other wildcards, such as `tar.gz`.
    static func simpleSuffix(_ pattern: String) -> String? {
        let utf8 = pattern.utf8
        guard utf8.count > 2, utf8.starts(with: "*.".utf8) else { return nil }
        let rest = utf8.dropFirst(2)
        guard !rest.contains(where: isWildcard) else { return nil }
        return String(pattern[rest.startIndex...])
    }

    private static func isWildcard(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "*") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "[")
    }

    /// Returns the MIME types whose globs match `name` best: all those with the best weight and length,
    /// best first. Empty when no glob matches.
    func mimeTypes(forFileName name: String) -> [String] {
        let lower = name.asciiLowercased()
        if let hits = literals[lower] {
            let matched = hits.filter { !$0.caseSensitive || $0.pattern == name }
            if !matched.isEmpty { return best(matched) }
        }
        var matched: [Candidate] = []
        var index = lower.utf8.startIndex
        let utf8 = lower.utf8
        while let dot = utf8[index...].firstIndex(of: UInt8(ascii: ".")) {
            let suffix = String(lower[utf8.index(after: dot)...])
            if let hits = suffixes[suffix] {
                for hit in hits where !hit.caseSensitive || name.hasSuffix(String(hit.pattern.dropFirst(1))) {
                    matched.append(hit)
                }
            }
            index = utf8.index(after: dot)
        }
        name.withCString { name in
            for (candidate, pattern) in zip(patterns, patternBytes) where cfolio_fnmatch(pattern, name, candidate.caseSensitive ? 0 : 1) == 0 {
                matched.append(candidate)
            }
        }
        return best(matched)
    }

    private func best(_ candidates: [Candidate]) -> [String] {
        guard let top = candidates.max(by: {
            ($0.weight, $0.patternLength) < ($1.weight, $1.patternLength)
        }) else { return [] }
        var result: [String] = []
        for c in candidates where c.weight == top.weight && c.patternLength == top.patternLength {
            if !result.contains(c.mimeType) { result.append(c.mimeType) }
        }
        return result
    }
}

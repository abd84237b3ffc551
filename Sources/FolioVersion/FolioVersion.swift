/// Folio's version: the package's own, and the git commit it was built from.
public enum FolioVersion {
    /// The package's version (Debian's package carries it too).
    public static let package = "0.9.0"

    /// `0.9.0`, or `0.9.0 (commit 1a2b3c4d5e6f)` for a build from a git checkout (`+` after the
    /// commit: the work tree had changes).
    public static var description: String {
        commit.isEmpty ? package : "\(package) (commit \(commit))"
    }
}

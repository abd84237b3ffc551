/// Where the daemon's socket is: one rule for `FolioPaths` and for the `folio` front, which has
/// no Foundation.
package enum DaemonSocketPath {
    /// `$XDG_RUNTIME_DIR` when set and not empty, else `/tmp/folio-runtime-<uid>`.
    package static func runtimeDirectory(_ xdgRuntimeDirectory: String?, uid: UInt32) -> String {
        if let xdgRuntimeDirectory, !xdgRuntimeDirectory.isEmpty { return xdgRuntimeDirectory }
        return "/tmp/folio-runtime-\(uid)"
    }

    /// `<runtime directory>/folio`: the socket's folder (mode 0700).
    package static func directory(inRuntimeDirectory runtimeDirectory: String) -> String { runtimeDirectory + "/folio" }

    /// `<runtime directory>/folio/folio.sock`.
    package static func socket(inRuntimeDirectory runtimeDirectory: String) -> String {
        directory(inRuntimeDirectory: runtimeDirectory) + "/folio.sock"
    }
}

import ArgumentParser
import Folio
import FolioSystem
import Foundation

/// The bubblewrap command line that confines an app: the system's read-only folders, its container
/// (read-write), its persistent grants at their own paths (read-only ones read-only), the
/// executable's folder (read-only), and its own daemon socket at the usual socket path — so every
/// connection it makes is that app. Nothing else of the user's files is there.
struct SandboxArguments {
    let app: String
    let paths: FolioPaths
    let container: AppContainer

    /// Folders of the system every program needs, bound read-only when present.
    static let systemFolders = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"]

    /// Where bubblewrap is, or nil.
    static var bubblewrap: String? { ExecutableSearch.locate("bwrap") }

    func arguments(for command: [String], environment: inout [String: String]) throws -> [String] {
        guard let bwrap = Self.bubblewrap else {
            printError("folio: --sandbox needs bubblewrap (apt install bubblewrap), which is not installed")
            throw ExitCode.failure
        }
        guard let executable = ExecutableSearch.locate(command[0], path: environment["PATH"]) else {
            printError("folio: no command \(command[0])")
            throw ExitCode(127)
        }
        let (socket, grants) = try withDaemon("run") { daemon -> (String, [WireValue]) in
            let socket = try daemon.send(AppSocketRequest(app: app)).path
            let grants = try daemon.send(GrantList(app: app))["grants"]?.arrayValue ?? []
            return (socket, grants)
        }
        var arguments = [bwrap, "--die-with-parent", "--unshare-all", "--share-net", "--new-session"]
        for folder in Self.systemFolders where FileManager.default.fileExists(atPath: folder) {
            arguments += ["--ro-bind", folder, folder]
        }
        arguments += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", paths.runtimeDirectory]
        // The app's container, read-write, and the registered types (read-only) for UTType lookups.
        arguments += ["--bind", container.url.path, container.url.path]
        if FileManager.default.fileExists(atPath: paths.appsDirectory) { arguments += ["--ro-bind", paths.appsDirectory, paths.appsDirectory] }
        let folder = (executable as NSString).deletingLastPathComponent
        if !Self.systemFolders.contains(where: { folder == $0 || folder.hasPrefix($0 + "/") }) {
            arguments += ["--ro-bind", folder, folder]
        }
        for grant in grants where grant["lifetime"]?.stringValue == "persistent" {
            guard let path = grant["path"]?.stringValue, FileManager.default.fileExists(atPath: path) else { continue }
            let writable = grant["access"]?.stringValue == "read-write"
            // A granted document's folder is its related items' folder, but only the document is bound.
            arguments += [writable ? "--bind" : "--ro-bind", path, path]
        }
        arguments += ["--bind", socket, paths.socketPath]
        arguments += ["--chdir", container.url.path]
        environment["FOLIO_SANDBOXED"] = "1"
        return arguments + ["--", executable] + command.dropFirst()
    }
}

import ArgumentParser
import Folio
import FolioSystem
import Foundation

/// The bubblewrap command line that confines an app: the system's read-only folders, its container
/// (read-write), its persistent grants at their own paths (read-only ones read-only), the
/// executable itself and the libraries beside it (`$ORIGIN`; read-only) — never the folder they are
/// in, which may hold anything of the user's — and its own daemon socket at the usual socket path,
/// so every connection it makes is that app. Nothing else of the user's files is there.
struct SandboxArguments {
    let app: String
    let paths: FolioPaths
    let container: AppContainer

    /// Folders of the system every program needs, bound read-only when present.
    static let systemFolders = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"]

    /// Where bubblewrap is, or nil.
    static var bubblewrap: String? { ExecutableSearch.locate("bwrap") }

    /// Why an executable in `folder` may not run sandboxed (nil: it may): straight in the home
    /// folder, or in one of Folio's own (keys, the index, sockets), the app would sit beside what it
    /// must not reach.
    static func unsafeFolder(_ folder: String, paths: FolioPaths, home: String?) -> String? {
        let folder = CoordinationPath.normalize(folder)
        if let home, folder == CoordinationPath.normalize(home) { return "it sits directly in the home folder" }
        for own in [paths.configDirectory, paths.stateDirectory, paths.dataDirectory, paths.socketDirectory]
        where CoordinationPath.isSelfOrDescendant(folder, of: CoordinationPath.normalize(own)) {
            return "it sits in Folio's own folder \(own)"
        }
        return nil
    }

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
            // The user's home, not the app's (its container, in `environment`).
            if let why = Self.unsafeFolder(folder, paths: paths, home: ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) {
                printError("folio: will not run \(executable) in a sandbox: \(why); put the app in a folder of its own")
                throw ExitCode.failure
            }
            arguments += ["--ro-bind", executable, executable]
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasSuffix(".so") || name.contains(".so.") {
                arguments += ["--ro-bind", folder + "/" + name, folder + "/" + name]
            }
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

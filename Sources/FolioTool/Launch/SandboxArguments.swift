import ArgumentParser
import CFolioShims
import Folio
import FolioSystem
import FolioWire
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The bubblewrap command line that confines an app, an allow-list: the system's read-only
/// folders, its container (read-write), its live persistent grants (read-only ones read-only), the
/// executable itself and the libraries it loads from its folder (``SandboxLibraries``; read-only)
/// — never the folder they are in, which may hold anything of the user's — and its own daemon
/// socket at the usual socket path, so every connection it makes is that app. Grants, the
/// executable and its libraries are bound by descriptors opened and checked once, never by path.
/// Nothing else of the user's files is there.
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

    /// A sandbox's command line, and the descriptors its binds name (open, without close-on-exec,
    /// until bubblewrap has bound them).
    struct Command {
        var arguments: [String]
        var descriptors: [ResolvedItem]
    }

    func arguments(for command: [String], environment: inout [String: String]) throws -> Command {
        guard let bwrap = Self.bubblewrap else {
            printError("folio: --sandbox needs bubblewrap (apt install bubblewrap), which is not installed")
            throw ExitCode.failure
        }
        guard let located = ExecutableSearch.locate(command[0], path: environment["PATH"]) else {
            printError("folio: no command \(command[0])")
            throw ExitCode(127)
        }
        let socket = try withDaemon("run") { daemon in try daemon.send(AppSocketRequest(app: app)).path }
        var arguments = [bwrap, "--die-with-parent", "--unshare-all", "--share-net", "--new-session"]
        var descriptors: [ResolvedItem] = []
        func bind(_ item: ResolvedItem, at destination: String, writable: Bool) {
            descriptors.append(item)
            arguments += [writable ? "--bind-fd" : "--ro-bind-fd", "\(item.descriptor.rawValue)", destination]
        }
        for folder in Self.systemFolders where FileManager.default.fileExists(atPath: folder) {
            arguments += ["--ro-bind", folder, folder]
        }
        arguments += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", paths.runtimeDirectory]
        // The app's container, read-write, and the registered types (read-only) for UTType lookups.
        arguments += ["--bind", container.url.path, container.url.path]
        if FileManager.default.fileExists(atPath: paths.appsDirectory) { arguments += ["--ro-bind", paths.appsDirectory, paths.appsDirectory] }
        let libraries: SandboxLibraries
        do { libraries = try SandboxLibraries(executable: located, systemFolders: Self.systemFolders) } catch {
            printError("folio: cannot run \(located) in a sandbox: it is not a file that can be opened (\(error))")
            throw ExitCode.failure
        }
        // A system program runs by the name it was found at (the system folders are all there, and
        // a multi-call program, `unxz -> xz`, acts by its name); an app's by its real path, the
        // only one bound.
        let inSystemFolder = Self.systemFolders.contains { CoordinationPath.isSelfOrDescendant(libraries.folder, of: $0) }
        let executable = inSystemFolder ? located : libraries.executable
        if !inSystemFolder {
            // The user's home, not the app's (its container, in `environment`).
            if let why = Self.unsafeFolder(libraries.folder, paths: paths, home: ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) {
                printError("folio: will not run \(executable) in a sandbox: \(why); put the app in a folder of its own")
                throw ExitCode.failure
            }
            for library in libraries.binds { bind(library.item, at: library.destination, writable: false) }
            for (path, reason) in libraries.refused { printError("folio: not binding \(path) into the sandbox: \(reason)") }
        }
        // Each live grant, by the descriptor the daemon's identity check opened: a path that names
        // another file by now binds nothing. A granted document's folder is its related items'
        // folder, but only the document is bound.
        for (grant, item) in try grantDescriptors() {
            bind(item, at: grant["path"]?.stringValue ?? item.path, writable: grant["access"]?.stringValue == "read-write")
        }
        arguments += ["--bind", socket, paths.socketPath]
        arguments += ["--chdir", container.url.path]
        environment["FOLIO_SANDBOXED"] = "1"
        return Command(arguments: arguments + ["--", executable] + command.dropFirst(), descriptors: descriptors)
    }

    /// The app's live grants, each with the descriptor the daemon opened and checked for it.
    private func grantDescriptors() throws -> [(WireValue, ResolvedItem)] {
        let reply = try withDaemon("run") { daemon in try daemon.send(GrantDescriptors(app: app)) }
        let grants = reply["grants"]?.arrayValue ?? []
        guard let socket = reply["socket"]?.stringValue else { throw ValidationError("the daemon sent no socket for the grants") }
        let connection = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(connection) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received = [Int32](repeating: -1, count: max(1, grants.count))
        guard UnixSocketAddress.connect(connection, to: socket) == 0,
            case let count = cfolio_receive_fds(connection, &received, Int32(received.count)), count == Int32(grants.count)
        else {
            printError("folio: cannot take the grants' descriptors from the daemon: \(Errno(rawValue: errno))")
            throw ExitCode.failure
        }
        var items: [(WireValue, ResolvedItem)] = []
        for (grant, descriptor) in zip(grants, received.prefix(grants.count)) {
            guard let item = try? ResolvedItem.adopt(FileDescriptor(rawValue: descriptor)) else { continue }
            items.append((grant, item))
        }
        return items
    }
}

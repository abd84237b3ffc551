import FolioSystem
import Foundation

/// The user's session keyring — the Secret Service (GNOME Keyring, KeePassXC, KWallet's bridge) on
/// the session bus — reached through `secret-tool`, where Folio keeps the key that seals its
/// secrets when the session has one: then a copy of Folio's folders alone (a backup, a stolen disk
/// image of a locked session) holds the sealed secrets without their key.
///
/// Blocking: each call runs `secret-tool` and waits for it (at most ``deadline``); for a blocking
/// pool or a command's own thread.
package struct SessionKeyring: Sendable {
    /// The `secret-tool` executable.
    let tool: String
    /// The environment `secret-tool` runs with (its session bus address).
    let environment: [String: String]
    /// The item's attributes: Folio's credentials key of one configuration folder (two XDG trees
    /// in one session keep two keys).
    let attributes: [String]

    /// How long a call may take before it is given up (a keyring waiting to be unlocked by a person
    /// is not reachable now).
    static let deadline: TimeInterval = 10

    /// The keyring of this session, or nil when there is none to reach: no session bus
    /// (`DBUS_SESSION_BUS_ADDRESS`), or no `secret-tool` (Debian: libsecret-tools).
    package init?(configDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let bus = environment["DBUS_SESSION_BUS_ADDRESS"], !bus.isEmpty,
            let tool = ExecutableSearch.locate("secret-tool", path: environment["PATH"])
        else { return nil }
        self.tool = tool
        self.environment = environment
        attributes = ["application", "folio", "kind", "credentials-key", "folder", configDirectory]
    }

    /// The key stored for this folder, or nil when there is none.
    /// - Throws: when the keyring cannot be reached or answers with something that is not a key.
    package func lookup() throws -> [UInt8]? {
        let (status, output, complained) = try run(["lookup"] + attributes, input: nil)
        // secret-tool exits 1 and prints nothing when no item matches; a keyring it cannot
        // reach or that fails makes it exit 1 too, with a message.
        if status == 1 && output.isEmpty && !complained { return nil }
        guard status == 0 else { throw failure("lookup", status) }
        guard let bytes = Data(base64Encoded: String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32 else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "the session keyring holds a damaged Folio credentials key"])
        }
        return Array(bytes)
    }

    /// Stores `key` for this folder (replacing what was stored).
    package func store(_ key: [UInt8]) throws {
        let (status, _, _) = try run(["store", "--label", "Folio credentials key"] + attributes, input: Data(Data(key).base64EncodedString().utf8))
        guard status == 0 else { throw failure("store", status) }
    }

    /// Removes this folder's key.
    package func clear() throws {
        let (status, _, _) = try run(["clear"] + attributes, input: nil)
        guard status == 0 || status == 1 else { throw failure("clear", status) }
    }

    private func failure(_ operation: String, _ status: Int32) -> CocoaError {
        CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the session keyring refused to \(operation) Folio's credentials key (secret-tool exited with \(status))"])
    }

    /// Runs `secret-tool` with `arguments` (and `input` on its standard input); its exit status,
    /// standard output, and whether it wrote to its error output (whose text is dropped).
    private func run(_ arguments: [String], input: Data?) throws -> (Int32, Data, Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = environment
        let output = Pipe(), errors = Pipe(), feed = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input == nil ? FileHandle.nullDevice : feed
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        if let input {
            feed.fileHandleForWriting.write(input)
            try? feed.fileHandleForWriting.close()
        }
        // The output is a key or nothing, which the pipe holds until the end: read after it.
        guard ended.wait(timeout: .now() + Self.deadline) == .success else {
            process.terminate()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the session keyring did not answer within \(Int(Self.deadline)) s (locked?)"])
        }
        // Both pipes are drained without waiting: the child has ended, and what it wrote is in them.
        return (process.terminationStatus, Self.available(output), !Self.available(errors).isEmpty)
    }

    /// What a pipe holds now, read without waiting for its end (a child's child may still hold it).
    private static func available(_ pipe: Pipe) -> Data {
        let fd = pipe.fileHandleForReading.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return data }
            data.append(contentsOf: buffer[..<count])
        }
    }
}

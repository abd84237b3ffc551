import FolioSystem
import Foundation
import Logging
import UniformTypes
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Makes thumbnails for files that carry none of their own, with the machine's freedesktop
/// thumbnailers (`$XDG_DATA_HOME/thumbnailers` and `$XDG_DATA_DIRS/thumbnailers`, `*.thumbnailer`
/// files naming an `Exec` line and the MIME types it handles), or else poppler's `pdftoppm` for PDFs
/// and ImageMagick's `convert` for images. The result goes to the freedesktop cache,
/// where file managers find it too.
///
/// A thumbnailer reads untrusted files, so it runs with a time limit (and is killed past it), and
/// inside bubblewrap when the machine has it: the whole file system read-only, no network, only
/// the output folder writable.
package enum ThumbnailGenerator {
    /// The pixel size asked for (the largest Apple key is 1024×1024).
    static let size = 1024
    /// How long a thumbnailer may run.
    static let timeLimit: TimeInterval = 20
    private static let logger = Logger(label: "folio.thumbnails")

    /// One `.thumbnailer` file.
    package struct Thumbnailer: Equatable {
        package var exec: [String]
        var mimeTypes: Set<String>
        var tryExec: String?

        /// Reads a `.thumbnailer` key file: the `[Thumbnailer Entry]` group's `Exec`, `MimeType`
        /// and `TryExec`. Nil when it lacks `Exec` or `MimeType`, or is not valid text.
        init?(text: String) {
            var inGroup = false
            var values: [String: String] = [:]
            for rawLine in text.split(separator: "\n", omittingEmptySubsequences: true).prefix(256) {
                let line = rawLine.trimmingCharacters(in: .whitespaces)
                if line.hasPrefix("#") || line.isEmpty { continue }
                if line.hasPrefix("[") {
                    inGroup = line == "[Thumbnailer Entry]"
                    continue
                }
                guard inGroup, let equals = line.firstIndex(of: "=") else { continue }
                values[line[..<equals].trimmingCharacters(in: .whitespaces)] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            }
            guard let exec = values["Exec"], let types = values["MimeType"] else { return nil }
            self.exec = exec.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            mimeTypes = Set(types.split(separator: ";", omittingEmptySubsequences: true).map(String.init))
            tryExec = values["TryExec"]
            guard let program = self.exec.first, program.hasPrefix("/") || !program.contains("/") else { return nil }
        }
    }

    /// The thumbnailers installed, first found first (the user's folder before the system's).
    package static func installed(environment: [String: String] = ProcessInfo.processInfo.environment) -> [Thumbnailer] {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
        let dataDirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        var found: [Thumbnailer] = []
        for folder in [dataHome] + dataDirs {
            let directory = folder + "/thumbnailers"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { continue }
            for name in names.sorted() where name.hasSuffix(".thumbnailer") {
                guard let data = FileManager.default.contents(atPath: directory + "/" + name), data.count <= 65_536,
                    let text = String(data: data, encoding: .utf8), let thumbnailer = Thumbnailer(text: text)
                else { continue }
                if let tryExec = thumbnailer.tryExec, ExecutableSearch.locate(tryExec) == nil { continue }
                found.append(thumbnailer)
            }
        }
        return found
    }

    /// Makes a thumbnail of the file at `url` into the cache; returns the PNG, or nil when no tool
    /// handles its type or the tool failed.
    static func generate(for url: URL, cache: String = Thumbnails.cacheDirectory) -> Data? {
        guard let type = try? UTType.contentType(ofItemAt: url).type else { return nil }
        let output = Thumbnails.cachePath(for: url, in: cache)
        do {
            try FileManager.default.createDirectory(
                atPath: (output as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            return nil
        }
        let temporary = output + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).png"
        defer { unlink(temporary) }
        let mime = type.preferredMIMEType ?? ""
        var command: [String]?
        if let thumbnailer = installed().first(where: { $0.mimeTypes.contains(mime) }) {
            command = thumbnailer.exec.map { argument in
                argument.replacingOccurrences(of: "%s", with: String(size)).replacingOccurrences(of: "%u", with: url.absoluteString)
                    .replacingOccurrences(of: "%i", with: url.path).replacingOccurrences(of: "%o", with: temporary)
                    .replacingOccurrences(of: "%%", with: "%")
            }
        } else if type.conforms(to: .pdf), let pdftoppm = ExecutableSearch.locate("pdftoppm") {
            command = [pdftoppm, "-png", "-singlefile", "-scale-to", String(size), url.path, String(temporary.dropLast(4))]
        } else if type.conforms(to: .image) || type.conforms(to: .pdf), let convert = ExecutableSearch.locate("convert") {
            command = [convert, url.path + "[0]", "-thumbnail", "\(size)x\(size)", "png:" + temporary]
        }
        guard var command, let program = ExecutableSearch.locate(command[0]) else { return nil }
        command[0] = program
        guard run(sandboxed(command, input: url.path, output: temporary)), let png = FileManager.default.contents(atPath: temporary),
            png.starts(with: [0x89, 0x50, 0x4E, 0x47])
        else {
            logger.notice("no thumbnail made", metadata: ["path": "\(url.path)", "tool": "\(command[0])"])
            return nil
        }
        guard rename(temporary, output) == 0 else { return nil }
        return png
    }

    /// The command inside bubblewrap when the machine has it: everything read-only, the output's
    /// folder writable, no network, a private /tmp (with the input in it when it lives there).
    static func sandboxed(_ command: [String], input: String, output: String) -> [String] {
        Bubblewrap.wrap(command, readable: [input], writable: [(output as NSString).deletingLastPathComponent])
    }

    /// Runs `command` with the time limit; whether it exited with 0.
    static func run(_ command: [String]) -> Bool {
        SpawnedProcess.run(command, timeLimit: .milliseconds(Int64(timeLimit * 1000))) == 0
    }
}

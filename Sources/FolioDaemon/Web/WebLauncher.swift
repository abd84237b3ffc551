import FolioSystem
import Foundation
import SystemPackage

/// Hands a browser the page's first address without putting the token on a command line (which
/// any user can read in `/proc/*/cmdline` for as long as the browser runs): a file only this user
/// can read, `open-<random>.html` (0600), that leads on to the address. `folio browse` and the
/// picker (when an app asks and no page is open) use it.
public enum WebLauncher {
    /// Writes the file in `folder` and returns its path; removes the ones older than a minute (a
    /// browser has read them by then).
    public static func file(for address: String, in folder: String) throws -> String {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("open-") && name.hasSuffix(".html") {
            let path = folder + "/" + name
            if let status = try? FileStatus(path: FilePath(path)), status.modificationTime < Date().timeIntervalSince1970 - 60 {
                unlink(path)
            }
        }
        let escaped = address.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
        let page = """
            <!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=\(escaped)">
            <title>Folio</title><p><a href="\(escaped)">Open Folio</a></p>
            """
        let path = folder + "/open-\(UUID().uuidString.lowercased()).html"
        try AtomicFile.write(Data(page.utf8), to: path, permissions: [.ownerReadWrite])
        return path
    }

    /// Opens `address` in the user's browser with `xdg-open` (through the file), when there is a
    /// display and `xdg-open`; false otherwise. Does not wait for the browser.
    static func open(_ address: String, in folder: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil,
            let opener = ExecutableSearch.locate("xdg-open", path: environment["PATH"]), let file = try? file(for: address, in: folder)
        else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [URL(fileURLWithPath: file).absoluteString]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.terminationHandler = { _ in }
        return (try? process.run()) != nil
    }
}

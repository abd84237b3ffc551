import ArgumentParser
import Folio
import FolioDaemon
import FolioSystem
import Foundation
import SystemPackage

/// `folio browse [PATH]`: opens the document browser the daemon serves, at `PATH` (default: the
/// home folder), with `xdg-open`; prints the address on a machine without a desktop.
struct BrowseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "Open the document browser page the daemon serves (or print its address).")

    @Argument(help: "The folder to show (default: your home folder).")
    var path: String?

    @Flag(help: "Print the address instead of opening it.")
    var print = false

    func run() throws {
        let paths = FolioPaths()
        let file = paths.socketDirectory + "/web.json"
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ValidationError("no browser page is served: start the daemon (`folio daemon`), which writes \(file)")
        }
        guard let page = try? WireValue(parsing: Array(data)), let url = page["url"]?.stringValue, let token = page["token"]?.stringValue else {
            throw ValidationError("\(file) cannot be read; restart the daemon")
        }
        var query = "token=" + token
        if let path {
            let absolute = CoordinationPath.normalize(path, base: CoordinationPath.currentDirectory())
            query += "&path=" + (absolute.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-._~"))) ?? "")
        }
        let address = url + "?" + query
        if print || ProcessInfo.processInfo.environment["DISPLAY"] == nil && ProcessInfo.processInfo.environment["WAYLAND_DISPLAY"] == nil {
            Swift.print(address)
            return
        }
        guard let opener = ExecutableSearch.locate("xdg-open") else {
            Swift.print(address)
            return
        }
        // The browser is handed a file that only this user can read, which leads on to the page:
        // the token never appears on a command line, where any user of the machine could read it
        // (`/proc/*/cmdline`), for as long as the browser runs.
        let launcher = try WebLauncher.file(for: address, in: paths.socketDirectory)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [URL(fileURLWithPath: launcher).absoluteString]
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 { Swift.print(address) }
    }
}

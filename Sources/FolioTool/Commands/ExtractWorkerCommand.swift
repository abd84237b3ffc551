import ArgumentParser
import FolioDaemon
import Foundation

/// `folio extract-worker`: the daemon's sandboxed text extractor (not for direct use). Says
/// `ready\n` once started, then reads `<format>\t<path>` lines and answers each with
/// `ok <byte count>\n<text>` or `error <reason>\n`.
struct ExtractWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract-worker", abstract: "The daemon's text extractor (not for direct use).", shouldDisplay: false)

    func run() throws {
        // Ready: the daemon's time limit for each file starts now.
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        while let line = readLine(strippingNewline: true) {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            let reply = parts.count == 2 ? TextExtraction.reply(format: parts[0], path: parts[1]) : nil
            FileHandle.standardOutput.write(Data(reply ?? Array("error a request this worker does not understand\n".utf8)))
        }
    }
}

// A test helper: runs coordination scripts read from stdin (one JSON command per line) and writes
// events to stdout (one JSON object per line), through the Folio daemon when FOLIO_COORDINATION=daemon.
// Cross-process tests spawn several of these.
import Folio
import FolioTesting
import Foundation

let output = FileHandle.standardOutput
let outputLock = NSLock()

@Sendable func emit(_ event: WireValue) {
    var bytes = event.serialized()
    bytes.append(UInt8(ascii: "\n"))
    outputLock.withLock { output.write(Data(bytes)) }
}

let driver = CoordinationDriver(emit: emit)
emit(["event": "ready", "pid": .int(Int64(ProcessInfo.processInfo.processIdentifier))])
while let line = readLine() {
    guard !line.isEmpty else { continue }
    guard let command = try? WireValue(parsing: Array(line.utf8)) else {
        emit(["event": "error", "message": .string("not JSON: \(line)")])
        continue
    }
    if command["op"]?.stringValue == "exit" { break }
    driver.run(command)
}
exit(0)

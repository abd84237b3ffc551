@testable import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A child process saving a document in a loop is killed with SIGKILL at random moments; the file
/// always holds one complete save, and the next open leaves no temporary file behind.
@Suite("Document: crash safety", .elasticPool)
struct CrashTests {
    @Test func killedMidSaveLeavesOldOrNewNeverTorn() async throws {
        let world = try DocumentWorld()
        let url = try world.file("journal.txt", "BEGIN start x END start\n")
        var environment = world.directory.xdgEnvironment()
        environment["FOLIO_COORDINATION"] = "local"
        var rounds = Set<String>()
        var killedMidSave = 0
        let iterations = 200
        for iteration in 0..<iterations {
            let child = Process()
            child.executableURL = ProcessRunner.builtExecutable("FolioCoordinationHelper")
            child.environment = environment
            let input = Pipe()
            child.standardInput = input
            let output = Pipe()
            child.standardOutput = output
            child.standardError = FileHandle.nullDevice
            try child.run()
            let command = #"{"op":"save-loop","path":"\#(url.path)","prefix":"i\#(iteration)","minSize":1,"maxSize":262144}"# + "\n"
            try input.fileHandleForWriting.write(contentsOf: Data(command.utf8))
            // Wait until the child saves in its loop, then kill it at a random moment.
            var seen = ""
            while !seen.contains(#""what":"looping""#) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen += String(decoding: chunk, as: UTF8.self)
            }
            usleep(useconds_t(Int.random(in: 0...40_000)))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let temporaries = try FileManager.default.contentsOfDirectory(atPath: world.directory.path).filter { $0.contains(".folio-save-") }
            if !temporaries.isEmpty { killedMidSave += 1 }
            let contents = try String(contentsOf: url, encoding: .utf8)
            let round = Self.completeSave(contents)
            #expect(round != nil, "iteration \(iteration): torn or empty file (\(contents.utf8.count) bytes: \(contents.prefix(24))…\(contents.suffix(24)))")
            if let round { rounds.insert(round) }
        }
        #expect(killedMidSave > 0, "no kill landed in the middle of a save")
        #expect(rounds.count > iterations / 10, "the children saved too rarely to prove anything: \(rounds.count) distinct saves")
        let document = world.document(url)
        #expect(await document.open())
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: world.directory.path).filter { $0.contains(".folio-save-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// The save's round when `contents` is exactly one framed save, `BEGIN n x… END n\n`.
    static func completeSave(_ contents: String) -> String? {
        let bytes = Array(contents.utf8)
        guard bytes.starts(with: Array("BEGIN ".utf8)), bytes.last == UInt8(ascii: "\n") else { return nil }
        let afterBegin = bytes.dropFirst(6)
        guard let space = afterBegin.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        let round = String(decoding: afterBegin[..<space], as: UTF8.self)
        let tail = Array(" END \(round)\n".utf8)
        guard bytes.count >= space + 1 + tail.count, Array(bytes.suffix(tail.count)) == tail else { return nil }
        let body = bytes[(space + 1)..<(bytes.count - tail.count)]
        return body.allSatisfy { $0 == UInt8(ascii: "x") } ? round : nil
    }
}

import Foundation
import FolioTesting
import FolioTestTraits
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

@Suite("Daemon protocol: bad input is refused and harms no one", .serialized, .elasticPool)
struct ProtocolRobustnessTests {
    @Test func malformedTruncatedOversizedAndOutOfOrderFrames() throws {
        let dir = try TemporaryDirectory("robust")
        let daemon = try DaemonProcess(environment: dir.xdgEnvironment())
        defer { daemon.stop() }
        let socket = try daemon.waitForListening()
        let file = dir.path + "/f.txt"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))

        // A well-behaved client holds a claim throughout.
        let good = try RawClient(socket: socket)
        #expect(good.call(#"{"id":1,"method":"hello","params":{"protocol":1}}"#).contains(#""protocol":1"#))
        good.send(#"{"id":2,"method":"claim","params":{"purpose":"good","items":[{"path":"\#(file)","access":"read","options":0}]}}"# + "\n")
        #expect(good.line()?.contains(#""paths":["\#(file)"]"#) == true)

        let bad = try RawClient(socket: socket)
        // Out of order: claims before hello.
        #expect(bad.call(#"{"id":3,"method":"claim","params":{"purpose":"p","items":[{"path":"/x","access":"read","options":0}]}}"#).contains("say hello first"))
        #expect(bad.call(#"{"id":1,"method":"hello"}"#).contains(#""protocol":1"#))
        #expect(bad.call(#"{"id":2,"method":"hello"}"#).contains("already said"))
        let refusals: [(String, String)] = [
            ("not json at all", "not a JSON frame"),
            (#"{"id":5,"method":"claim","params":{"purpose":"p","items":[{"path":"/x""#, "not a JSON frame"),  // truncated
            (#"[1,2,3]"#, "JSON object"),
            (#"{"id":"five","method":"status"}"#, "integer"),
            (#"{"id":6}"#, "method"),
            (#"{"id":7,"method":"no.such"}"#, "unknown-method"),
            (#"{"id":8,"method":"claim","params":{"purpose":"p","items":[{"path":"relative","access":"read","options":0}]}}"#, "absolute"),
            (#"{"id":9,"method":"claim","params":{"purpose":"p","items":[{"path":"/x","access":"sideways","options":0}]}}"#, "access"),
            (#"{"id":10,"method":"claim","params":{"purpose":"p","items":[{"path":"/x","access":"read","options":4096}]}}"#, "option bits"),
            (#"{"id":11,"method":"claim","params":{"purpose":"","items":[{"path":"/x","access":"read","options":0}]}}"#, "purpose"),
            (#"{"id":12,"method":"claim","params":{"purpose":"p","items":[]}}"#, "items"),
            (#"{"id":-4,"method":"claim","params":{"purpose":"p","items":[{"path":"/x","access":"read","options":0}]}}"#, "positive"),
            (#"{"id":13,"method":"release","params":{"claim":999}}"#, "no claim 999"),
            (#"{"id":14,"method":"presenter.answer","params":{"token":77}}"#, "awaits an answer"),
            (#"{"id":15,"method":"moved","params":{"claim":1,"from":"/a","to":"/b"}}"#, "inside a granted"),
            (#"{"id":16,"method":"claim","params":{"purpose":"p","items":[{"path":"/\#(String(repeating: "a", count: 5000))","access":"read","options":0}]}}"#, "longer than"),
            (#"{"id":17,"method":"claim","params":{"purpose":"p","a":1,"a":2,"items":[]}}"#, "duplicate"),
            (String(repeating: "[", count: 40) + String(repeating: "]", count: 40), "nesting"),
            (#"{"id":18,"method":"presenter.add","params":{"presenter":1,"purpose":"p","path":"/a\u0000b"}}"#, "NUL"),
        ]
        for (frame, expected) in refusals {
            let reply = bad.call(frame)
            #expect(reply.contains(#""error""#) && reply.contains(expected), "\(frame) → \(reply)")
        }
        // Invalid UTF-8 inside a string.
        bad.sendBytes(Array(#"{"id":19,"method":"types.show","params":{"type":""#.utf8) + [0xFF, 0xFE] + Array("\"}}\n".utf8))
        #expect(bad.line()?.contains("UTF-8") == true)
        // A waiting claim cannot be released; a duplicate claim number is refused.
        bad.send(#"{"id":20,"method":"claim","params":{"purpose":"bad","items":[{"path":"\#(file)","access":"write","options":0}]}}"# + "\n")
        #expect(bad.call(#"{"id":21,"method":"release","params":{"claim":20}}"#).contains("not granted"))
        #expect(bad.call(#"{"id":20,"method":"claim","params":{"purpose":"bad","items":[{"path":"/y","access":"read","options":0}]}}"#).contains("already in use"))

        // The good client is untouched: its claim holds, it is served, and releasing lets the
        // bad client's write through.
        #expect(good.call(#"{"id":3,"method":"status"}"#).contains(#""state":"granted""#))
        good.send(#"{"method":"release","params":{"claim":2}}"# + "\n")
        #expect(bad.line()?.contains(#""id":20,"result""#) == true)

        // An oversized frame closes that connection only.
        let huge = try RawClient(socket: socket)
        _ = huge.call(#"{"id":1,"method":"hello"}"#)
        huge.sendBytes([UInt8](repeating: UInt8(ascii: "a"), count: (1 << 20) + 4096))
        #expect(huge.line()?.contains("larger than") == true)
        #expect(huge.line() == nil)

        // So does a stream of refused frames.
        let noisy = try RawClient(socket: socket)
        for _ in 0..<70 { noisy.send("garbage\n") }
        var replies = 0
        while noisy.line() != nil { replies += 1 }
        #expect(replies == 64)

        // The daemon still serves everyone.
        let later = try RawClient(socket: socket)
        #expect(later.call(#"{"id":1,"method":"hello"}"#).contains(#""protocol":1"#))
        #expect(good.call(#"{"id":4,"method":"status"}"#).contains(#""claims""#))
    }
}

import Folio
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Answers the daemon's requests. Pure: no I/O beyond what a method itself does, so it is tested
/// without a socket.
struct RequestHandler: Sendable {
    let types: TypeRegistry

    /// Decodes one frame and returns the reply frame.
    func reply(to frame: some Collection<UInt8>) -> WireReply {
        let request: WireRequest
        do {
            request = try JSONDecoder().decode(WireRequest.self, from: Data(frame))
        } catch {
            return WireReply(id: nil, result: nil, error: .badRequest("not a request frame: \(error)"))
        }
        do {
            return WireReply(id: request.id, result: try handle(request), error: nil)
        } catch let error as WireError {
            return WireReply(id: request.id, result: nil, error: error)
        } catch {
            return WireReply(id: request.id, result: nil, error: WireError(code: "failed", message: "\(error)"))
        }
    }

    private func handle(_ request: WireRequest) throws -> [String: WireValue] {
        let params = request.params ?? [:]
        switch request.method {
        case "hello":
            return [
                "protocol": .int(WireProtocol.version), "daemon": .string("folio"),
                "pid": .int(Int(getpid())), "uid": .int(Int(getuid())),
            ]
        case "types.show":
            guard let query = params["type"] else { throw WireError.badRequest("types.show needs params.type") }
            guard let type = types.type(matching: query) else {
                throw WireError(code: "unknown-type", message: "no type for \(query)")
            }
            return describe(type)
        case "types.of":
            guard let path = params["path"], path.hasPrefix("/") else {
                throw WireError.badRequest("types.of needs an absolute params.path")
            }
            let found = try UTType.contentType(ofItemAt: URL(fileURLWithPath: path))
            var result = describe(found.type)
            result["source"] = .string(found.source.rawValue)
            return result
        default:
            throw WireError(code: "unknown-method", message: "no method \(request.method)")
        }
    }

    private func describe(_ type: UTType) -> [String: WireValue] {
        var result: [String: WireValue] = [
            "identifier": .string(type.identifier), "declared": .bool(type.isDeclared),
            "dynamic": .bool(type.isDynamic),
        ]
        if let mime = type.preferredMIMEType { result["mimeType"] = .string(mime) }
        if let ext = type.preferredFilenameExtension { result["filenameExtension"] = .string(ext) }
        if let text = type.localizedDescription { result["description"] = .string(text) }
        result["supertypes"] = .strings(type.supertypesNearestFirst.map(\.identifier))
        return result
    }
}

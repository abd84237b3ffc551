import Folio
import Foundation

extension ClientSession {
    func typesShow(_ query: String) throws(CoordinationFailure) -> WireValue {
        guard let type = context.types.type(matching: query) else {
            throw CoordinationFailure(kind: .unknownType, message: "no type for \(query)")
        }
        return describe(type)
    }

    func typesOf(_ path: String) throws(CoordinationFailure) -> WireValue {
        let found: (type: UTType, source: UTType.DetectionSource)
        do {
            found = try UTType.contentType(ofItemAt: URL(fileURLWithPath: path))
        } catch {
            throw CoordinationFailure(kind: .failed, message: "\(error)")
        }
        guard case .object(var result) = describe(found.type) else { return describe(found.type) }
        result["source"] = .string(found.source.rawValue)
        return .object(result)
    }

    private func describe(_ type: UTType) -> WireValue {
        var result: [String: WireValue] = [
            "identifier": .string(type.identifier), "declared": .bool(type.isDeclared), "dynamic": .bool(type.isDynamic),
        ]
        if let mime = type.preferredMIMEType { result["mimeType"] = .string(mime) }
        if let ext = type.preferredFilenameExtension { result["filenameExtension"] = .string(ext) }
        if let text = type.localizedDescription { result["description"] = .string(text) }
        result["supertypes"] = .array(type.supertypesNearestFirst.map { .string($0.identifier) })
        return .object(result)
    }
}

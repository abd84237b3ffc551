import Folio
import Foundation

extension ClientSession {
    /// The type registry's requests: a lookup answers from memory; `types.of` opens the file and
    /// may read its head for magic.
    static let typeRoutes = [
        RequestRoute(TypesShow.self, on: .eventLoop) { session, request, _ throws(CoordinationFailure) in try session.typesShow(request) },
        RequestRoute(TypesOf.self, on: .slow) { session, request, _ throws(CoordinationFailure) in try session.typesOf(request) },
    ]

    func typesShow(_ request: TypesShow) throws(CoordinationFailure) -> TypeDescription {
        guard let type = context.types.type(matching: request.type) else {
            throw CoordinationFailure(kind: .unknownType, message: "no type for \(request.type)")
        }
        return describe(type)
    }

    func typesOf(_ request: TypesOf) throws(CoordinationFailure) -> TypeDescription {
        // Sniffing reads the file: an app learns the type only of what it may read.
        try context.access.require(app: app, path: request.path, write: false)
        let found: (type: UTType, source: UTType.DetectionSource)
        do {
            found = try UTType.contentType(ofItemAt: URL(fileURLWithPath: request.path))
        } catch {
            throw CoordinationFailure(kind: .failed, message: "\(error)")
        }
        var description = describe(found.type)
        description.source = found.source.rawValue
        return description
    }

    private func describe(_ type: UTType) -> TypeDescription {
        TypeDescription(
            identifier: type.identifier, declared: type.isDeclared, dynamic: type.isDynamic, mimeType: type.preferredMIMEType,
            filenameExtension: type.preferredFilenameExtension, description: type.localizedDescription,
            supertypes: type.supertypesNearestFirst.map(\.identifier))
    }
}

import Folio
import FolioSystem
import Foundation
import SystemPackage

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
        // Sniffing reads the file: an app learns the type only of what it may read, and what is
        // read is the item checked (through its descriptor), whatever the path names by now.
        let item = try context.access.resolve(app: app, path: request.path, write: false)
        guard item.exists else { throw CoordinationFailure(kind: .notFound, message: "no item at \(request.path)") }
        let found = UTType.contentType(named: URL(fileURLWithPath: item.path), status: item.status, reading: FilePath(item.descriptorPath))
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

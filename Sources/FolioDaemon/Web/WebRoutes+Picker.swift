import Folio
import Foundation
import Hummingbird
import UniformTypes

extension WebRoutes {
    /// The picker in the page: the requests it shows, and the user's answer. The choice is checked
    /// against the request (types, one or many, a folder to export or move into) and the scope,
    /// then carried out by the picker service, which answers the app.
    static func addPickerRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.get("picker") { _, _ in
            await answer {
                let open = state.changes.picker.open(in: state.context.access.picker)
                return WebJSON.response(wire: ["requests": .array(open)])
            }
        }

        api.post("picker/choose") { request, _ in
            await answer {
                let choice = try await body(PickerAnswer.self, of: request)
                let scope = await state.scope()
                try await state.blocking(.quick) {
                    for path in choice.paths ?? [] { _ = try scope.item(path) }
                    // What the picker resolved is what is checked against the scope, and used.
                    try state.context.access.picker.choose(choice.request, paths: choice.paths, from: state.changes.picker) { item throws(CoordinationFailure) in
                        guard scope.contains(item.path) else {
                            throw CoordinationFailure(kind: .denied, message: "\(item.path) is outside what this page may browse")
                        }
                    }
                }
                return WebJSON.response(["request": choice.request])
            }
        }
    }

    /// Whether the picker request `number` (open in the page) may be answered with `item`.
    static func pickable(_ item: IndexRecord, for request: PickerRequest) -> Bool {
        switch request.mode {
        case .export, .move:
            return item.kind == .directory
        case .open, .import:
            guard !request.types.isEmpty else { return true }
            let type = item.kind == .directory ? UTType.folder : UTType(item.type)
            guard let type else { return false }
            return request.types.compactMap { UTType($0) }.contains { type.conforms(to: $0) }
        }
    }
}

struct PickerAnswer: Decodable {
    var request: UInt64
    /// The chosen items (documents, or the one destination folder); nil to cancel.
    var paths: [String]?
}

/// What the document picker does with the documents (UIKit's `UIDocumentPickerMode`).
public enum DocumentPickerMode: UInt, Sendable {
    /// Copies the chosen documents to a temporary folder of the app, removed when the app exits.
    case `import` = 0
    /// Hands out the chosen originals, security-scoped, to edit in place.
    case open = 1
    /// Copies the app's documents to a folder the user chooses; the originals stay.
    case exportToService = 2
    /// Moves the app's documents to a folder the user chooses.
    case moveToService = 3

    var wireMode: PickerMode {
        switch self {
        case .import: .import
        case .open: .open
        case .exportToService: .export
        case .moveToService: .move
        }
    }
}

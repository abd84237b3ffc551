public import Foundation

/// The document picker's delegate (UIKit's `UIDocumentPickerDelegate`). Both methods are optional.
public protocol DocumentPickerDelegate: AnyObject {
    /// The user chose; `urls` are the documents to use (see `DocumentPickerMode`).
    func documentPicker(_ controller: DocumentPicker, didPickDocumentsAt urls: [URL])
    /// The user cancelled.
    func documentPickerWasCancelled(_ controller: DocumentPicker)
}

extension DocumentPickerDelegate {
    /// Does nothing.
    public func documentPicker(_ controller: DocumentPicker, didPickDocumentsAt urls: [URL]) {}
    /// Does nothing.
    public func documentPickerWasCancelled(_ controller: DocumentPicker) {}
}

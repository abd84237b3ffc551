public import Foundation

/// The document picker's delegate (UIKit's `UIDocumentPickerDelegate`). Every method is optional.
public protocol DocumentPickerDelegate: AnyObject {
    /// The user chose; `urls` are the documents to use (see `DocumentPickerMode`).
    func documentPicker(_ controller: DocumentPicker, didPickDocumentsAt urls: [URL])
    /// The user cancelled.
    func documentPickerWasCancelled(_ controller: DocumentPicker)
    /// The iOS 8 form of the choice, one document (deprecated by Apple since iOS 11): called,
    /// with the first document, when a delegate implements it and not
    /// `documentPicker(_:didPickDocumentsAt:)`.
    func documentPicker(_ controller: DocumentPicker, didPickDocumentAt url: URL)
}

extension DocumentPickerDelegate {
    /// Hands the first document to the iOS 8 method, as UIKit does for a delegate that
    /// implements only that one (which does nothing unless implemented).
    public func documentPicker(_ controller: DocumentPicker, didPickDocumentsAt urls: [URL]) {
        guard let url = urls.first else { return }
        documentPicker(controller, didPickDocumentAt: url)
    }
    /// Does nothing (Apple deprecated this method in iOS 11).
    public func documentPicker(_ controller: DocumentPicker, didPickDocumentAt url: URL) {}
    /// Does nothing.
    public func documentPickerWasCancelled(_ controller: DocumentPicker) {}
}

import Foundation

/// The rules for an item's name that every built-in provider applies before it writes anything.
package enum FileProviderFilename {
    /// The longest name, in UTF-8 bytes (Linux's NAME_MAX).
    package static let maximumBytes = 255

    /// Refuses a name no file system here can hold: empty, `.`, `..`, containing `/` or NUL, or longer
    /// than 255 bytes.
    ///
    /// - Throws: `CocoaError.fileWriteInvalidFileName`, naming the reason.
    package static func validate(_ name: String) throws {
        let reason: String? =
            if name.isEmpty { "the name is empty" }
            else if name == "." || name == ".." { "“\(name)” is not a name" }
            else if name.utf8.contains(UInt8(ascii: "/")) { "the name contains “/”" }
            else if name.utf8.contains(0) { "the name contains a NUL byte" }
            else if name.utf8.count > maximumBytes { "the name is longer than \(maximumBytes) bytes" }
            else { nil }
        if let reason {
            throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSLocalizedDescriptionKey: reason])
        }
    }
}

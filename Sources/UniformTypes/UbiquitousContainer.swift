/// One entry of an app's `NSUbiquitousContainers`: a folder of the user's synced Drive the app
/// keeps its documents in.
public struct UbiquitousContainer: Sendable, Hashable {
    /// The container identifier, `iCloud.<reverse DNS>`.
    public var identifier: String
    /// `NSUbiquitousContainerIsDocumentScopePublic`: the container's `Documents` folder is shown to
    /// the user in the browser and picker.
    public var isDocumentScopePublic: Bool
    /// `NSUbiquitousContainerName`: the folder's name as the user sees it.
    public var name: String?

    /// Creates a container entry.
    public init(identifier: String, isDocumentScopePublic: Bool = false, name: String? = nil) {
        self.identifier = identifier
        self.isDocumentScopePublic = isDocumentScopePublic
        self.name = name
    }

    /// Whether `identifier` is a container identifier: `iCloud.` then a reverse-DNS name.
    public static func isValidIdentifier(_ identifier: String) -> Bool {
        guard identifier.hasPrefix("iCloud."), identifier.utf8.count <= 255 else { return false }
        let rest = identifier.dropFirst("iCloud.".count)
        return rest.contains(".") && TypeIdentifier.isValid(String(rest))
    }
}

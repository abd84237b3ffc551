import UniformTypes

extension UTType {
    /// Whether a filename extension names a declared package type (a directory shown as one
    /// document, conforming to com.apple.package).
    static func isPackageExtension(_ ext: String) -> Bool {
        guard !ext.isEmpty, let type = UTType(tag: ext, tagClass: .filenameExtension, conformingTo: .package) else {
            return false
        }
        return !type.isDynamic && type.conforms(to: .package)
    }
}

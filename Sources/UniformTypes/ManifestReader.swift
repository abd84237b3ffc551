import Foundation

/// Turns a parsed property list (or JSON) object into an `AppManifest`, checking every value's type
/// and naming the key path of the first bad one.
struct ManifestReader {
    let source: String

    private func fail(_ path: String, _ reason: String, _ code: UniformTypeError.Code = .malformedManifest)
        -> UniformTypeError
    {
        UniformTypeError(code, "\(source): \(path): \(reason)")
    }

    private func kind(_ value: Any) -> String {
        switch value {
        case is String: "a string"
        case is Bool: "a Boolean"
        case is NSNumber: "a number"
        case is [Any]: "an array"
        case is [String: Any]: "a dictionary"
        case is Data: "data"
        case is Date: "a date"
        default: "\(type(of: value))"
        }
    }

    mutating func manifest(from root: Any) throws(UniformTypeError) -> AppManifest {
        guard let dict = root as? [String: Any] else {
            throw fail("top level", "expected a dictionary, found \(kind(root))")
        }
        guard let bundleIdentifier = try string(dict, "CFBundleIdentifier", path: "CFBundleIdentifier") else {
            throw fail("CFBundleIdentifier", "missing; every app manifest names its bundle identifier")
        }
        guard TypeIdentifier.isValid(bundleIdentifier), bundleIdentifier.contains(".") else {
            throw fail("CFBundleIdentifier", "\"\(bundleIdentifier)\" is not a reverse-DNS identifier", .invalidIdentifier)
        }
        var name = try string(dict, "CFBundleDisplayName", path: "CFBundleDisplayName")
        if name == nil { name = try string(dict, "CFBundleName", path: "CFBundleName") }
        let version = try string(dict, "CFBundleVersion", path: "CFBundleVersion")
        let exported = try declarations(dict, "UTExportedTypeDeclarations", origin: .exported, owner: bundleIdentifier)
        let imported = try declarations(dict, "UTImportedTypeDeclarations", origin: .imported, owner: bundleIdentifier)
        try checkCycles(exported + imported)
        var claims: [DocumentTypeClaim] = []
        if let list = try array(dict, "CFBundleDocumentTypes", path: "CFBundleDocumentTypes") {
            for (i, item) in list.enumerated() {
                claims.append(try claim(item, path: "CFBundleDocumentTypes[\(i)]"))
            }
        }
        let inPlace = try flag(dict, "LSSupportsOpeningDocumentsInPlace", path: "LSSupportsOpeningDocumentsInPlace")
        let executable = try string(dict, "CFBundleExecutable", path: "CFBundleExecutable")
        if let executable, executable.isEmpty || executable.utf8.count > 4096 || executable.contains("\0") {
            throw fail("CFBundleExecutable", "expected a command name or an absolute path")
        }
        let templates = try strings(dict, "FolioDocumentTemplates", path: "FolioDocumentTemplates")
        for (i, template) in templates.enumerated() where !template.hasPrefix("/") || template.utf8.count > 4096 || template.contains("\0") {
            throw fail("FolioDocumentTemplates[\(i)]", "expected an absolute path")
        }
        return AppManifest(
            bundleIdentifier: bundleIdentifier, name: name, version: version, exportedTypes: exported,
            importedTypes: imported, documentTypes: claims, supportsOpeningDocumentsInPlace: inPlace,
            ubiquitousContainers: try ubiquitousContainers(dict), executable: executable, documentTemplates: templates)
    }

    private func boolean(_ value: Any) -> Bool? {
        if let b = value as? Bool { return b }
        if let s = value as? String { return ["YES", "true", "1"].contains(s) ? true : (["NO", "false", "0"].contains(s) ? false : nil) }
        return nil
    }

    private func string(_ dict: [String: Any], _ key: String, path: String) throws(UniformTypeError) -> String? {
        guard let value = dict[key] else { return nil }
        guard let text = value as? String else { throw fail(path, "expected a string, found \(kind(value))") }
        return text
    }

    private func array(_ dict: [String: Any], _ key: String, path: String) throws(UniformTypeError) -> [Any]? {
        guard let value = dict[key] else { return nil }
        guard let list = value as? [Any] else { throw fail(path, "expected an array, found \(kind(value))") }
        guard list.count <= AppManifest.maximumEntries else {
            throw fail(path, "\(list.count) entries is more than the \(AppManifest.maximumEntries) allowed")
        }
        return list
    }

    /// A string or an array of strings (Apple normalises a lone string to a one-element array).
    private func strings(_ dict: [String: Any], _ key: String, path: String) throws(UniformTypeError) -> [String] {
        guard let value = dict[key] else { return [] }
        if let text = value as? String { return [text] }
        guard let list = value as? [Any] else {
            throw fail(path, "expected a string or an array of strings, found \(kind(value))")
        }
        guard list.count <= AppManifest.maximumEntries else { throw fail(path, "too many entries (\(list.count))") }
        var result: [String] = []
        for (i, item) in list.enumerated() {
            guard let text = item as? String else { throw fail("\(path)[\(i)]", "expected a string, found \(kind(item))") }
            result.append(text)
        }
        return result
    }

    private func declarations(
        _ dict: [String: Any], _ key: String, origin: TypeDeclaration.Origin, owner: String
    ) throws(UniformTypeError) -> [TypeDeclaration] {
        guard let list = try array(dict, key, path: key) else { return [] }
        var result: [TypeDeclaration] = []
        var seen = Set<String>()
        for (i, item) in list.enumerated() {
            let path = "\(key)[\(i)]"
            guard let entry = item as? [String: Any] else { throw fail(path, "expected a dictionary, found \(kind(item))") }
            guard let identifier = try string(entry, "UTTypeIdentifier", path: path + ".UTTypeIdentifier") else {
                throw fail(path, "missing UTTypeIdentifier")
            }
            try checkIdentifier(identifier, path: path + ".UTTypeIdentifier")
            if TypeIdentifier.isPublic(identifier) || TypeIdentifier.isDynamic(identifier) {
                throw fail(
                    path + ".UTTypeIdentifier",
                    "\"\(identifier)\" is reserved: public.* and dyn.* types are declared only by the system",
                    .reservedIdentifier)
            }
            guard seen.insert(TypeIdentifier.key(identifier)).inserted else {
                throw fail(path + ".UTTypeIdentifier", "\"\(identifier)\" is declared twice in \(key)")
            }
            let conformsTo = try strings(entry, "UTTypeConformsTo", path: path + ".UTTypeConformsTo")
            for (j, parent) in conformsTo.enumerated() {
                try checkIdentifier(parent, path: "\(path).UTTypeConformsTo[\(j)]")
            }
            var tags: [UTTagClass: [String]] = [:]
            if let specValue = entry["UTTypeTagSpecification"] {
                guard let spec = specValue as? [String: Any] else {
                    throw fail(path + ".UTTypeTagSpecification", "expected a dictionary, found \(kind(specValue))")
                }
                for tagClass in UTTagClass.standard {
                    let tagPath = "\(path).UTTypeTagSpecification.\(tagClass.rawValue)"
                    var values = try strings(spec, tagClass.rawValue, path: tagPath)
                    if tagClass == .filenameExtension { values = values.map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 } }
                    for value in values where !UTType.isValidTag(value, tagClass: tagClass) {
                        throw fail(tagPath, "\"\(value)\" is not a valid \(tagClass == .mimeType ? "MIME type" : "filename extension")")
                    }
                    if tagClass == .mimeType, let bad = values.first(where: { !SharedMimeInfo.isMimeType($0.lowercased()) }) {
                        throw fail(tagPath, "\"\(bad)\" is not a MIME type (media/subtype)")
                    }
                    if !values.isEmpty { tags[tagClass] = values }
                }
            }
            let description = try string(entry, "UTTypeDescription", path: path + ".UTTypeDescription")
            let reference = try string(entry, "UTTypeReferenceURL", path: path + ".UTTypeReferenceURL")
            var version: Int?
            if let value = entry["UTTypeVersion"] {
                if let number = value as? Int { version = number } else if let text = value as? String, let number = Int(text) {
                    version = number
                } else {
                    throw fail(path + ".UTTypeVersion", "expected a number, found \(kind(value))")
                }
            }
            result.append(
                TypeDeclaration(
                    identifier: identifier, conformsTo: conformsTo, tags: tags, description: description,
                    referenceURL: reference, version: version, origin: origin, owner: owner))
        }
        return result
    }

    private func checkIdentifier(_ identifier: String, path: String) throws(UniformTypeError) {
        guard TypeIdentifier.isValid(identifier) else {
            throw fail(path, "\"\(identifier.prefix(80))\" is not a valid type identifier", .invalidIdentifier)
        }
    }

    /// Refuses declarations whose conformance, within this manifest, leads back to themselves.
    private func checkCycles(_ declarations: [TypeDeclaration]) throws(UniformTypeError) {
        var parents: [String: [String]] = [:]
        for declaration in declarations {
            parents[TypeIdentifier.key(declaration.identifier), default: []] += declaration.conformsTo.map(TypeIdentifier.key)
        }
        var state: [String: Int] = [:]  // 1 on stack, 2 done
        func visit(_ node: String, _ trail: [String]) throws(UniformTypeError) {
            state[node] = 1
            for parent in parents[node] ?? [] {
                if state[parent] == 1 {
                    let cycle = (trail + [node, parent]).drop { $0 != parent }
                    throw fail("UTTypeConformsTo", "conformance cycle \(cycle.joined(separator: " → "))", .conformanceCycle)
                }
                if state[parent] == nil { try visit(parent, trail + [node]) }
            }
            state[node] = 2
        }
        for node in parents.keys.sorted() where state[node] == nil { try visit(node, []) }
    }

    private func claim(_ item: Any, path: String) throws(UniformTypeError) -> DocumentTypeClaim {
        guard let entry = item as? [String: Any] else { throw fail(path, "expected a dictionary, found \(kind(item))") }
        let name = try string(entry, "CFBundleTypeName", path: path + ".CFBundleTypeName")
        var role = DocumentRole.editor
        if let text = try string(entry, "CFBundleTypeRole", path: path + ".CFBundleTypeRole") {
            guard let value = DocumentRole(rawValue: text) else {
                throw fail(path + ".CFBundleTypeRole", "\"\(text)\" is not one of Editor, Viewer, Shell, None")
            }
            role = value
        }
        var rank = HandlerRank.default
        if let text = try string(entry, "LSHandlerRank", path: path + ".LSHandlerRank") {
            guard let value = HandlerRank(plistValue: text) else {
                throw fail(path + ".LSHandlerRank", "\"\(text)\" is not one of Owner, Default, Alternate, None")
            }
            rank = value
        }
        let contentTypes = try strings(entry, "LSItemContentTypes", path: path + ".LSItemContentTypes")
        for (i, identifier) in contentTypes.enumerated() {
            try checkIdentifier(identifier, path: "\(path).LSItemContentTypes[\(i)]")
        }
        let extensions = try strings(entry, "CFBundleTypeExtensions", path: path + ".CFBundleTypeExtensions")
        let mimeTypes = try strings(entry, "CFBundleTypeMIMETypes", path: path + ".CFBundleTypeMIMETypes")
        let isPackage = try flag(entry, "LSTypeIsPackage", path: path + ".LSTypeIsPackage")
        let isRelated = try flag(entry, "NSIsRelatedItemType", path: path + ".NSIsRelatedItemType")
        guard !contentTypes.isEmpty || !extensions.isEmpty || !mimeTypes.isEmpty else {
            throw fail(path, "claims no type: give LSItemContentTypes (or CFBundleTypeExtensions/CFBundleTypeMIMETypes)")
        }
        return DocumentTypeClaim(
            name: name, role: role, rank: rank, contentTypes: contentTypes, extensions: extensions,
            mimeTypes: mimeTypes, isPackage: isPackage, isRelatedItemType: isRelated)
    }

    private func flag(_ dict: [String: Any], _ key: String, path: String) throws(UniformTypeError) -> Bool {
        guard let value = dict[key] else { return false }
        guard let flag = boolean(value) else { throw fail(path, "expected a Boolean, found \(kind(value))") }
        return flag
    }

    /// `NSUbiquitousContainers`: container identifier → its settings.
    private func ubiquitousContainers(_ dict: [String: Any]) throws(UniformTypeError) -> [UbiquitousContainer] {
        let key = "NSUbiquitousContainers"
        guard let value = dict[key] else { return [] }
        guard let entries = value as? [String: Any] else { throw fail(key, "expected a dictionary, found \(kind(value))") }
        guard entries.count <= 64 else { throw fail(key, "\(entries.count) containers is more than the 64 allowed") }
        var result: [UbiquitousContainer] = []
        for identifier in entries.keys.sorted() {
            let path = "\(key).\(identifier)"
            guard UbiquitousContainer.isValidIdentifier(identifier) else {
                throw fail(path, "\"\(identifier.prefix(80))\" is not a container identifier (iCloud.<reverse DNS>)", .invalidIdentifier)
            }
            guard let settings = entries[identifier] as? [String: Any] else {
                throw fail(path, "expected a dictionary, found \(kind(entries[identifier]!))")
            }
            result.append(
                UbiquitousContainer(
                    identifier: identifier,
                    isDocumentScopePublic: try flag(settings, "NSUbiquitousContainerIsDocumentScopePublic", path: path + ".NSUbiquitousContainerIsDocumentScopePublic"),
                    name: try string(settings, "NSUbiquitousContainerName", path: path + ".NSUbiquitousContainerName")))
        }
        return result
    }
}

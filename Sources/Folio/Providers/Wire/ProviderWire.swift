package import Foundation
import UniformTypes

/// A reply or frame of the provider protocol that breaks its rules (docs/provider-protocol.md).
package struct ProviderWireError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// The provider protocol's values (docs/provider-protocol.md): items, versions, pages, anchors and
/// errors as JSON, each checked against the protocol's limits when decoded.
package enum ProviderWire {
    /// The protocol version this build speaks.
    package static let protocolVersion: Int64 = 1
    /// The longest line either side accepts.
    package static let maximumLine = 8 << 20
    /// The most items one reply may carry.
    package static let maximumItems = 10_000

    // MARK: Bytes

    /// Bytes as base64 text.
    package static func encode(_ data: Data) -> WireValue { .string(data.base64EncodedString()) }

    /// Base64 text as bytes, at most `limit` of them.
    package static func data(_ value: WireValue?, _ what: String, limit: Int) throws(ProviderWireError) -> Data {
        guard let text = value?.stringValue, let data = Data(base64Encoded: text) else { throw ProviderWireError("\(what) is not base64 text") }
        guard data.count <= limit else { throw ProviderWireError("\(what) is \(data.count) bytes, over \(limit)") }
        return data
    }

    package static func string(_ value: WireValue?, _ what: String, limit: Int = 4096) throws(ProviderWireError) -> String {
        guard let text = value?.stringValue else { throw ProviderWireError("\(what) is missing or not text") }
        guard text.utf8.count <= limit else { throw ProviderWireError("\(what) is over \(limit) bytes") }
        return text
    }

    package static func integer(_ value: WireValue?, _ what: String) throws(ProviderWireError) -> Int64 {
        guard let number = value?.intValue else { throw ProviderWireError("\(what) is missing or not an integer") }
        return number
    }

    package static func bits(_ value: WireValue?, _ what: String) throws(ProviderWireError) -> UInt {
        guard value != nil, value != .null else { return 0 }
        let number = try integer(value, what)
        guard number >= 0 else { throw ProviderWireError("\(what) is negative") }
        return UInt(number)
    }

    // MARK: Identifiers, versions, pages, anchors

    package static func identifier(_ value: WireValue?, _ what: String) throws(ProviderWireError) -> FileProviderItemIdentifier {
        let identifier = FileProviderItemIdentifier(try string(value, what, limit: FileProviderItemIdentifier.maximumLength))
        guard identifier.isWellFormed else { throw ProviderWireError("\(what) is empty or contains NUL") }
        return identifier
    }

    package static func encode(_ version: FileProviderItemVersion) -> WireValue {
        ["content": encode(version.contentVersion), "metadata": encode(version.metadataVersion)]
    }

    package static func version(_ value: WireValue?, _ what: String) throws(ProviderWireError) -> FileProviderItemVersion {
        guard value?.objectValue != nil else { throw ProviderWireError("\(what) is not an object") }
        return FileProviderItemVersion(
            contentVersion: try data(value?["content"], "\(what).content", limit: FileProviderItemVersion.maximumLength),
            metadataVersion: try data(value?["metadata"], "\(what).metadata", limit: FileProviderItemVersion.maximumLength))
    }

    package static func page(_ value: WireValue?) throws(ProviderWireError) -> FileProviderPage? {
        guard let value, value != .null else { return nil }
        return FileProviderPage(try data(value, "the page", limit: FileProviderPage.maximumLength))
    }

    package static func anchor(_ value: WireValue?) throws(ProviderWireError) -> FileProviderSyncAnchor {
        FileProviderSyncAnchor(try data(value, "the anchor", limit: FileProviderSyncAnchor.maximumLength))
    }

    // MARK: Items

    package static func encode(_ item: any FileProviderItem) -> WireValue {
        let record = FileProviderItemRecord(item)
        var members: [String: WireValue] = [
            "id": .string(record.itemIdentifier.rawValue), "parent": .string(record.parentItemIdentifier.rawValue),
            "filename": .string(record.filename), "type": .string(record.contentType.identifier),
            "capabilities": .int(Int64(record.capabilities.rawValue)), "version": encode(record.itemVersion),
            "flags": .int(Int64(record.fileSystemFlags.rawValue)),
        ]
        if let size = record.size { members["size"] = .int(size) }
        if let count = record.childCount { members["childCount"] = .int(Int64(count)) }
        if let date = record.creationDate { members["created"] = .double(date.timeIntervalSince1970) }
        if let date = record.contentModificationDate { members["modified"] = .double(date.timeIntervalSince1970) }
        if let target = record.symlinkTargetPath { members["symlinkTarget"] = .string(target) }
        if !record.extendedAttributes.isEmpty { members["xattrs"] = .object(record.extendedAttributes.mapValues { encode($0) }) }
        return .object(members)
    }

    /// An item as the other side sent it: identifiers well formed, a name a file system can hold
    /// (the root's may be empty), versions within 128 bytes, sizes not negative.
    package static func item(_ value: WireValue?, _ what: String = "the item") throws(ProviderWireError) -> FileProviderItemRecord {
        guard let value, value.objectValue != nil else { throw ProviderWireError("\(what) is not an object") }
        let identifier = try identifier(value["id"], "\(what).id")
        let filename = try string(value["filename"], "\(what).filename", limit: 1024)
        if identifier != .rootContainer {
            do { try FileProviderFilename.validate(filename) } catch {
                throw ProviderWireError("\(what).filename is not a valid name: \((error as NSError).localizedDescription)")
            }
        }
        let typeName = try string(value["type"], "\(what).type", limit: 255)
        guard let type = UTType(typeName) ?? UTType(identifier: typeName, allowUndeclared: true) else {
            throw ProviderWireError("\(what).type “\(typeName)” is not a type identifier")
        }
        var record = FileProviderItemRecord(
            itemIdentifier: identifier, parentItemIdentifier: try self.identifier(value["parent"], "\(what).parent"), filename: filename,
            contentType: type, capabilities: FileProviderItemCapabilities(rawValue: try bits(value["capabilities"], "\(what).capabilities")),
            itemVersion: try version(value["version"], "\(what).version"),
            fileSystemFlags: FileProviderFileSystemFlags(rawValue: try bits(value["flags"], "\(what).flags")))
        if let size = value["size"], size != .null {
            let number = try integer(size, "\(what).size")
            guard number >= 0 else { throw ProviderWireError("\(what).size is negative") }
            record.size = number
        }
        if let count = value["childCount"], count != .null {
            let number = try integer(count, "\(what).childCount")
            guard number >= 0, number <= Int64(Int32.max) else { throw ProviderWireError("\(what).childCount is out of range") }
            record.childCount = Int(number)
        }
        record.creationDate = try date(value["created"], "\(what).created")
        record.contentModificationDate = try date(value["modified"], "\(what).modified")
        if let target = value["symlinkTarget"], target != .null { record.symlinkTargetPath = try string(target, "\(what).symlinkTarget") }
        if let attributes = value["xattrs"], attributes != .null {
            guard let members = attributes.objectValue, members.count <= 64 else { throw ProviderWireError("\(what).xattrs is not an object of at most 64") }
            var total = 0
            for (name, encoded) in members {
                let bytes = try data(encoded, "\(what).xattrs.\(name)", limit: 32 << 10)
                total += bytes.count + name.utf8.count
                record.extendedAttributes[name] = bytes
            }
            guard total <= 32 << 10 else { throw ProviderWireError("\(what).xattrs total over 32 KiB") }
        }
        return record
    }

    package static func items(_ value: WireValue?, _ what: String) throws(ProviderWireError) -> [FileProviderItemRecord] {
        guard let array = value?.arrayValue else { throw ProviderWireError("\(what) is not an array") }
        guard array.count <= maximumItems else { throw ProviderWireError("\(what) has \(array.count) items, over \(maximumItems)") }
        var items: [FileProviderItemRecord] = []
        items.reserveCapacity(array.count)
        for (index, element) in array.enumerated() { items.append(try item(element, "\(what)[\(index)]")) }
        return items
    }

    private static func date(_ value: WireValue?, _ what: String) throws(ProviderWireError) -> Date? {
        guard let value, value != .null else { return nil }
        let seconds: Double
        switch value {
        case .int(let number): seconds = Double(number)
        case .double(let number): seconds = number
        default: throw ProviderWireError("\(what) is not a number of seconds")
        }
        guard seconds.isFinite, abs(seconds) < 1e11 else { throw ProviderWireError("\(what) is out of range") }
        return Date(timeIntervalSince1970: seconds)
    }

    // MARK: Errors

    /// An error as the protocol carries it: Apple's domain and code, and a message (and a
    /// collision's item identifier, from a ``FileProviderError`` or an `NSError` of its domain).
    package static func encode(_ error: any Error) -> WireValue {
        if let error = FileProviderError(bridging: error) {
            var members: [String: WireValue] = [
                "domain": .string(FileProviderError.errorDomain), "code": .int(Int64(error.code.rawValue)),
                "message": .string(error.message ?? "\(error.code)"),
            ]
            if let colliding = error.collidingItemIdentifier { members["collidingItem"] = .string(colliding.rawValue) }
            return .object(members)
        }
        if let error = error as? ProviderWireError {
            return ["domain": "folio.provider-protocol", "code": 1, "message": .string(error.description)]
        }
        if error is CancellationError {
            return ["domain": .string(NSCocoaErrorDomain), "code": .int(Int64(CocoaError.userCancelled.rawValue)), "message": "cancelled"]
        }
        let bridged = error as NSError
        return ["domain": .string(bridged.domain), "code": .int(Int64(bridged.code)), "message": .string(bridged.localizedDescription)]
    }

    /// The error a reply carries: a ``FileProviderError`` for its domain, a `CocoaError` for Cocoa's,
    /// anything else as an `NSError` (retried by the system).
    package static func error(_ value: WireValue?, context: String) -> any Error {
        let domain = value?["domain"]?.stringValue ?? "unknown"
        let code = value?["code"]?.intValue ?? 0
        let message = String((value?["message"]?.stringValue ?? "no message").prefix(1000))
        let number = Int(code) == FileProviderError.Code.legacyBaseVersionMismatch ? FileProviderError.Code.localVersionConflictingWithServer.rawValue : Int(code)
        if domain == FileProviderError.errorDomain, let known = FileProviderError.Code(rawValue: number) {
            var error = FileProviderError(known, message: message)
            if let colliding = value?["collidingItem"]?.stringValue { error.collidingItemIdentifier = FileProviderItemIdentifier(colliding) }
            return error
        }
        if domain == NSCocoaErrorDomain {
            return CocoaError(CocoaError.Code(rawValue: Int(code)), userInfo: [NSLocalizedDescriptionKey: message])
        }
        return NSError(domain: domain, code: Int(code), userInfo: [NSLocalizedDescriptionKey: "\(context): \(message)"])
    }
}

public import Foundation

/// An error of a file provider, in `NSFileProviderErrorDomain` with Apple's codes (`NSFileProviderError`).
///
/// Each code has a system reaction (``reaction``): a collision bounces one item and retries, a missing
/// item is deleted only after the system confirmed it is gone, an unreachable server or bad
/// credentials back off until the domain recovers, and any code not listed for a call is retried.
public struct FileProviderError: Error, CustomNSError, Hashable, Sendable, CustomStringConvertible {
    /// Apple's error codes.
    public enum Code: Int, Sendable, Codable, CaseIterable {
        /// The credentials were refused. The system backs off until the error is resolved.
        case notAuthenticated = -1000
        /// Another item in the same folder has the name. The system renames one ("bounces") and retries.
        case filenameCollision = -1001
        /// The sync anchor or page is too old: the system drops what it knows and enumerates again.
        case syncAnchorExpired = -1002
        /// The account is over quota. The system backs off.
        case insufficientQuota = -1003
        /// The server cannot be reached. The system backs off and retries.
        case serverUnreachable = -1004
        /// The item (or its parent) does not exist.
        case noSuchItem = -1005
        /// The provider refuses the deletion; the system re-creates the item.
        case deletionRejected = -1006
        /// A folder with children was deleted without `.recursive`.
        case directoryNotEmpty = -1007
        /// No provider is installed for the request.
        case providerNotFound = -2001
        /// The provider's app is translocated.
        case providerTranslocated = -2002
        /// An older version of the provider is still running.
        case olderExtensionVersionRunning = -2003
        /// A newer version of the provider was found.
        case newerExtensionVersionFound = -2004
        /// The item cannot be synchronized; from create or modify, it is not retried until something changes.
        case cannotSynchronize = -2005
        /// A folder cannot be evicted because of its children.
        case nonEvictableChildren = -2006
        /// The item has changes that are not uploaded, so it cannot be evicted.
        case unsyncedEdits = -2007
        /// The item cannot be evicted.
        case nonEvictable = -2008
        /// The requested version is no longer available.
        case versionNoLongerAvailable = -2009
        /// The item is kept locally and never synced.
        case excludedFromSync = -2010
        /// The domain is disabled.
        case domainDisabled = -2011
        /// The domain is temporarily unavailable.
        case providerDomainTemporarilyUnavailable = -2012
        /// The domain does not exist.
        case providerDomainNotFound = -2013
        /// The provider's executable was not found.
        case applicationExtensionNotFound = -2014
        /// The item changed on the provider since the base version the change was made against;
        /// nothing was written, and the system keeps both sides. Apple's providers return it when
        /// the system passes `.failOnConflict`; Folio's always check the base version (see
        /// ``FileProvider/modifyItem(_:baseVersion:changedFields:contents:options:request:)``).
        case localVersionConflictingWithServer = -2015

        /// Apple's other name for ``syncAnchorExpired``.
        public static let pageExpired = Code.syncAnchorExpired
        /// Folio's earlier name for ``localVersionConflictingWithServer`` (code -3001 before Apple
        /// had one; provider programs may still send -3001, read as -2015).
        @available(*, deprecated, renamed: "localVersionConflictingWithServer")
        public static let baseVersionMismatch = Code.localVersionConflictingWithServer
        /// The code Folio used before Apple defined -2015, still accepted from provider programs.
        package static let legacyBaseVersionMismatch = -3001
    }

    /// How the system reacts to an error.
    package enum Reaction: Sendable, Equatable {
        /// Rename one of the colliding items and try again.
        case bounce
        /// Enumerate from scratch.
        case enumerateAgain
        /// Stop the domain's work until it is resumed or a back-off delay passes.
        case backOff
        /// Confirm with `item(for:)` that the item is gone before deleting it locally.
        case confirmAbsence
        /// Put the item back locally.
        case recreate
        /// Keep both sides of a conflict.
        case keepBoth
        /// Keep the item locally and stop syncing it.
        case exclude
        /// Show the error on the item and do not retry until the item changes.
        case stop
        /// Retry later.
        case retry
    }

    /// The error's code.
    public var code: Code
    /// The identifier of the item that collided, for ``Code/filenameCollision``.
    public var collidingItemIdentifier: FileProviderItemIdentifier?
    /// The item that collided, when the provider gave it (`collision(with:)` of an item,
    /// Apple's `fileProviderErrorForCollision(with:)`).
    public var collidingItem: FileProviderItemRecord?
    /// The identifier of the item that does not exist, for ``Code/noSuchItem``.
    public var nonExistentItemIdentifier: FileProviderItemIdentifier?
    /// What went wrong, in words.
    public var message: String?

    /// An error with `code`.
    public init(_ code: Code, message: String? = nil) {
        self.code = code
        self.message = message
    }

    /// A collision with `identifier` (Apple's `fileProviderErrorForCollision(with:)`).
    public static func collision(with identifier: FileProviderItemIdentifier, message: String? = nil) -> FileProviderError {
        var error = FileProviderError(.filenameCollision, message: message)
        error.collidingItemIdentifier = identifier
        return error
    }

    /// A collision with `existingItem`, the item already there (Apple's
    /// `fileProviderErrorForCollision(with:)`): its identifier, and the item in the user info.
    public static func collision(with existingItem: any FileProviderItem, message: String? = nil) -> FileProviderError {
        var error = collision(with: existingItem.itemIdentifier, message: message)
        error.collidingItem = FileProviderItemRecord(existingItem)
        return error
    }

    /// A missing item (Apple's `fileProviderErrorForNonExistentItem(withIdentifier:)`).
    public static func noSuchItem(_ identifier: FileProviderItemIdentifier, message: String? = nil) -> FileProviderError {
        var error = FileProviderError(.noSuchItem, message: message ?? "no item \(identifier)")
        error.nonExistentItemIdentifier = identifier
        return error
    }

    /// The error `error` is, read as a provider error: itself, or an `NSError` of
    /// `NSFileProviderErrorDomain` with a known code (Apple's `fileProviderErrorForCollision(with:)`
    /// and friends, or one built by hand), with the items its user info names. Nil for any other
    /// error.
    public init?(bridging error: any Error) {
        if let error = error as? FileProviderError {
            self = error
            return
        }
        let bridged = error as NSError
        let number = bridged.code == Code.legacyBaseVersionMismatch ? Code.localVersionConflictingWithServer.rawValue : bridged.code
        guard bridged.domain == Self.errorDomain, let code = Code(rawValue: number) else { return nil }
        self.init(code, message: bridged.userInfo[NSLocalizedDescriptionKey] as? String)
        for key in [Self.itemKey, Self.collidingItemKey] {
            switch bridged.userInfo[key] {
            case let item as any FileProviderItem:
                collidingItem = FileProviderItemRecord(item)
                collidingItemIdentifier = item.itemIdentifier
            case let identifier as String:
                collidingItemIdentifier = FileProviderItemIdentifier(identifier)
            default: continue
            }
            break
        }
        if let identifier = bridged.userInfo[Self.nonExistentItemIdentifierKey] as? String {
            nonExistentItemIdentifier = FileProviderItemIdentifier(identifier)
        }
    }

    static let itemKey = "NSFileProviderErrorItem"
    static let collidingItemKey = "NSFileProviderErrorCollidingItem"
    static let nonExistentItemIdentifierKey = "NSFileProviderErrorNonExistentItemIdentifier"

    /// `NSFileProviderErrorDomain`.
    public static var errorDomain: String { "NSFileProviderErrorDomain" }
    /// The code's number.
    public var errorCode: Int { code.rawValue }
    /// The message and the items involved: the colliding item under `NSFileProviderErrorItemKey`
    /// and `NSFileProviderErrorCollidingItemKey` (its identifier there when only that is known),
    /// the missing item's identifier under `NSFileProviderErrorNonExistentItemIdentifierKey`.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [:]
        if let message { info[NSLocalizedDescriptionKey] = message }
        if let collidingItem {
            info[Self.itemKey] = collidingItem
            info[Self.collidingItemKey] = collidingItem
        } else if let collidingItemIdentifier {
            info[Self.collidingItemKey] = collidingItemIdentifier.rawValue
        }
        if let nonExistentItemIdentifier { info[Self.nonExistentItemIdentifierKey] = nonExistentItemIdentifier.rawValue }
        return info
    }

    /// The code's name, with the message.
    public var description: String {
        "\(code) (\(code.rawValue))" + (message.map { ": \($0)" } ?? "")
    }

    /// The system's reaction to this error from a call to the provider.
    package var reaction: Reaction {
        switch code {
        case .filenameCollision: .bounce
        case .syncAnchorExpired: .enumerateAgain
        case .notAuthenticated, .serverUnreachable, .insufficientQuota, .domainDisabled, .providerDomainTemporarilyUnavailable: .backOff
        case .noSuchItem: .confirmAbsence
        case .deletionRejected, .directoryNotEmpty: .recreate
        case .localVersionConflictingWithServer: .keepBoth
        case .excludedFromSync: .exclude
        case .cannotSynchronize, .providerNotFound, .providerTranslocated, .olderExtensionVersionRunning, .newerExtensionVersionFound,
            .providerDomainNotFound, .applicationExtensionNotFound, .nonEvictable, .nonEvictableChildren, .unsyncedEdits:
            .stop
        case .versionNoLongerAvailable: .retry
        }
    }
}

extension FileProviderError.Code: CustomStringConvertible {
    /// Apple's name of the code.
    public var description: String {
        switch self {
        case .notAuthenticated: "notAuthenticated"
        case .filenameCollision: "filenameCollision"
        case .syncAnchorExpired: "syncAnchorExpired"
        case .insufficientQuota: "insufficientQuota"
        case .serverUnreachable: "serverUnreachable"
        case .noSuchItem: "noSuchItem"
        case .deletionRejected: "deletionRejected"
        case .directoryNotEmpty: "directoryNotEmpty"
        case .providerNotFound: "providerNotFound"
        case .providerTranslocated: "providerTranslocated"
        case .olderExtensionVersionRunning: "olderExtensionVersionRunning"
        case .newerExtensionVersionFound: "newerExtensionVersionFound"
        case .cannotSynchronize: "cannotSynchronize"
        case .nonEvictableChildren: "nonEvictableChildren"
        case .unsyncedEdits: "unsyncedEdits"
        case .nonEvictable: "nonEvictable"
        case .versionNoLongerAvailable: "versionNoLongerAvailable"
        case .excludedFromSync: "excludedFromSync"
        case .domainDisabled: "domainDisabled"
        case .providerDomainTemporarilyUnavailable: "providerDomainTemporarilyUnavailable"
        case .providerDomainNotFound: "providerDomainNotFound"
        case .applicationExtensionNotFound: "applicationExtensionNotFound"
        case .localVersionConflictingWithServer: "localVersionConflictingWithServer"
        }
    }
}

#if !canImport(Darwin)
/// The domain of file provider errors (``FileProviderError``).
public let NSFileProviderErrorDomain = "NSFileProviderErrorDomain"
/// User-info key of a provider error: the item involved (the colliding item of a collision).
public let NSFileProviderErrorItemKey = "NSFileProviderErrorItem"
/// User-info key of a collision: the item already there (Apple deprecated it for
/// `NSFileProviderErrorItemKey`; Folio sets both).
public let NSFileProviderErrorCollidingItemKey = "NSFileProviderErrorCollidingItem"
/// User-info key of a missing item's error: the identifier asked for.
public let NSFileProviderErrorNonExistentItemIdentifierKey = "NSFileProviderErrorNonExistentItemIdentifier"

extension NSError {
    /// A collision with `existingItem`, the item that has the name (Apple's): code
    /// `filenameCollision`, the item under `NSFileProviderErrorItemKey`. The system bounces one
    /// of the two and tries again.
    public class func fileProviderErrorForCollision(with existingItem: any FileProviderItem) -> NSError {
        FileProviderError.collision(with: existingItem).bridged
    }

    /// The item `itemIdentifier` does not exist (Apple's): code `noSuchItem`, the identifier under
    /// `NSFileProviderErrorNonExistentItemIdentifierKey`.
    public class func fileProviderErrorForNonExistentItem(withIdentifier itemIdentifier: FileProviderItemIdentifier) -> NSError {
        FileProviderError.noSuchItem(itemIdentifier).bridged
    }
}
#endif

extension FileProviderError {
    /// As an `NSError`, with the domain, code and user info.
    var bridged: NSError { NSError(domain: Self.errorDomain, code: errorCode, userInfo: errorUserInfo) }
}

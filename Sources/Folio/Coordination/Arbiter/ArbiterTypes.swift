/// What a claim does to one item.
package enum ClaimAccess: Sendable, Equatable {
    case read(FileCoordinator.ReadingOptions)
    case write(FileCoordinator.WritingOptions)

    package var isWrite: Bool {
        if case .write = self { return true }
        return false
    }

    /// A write that makes a directory exclusive with its contents (deleting, moving, replacing).
    var isStructural: Bool {
        if case .write(let options) = self { return !options.isDisjoint(with: .structural) }
        return false
    }

    var writingOptions: FileCoordinator.WritingOptions {
        if case .write(let options) = self { return options }
        return []
    }
}

/// One item of a claim.
package struct ClaimItem: Sendable, Equatable {
    /// The normalized absolute path.
    package var path: String
    /// Read or write, with options.
    package var access: ClaimAccess

    package init(path: String, access: ClaimAccess) {
        self.path = path
        self.access = access
    }
}

/// A request for a claim on one or more items, granted atomically (so two processes coordinating
/// the same pair in opposite orders cannot deadlock).
package struct ClaimRequest: Sendable {
    /// The claim's number, unique within its client.
    package var claim: UInt64
    /// Claims with equal purposes never block each other.
    package var purpose: String
    /// The presenter the requesting coordinator was created with: it gets no messages for this claim.
    package var presenter: UInt64?
    /// The items, in any order.
    package var items: [ClaimItem]
    /// For `prepare(forReadingItemsAt:…)`: presenters of items inside the named folders get the
    /// same messages as the folders' own presenters.
    package var includesContents: Bool

    package init(claim: UInt64, purpose: String, presenter: UInt64?, items: [ClaimItem], includesContents: Bool = false) {
        self.claim = claim
        self.purpose = purpose
        self.presenter = presenter
        self.items = items
        self.includesContents = includesContents
    }
}

/// What happened to a version of an item (`presentedItemDidGain`, `…DidLose`, `…DidResolveConflict`).
package enum VersionChange: String, Sendable, Equatable, CaseIterable {
    case gained, lost, resolved
}

/// A message for a presenter. The first five need an answer before the claim that caused them can
/// proceed; the rest are notifications.
package enum PresenterMessage: Sendable, Equatable {
    case savePresentedItemChanges
    case relinquishToReader
    case relinquishToWriter
    case accommodateDeletion
    case accommodateSubitemDeletion(path: String)
    /// The item's local copy is about to be evicted (`accommodatePresentedItemEviction`).
    case accommodateEviction
    /// Run the reacquirer handed back with the relinquishment answered under `token`.
    case reacquire(token: UInt64)
    case didChange
    case didMove(to: String)
    case subitemDidAppear(path: String)
    case subitemDidChange(path: String)
    case subitemDidMove(from: String, to: String)
    case didChangeUbiquityAttributes([String])
    /// A version of the item (or, with `subitem`, of an item inside the presented folder) was
    /// added, removed or resolved: `record` is the version as the store keeps (or kept) it.
    case versionChanged(VersionChange, record: VersionRecord, subitem: String?)

    /// Whether the presenter must answer.
    var needsAnswer: Bool {
        switch self {
        case .savePresentedItemChanges, .relinquishToReader, .relinquishToWriter, .accommodateDeletion,
            .accommodateSubitemDeletion, .accommodateEviction:
            return true
        default: return false
        }
    }

    var isRelinquish: Bool { self == .relinquishToReader || self == .relinquishToWriter }

    /// The order in which one presenter receives the messages of one claim. A deletion is
    /// accommodated before the presenter relinquishes to the deleting writer: a document closes
    /// in `accommodatePresentedItemDeletion` (UIDocument's and NSDocument's way, and Apple's
    /// samples'), which it could not do while relinquishing holds its file-access queue until the
    /// writer is done; once closed, it is asked nothing more.
    var rank: Int {
        switch self {
        case .savePresentedItemChanges: 0
        case .relinquishToReader: 1
        case .accommodateDeletion, .accommodateEviction: 2
        case .accommodateSubitemDeletion: 3
        case .relinquishToWriter: 4
        default: 5
        }
    }
}

/// Why a claim failed.
package struct CoordinationFailure: Error, Sendable, Equatable {
    /// The failure's kind, as named on the wire.
    package enum Kind: String, Sendable {
        case cancelled
        case presenterError = "presenter-error"
        case presenterTimeout = "presenter-timeout"
        case invalid = "bad-request"
        case unknownMethod = "unknown-method"
        case unknownType = "unknown-type"
        case failed
        case connectionLost = "connection-lost"
        /// The app may not reach the item (no grant, a revoked grant, a read-only grant for a write).
        case denied
        /// The item does not exist (any more).
        case notFound = "not-found"
        /// Data that is damaged, edited or forged (bookmarks).
        case corrupt
        /// The user cancelled (the picker).
        case userCancelled = "user-cancelled"
        /// The daemon did not answer within the deadline (client side only).
        case timedOut = "timed-out"
    }

    package var kind: Kind
    package var message: String
    /// For `presenterError`: the presenter's error, as domain and code.
    package var domain: String?
    package var code: Int?

    package init(kind: Kind, message: String, domain: String? = nil, code: Int? = nil) {
        self.kind = kind
        self.message = message
        self.domain = domain
        self.code = code
    }
}

/// An answer from a presenter to a message that needs one.
package struct PresenterAnswer: Sendable {
    package var token: UInt64
    /// The error the presenter passed (save or accommodate), or nil.
    package var error: CoordinationFailure?
    /// For a relinquishment: whether the presenter handed back a reacquirer.
    package var hasReacquirer: Bool

    package init(token: UInt64, error: CoordinationFailure? = nil, hasReacquirer: Bool = false) {
        self.token = token
        self.error = error
        self.hasReacquirer = hasReacquirer
    }
}

/// What the arbiter tells one client.
package enum ArbiterOutput: Sendable, Equatable {
    case granted(claim: UInt64, paths: [String])
    case failed(claim: UInt64, failure: CoordinationFailure)
    /// A message for one of the client's presenters; `token` is set when it needs an answer.
    case presenter(UInt64, PresenterMessage, token: UInt64?)
}

/// A client of the arbiter: the in-process engine, or one connection to the daemon. Outputs are
/// delivered outside the arbiter's lock, in the order the arbiter produced them for one call.
package protocol ArbiterClient: AnyObject, Sendable {
    func receive(_ outputs: [ArbiterOutput])
}

/// What a coordinated write did, as the arbiter reports it to the index.
package enum CoordinatedChange: Sendable, Equatable {
    /// The writer wrote, created or deleted the item at the path.
    case wrote(String)
    /// The writer moved an item (`item(at:didMoveTo:)`).
    case moved(from: String, to: String)
}

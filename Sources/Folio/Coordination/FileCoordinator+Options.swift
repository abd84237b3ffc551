extension FileCoordinator {
    /// How a coordinated read behaves (Apple's `NSFileCoordinator.ReadingOptions`, same bits).
    public struct ReadingOptions: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Do not ask presenters to save before the read (by default they are asked).
        public static let withoutChanges = ReadingOptions(rawValue: 1 << 0)
        /// When the URL is a symbolic link, coordinate and pass the link's target instead.
        public static let resolvesSymbolicLink = ReadingOptions(rawValue: 1 << 1)
        /// Grant at once, without waiting for downloads, conflict versions or thumbnails; reading the
        /// contents inside may give unexpected results.
        public static let immediatelyAvailableMetadataOnly = ReadingOptions(rawValue: 1 << 2)
        /// Make a snapshot (a zip file for a directory), release the claim once it exists and pass the
        /// snapshot to the accessor; the snapshot is removed when the accessor returns.
        public static let forUploading = ReadingOptions(rawValue: 1 << 3)
    }

    /// What a coordinated write does (Apple's `NSFileCoordinator.WritingOptions`, same bits). Give one
    /// option at a time, or none for a plain update.
    public struct WritingOptions: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// The write deletes the item: presenters are asked to accommodate the deletion, and on a
        /// directory the write waits for, and blocks, coordinations of its contents.
        public static let forDeleting = WritingOptions(rawValue: 1 << 0)
        /// The write moves or renames the item; on a directory it waits for running coordinations of
        /// its contents and holds back queued ones until the move ends.
        public static let forMoving = WritingOptions(rawValue: 1 << 1)
        /// Presenters are asked to save before the write.
        public static let forMerging = WritingOptions(rawValue: 1 << 2)
        /// Like `forDeleting`, but an item moved while the writer waits counts as a different item:
        /// use it for the destination of a move.
        public static let forReplacing = WritingOptions(rawValue: 1 << 3)
        /// The write changes only metadata that does not depend on the contents (tags, not dates).
        public static let contentIndependentMetadataOnly = WritingOptions(rawValue: 1 << 4)

        /// The options that make a write on a directory exclusive with its contents.
        static let structural: WritingOptions = [.forDeleting, .forMoving, .forReplacing]
        /// The options that make a write a deletion for presenters.
        static let deleting: WritingOptions = [.forDeleting, .forReplacing]
        /// The daemon's own: the write evicts the item's local copy (the Drive keeps it on the
        /// server). Its presenters are asked to accommodate the eviction instead of relinquishing;
        /// never sent by an app (the wire takes only Apple's bits).
        package static let forEvicting = WritingOptions(rawValue: 1 << 20)
    }
}

/// An error from the type system: a refused manifest or declaration, or an unreadable file.
///
/// `code` says what went wrong in a way code can test; `message` says it for people, naming the
/// offending key or identifier.
public struct UniformTypeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case malformedManifest, manifestTooLarge, invalidIdentifier, reservedIdentifier
            case conformanceCycle, unreadableFile, unknownApp, unknownType
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The manifest is not a property list or JSON dictionary of the expected shape.
        public static let malformedManifest = Code(.malformedManifest)
        /// The manifest is larger than Folio accepts.
        public static let manifestTooLarge = Code(.manifestTooLarge)
        /// A type or bundle identifier is not a valid reverse-DNS identifier.
        public static let invalidIdentifier = Code(.invalidIdentifier)
        /// An app declared a `public.*` or `dyn.*` type, which only the system may declare.
        public static let reservedIdentifier = Code(.reservedIdentifier)
        /// Declarations would make a type conform to itself through others.
        public static let conformanceCycle = Code(.conformanceCycle)
        /// A file could not be read.
        public static let unreadableFile = Code(.unreadableFile)
        /// No registered app has the given identifier.
        public static let unknownApp = Code(.unknownApp)
        /// No type has the given identifier, extension or MIME type.
        public static let unknownType = Code(.unknownType)

        public var description: String { "\(value)" }
    }

    /// The kind of failure.
    public var code: Code
    /// What failed, for people.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

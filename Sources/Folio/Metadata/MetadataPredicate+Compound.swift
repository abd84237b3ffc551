/// `NSCompoundPredicate`'s name: Folio's compound predicates are ``MetadataPredicate``s, so code
/// that builds them as Apple's does (`CompoundPredicate(andPredicateWithSubpredicates: […])`)
/// gets one a query takes.
public typealias CompoundPredicate = MetadataPredicate

extension MetadataPredicate {
    /// How a compound predicate joins its subpredicates (`NSCompoundPredicate.LogicalType`, with
    /// Apple's raw values).
    public enum LogicalType: UInt, Sendable {
        /// Holds when its one subpredicate does not.
        case not = 0
        /// Holds when every subpredicate holds (an empty list: always).
        case and = 1
        /// Holds when one subpredicate holds (an empty list: never).
        case or = 2
    }

    /// A compound predicate, as `NSCompoundPredicate(type:subpredicates:)`: `.not` takes exactly
    /// one subpredicate (more or fewer stops the program, as Apple's raises).
    public init(type: LogicalType, subpredicates: [MetadataPredicate]) {
        switch type {
        case .and where subpredicates.isEmpty: self.init(node: .constant(true))
        case .or where subpredicates.isEmpty: self.init(node: .constant(false))
        case .and: self.init(node: .and(subpredicates.map(\.node)))
        case .or: self.init(node: .or(subpredicates.map(\.node)))
        case .not:
            precondition(subpredicates.count == 1, "CompoundPredicate(type: .not, subpredicates:) takes exactly one subpredicate, not \(subpredicates.count)")
            self.init(node: .not(subpredicates[0].node))
        }
    }

    /// Holds when every one of `subpredicates` holds (`NSCompoundPredicate(andPredicateWithSubpredicates:)`).
    public init(andPredicateWithSubpredicates subpredicates: [MetadataPredicate]) {
        self.init(type: .and, subpredicates: subpredicates)
    }

    /// Holds when one of `subpredicates` holds (`NSCompoundPredicate(orPredicateWithSubpredicates:)`).
    public init(orPredicateWithSubpredicates subpredicates: [MetadataPredicate]) {
        self.init(type: .or, subpredicates: subpredicates)
    }

    /// Holds when `predicate` does not (`NSCompoundPredicate(notPredicateWithSubpredicate:)`).
    public init(notPredicateWithSubpredicate predicate: MetadataPredicate) {
        self.init(type: .not, subpredicates: [predicate])
    }
}

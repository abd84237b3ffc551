import Folio
import Foundation

extension ProviderValidation {
    /// Concurrent edits and creations.
    static let concurrencyCases: [Case] = [
        Case(name: "concurrent edits from one base: one wins, the other is refused") { context in
            let file = try await context.makeFile("contended.txt", Data("base".utf8))
            let contents = [Data("edit from device one".utf8), Data("edit from device two, longer".utf8)]
            let outcomes = await withTaskGroup(of: Result<FileProviderItemRecord, any Error>.self) { group in
                for data in contents {
                    group.addTask { await Result(catching: { try await context.write(data, to: file, base: file.itemVersion) }) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let succeeded = outcomes.filter { if case .success = $0 { true } else { false } }.count
            try expect(succeeded >= 1, "neither edit was stored: \(outcomes)")
            try expect(succeeded == 1, "both edits from one base were stored: one was lost")
            for outcome in outcomes {
                if case .failure(let error) = outcome {
                    try expect((error as? FileProviderError)?.code == .localVersionConflictingWithServer, "the losing edit failed with \(error), not localVersionConflictingWithServer")
                }
            }
            let final = try await context.content(of: file.itemIdentifier)
            try expect(contents.contains(final), "the content is neither edit")
        },
        Case(name: "concurrent creations of one name: one file, one collision") { context in
            let outcomes = await withTaskGroup(of: Result<FileProviderItemRecord, any Error>.self) { group in
                for index in 0..<2 {
                    group.addTask { await Result(catching: { try await context.makeFile("raced.txt", Data("creator \(index)".utf8)) }) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let succeeded = outcomes.filter { if case .success = $0 { true } else { false } }.count
            try expect(succeeded == 1, "\(succeeded) of two creations of one name succeeded")
            let names = try await context.names().filter { $0 == "raced.txt" }
            try expect(names.count == 1, "the folder lists “raced.txt” \(names.count) times")
        },
    ]
}

extension Result where Failure == any Error {
    /// The result of an async throwing body.
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}

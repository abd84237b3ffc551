import Folio
import Foundation

extension ProviderValidation {
    /// Unicode, illegal and case-differing names.
    static let nameCases: [Case] = [
        Case(name: "unicode and punctuation names round trip") { context in
            let names = [
                "Ünïcödé ✓.txt", "emoji 📄.txt", "日本語のファイル.txt", "#%?&+;= ,'.txt", " leading space.txt", "trailing dot.", "ends with space ",
                "tab\there.txt", "per%20cent.txt", "back\\slash.txt", "x" + String(repeating: "é", count: 120),
            ]
            // A server may refuse names with control characters or a backslash (lighttpd answers 400):
            // then the provider must say so for that item (`excludedFromSync`), and nothing is listed.
            var refused: Set<String> = []
            for (index, name) in names.enumerated() {
                let file: FileProviderItemRecord
                do {
                    file = try await context.makeFile(name, Data("name \(index)".utf8))
                } catch let error as FileProviderError where error.code == .excludedFromSync && name.contains(where: { $0 == "\t" || $0 == "\\" }) {
                    refused.insert(name)
                    continue
                }
                try expect(file.filename == name, "“\(name)” came back as “\(file.filename)”")
                try expect(try await context.content(of: file.itemIdentifier) == Data("name \(index)".utf8), "“\(name)” lost its content")
            }
            let listed = Set(try await context.names())
            for name in names where !refused.contains(name) { try expect(listed.contains(name), "the listing lacks “\(name)”") }
            for name in refused { try expect(!listed.contains(name), "“\(name)” was refused yet listed") }
        },
        Case(name: "NFC and NFD spellings stay as written") { context in
            let composed = "caf\u{e9}.txt", decomposed = "cafe\u{301}.txt"
            let first = try await context.makeFile(composed, Data("composed".utf8))
            try expect(Array(first.filename.utf8) == Array(composed.utf8), "the composed name came back in another form")
            do {
                let second = try await context.makeFile(decomposed, Data("decomposed".utf8))
                try expect(Array(second.filename.utf8) == Array(decomposed.utf8), "the decomposed name came back in another form")
                try expect(try await context.content(of: second.itemIdentifier) == Data("decomposed".utf8), "the decomposed file has other bytes")
            } catch let error as FileProviderError where error.code == .filenameCollision {
                // A provider that treats the two as one name refuses the second: allowed.
            }
            try expect(try await context.content(of: first.itemIdentifier) == Data("composed".utf8), "the composed file lost its bytes")
        },
        Case(name: "illegal names are refused and create nothing") { context in
            let before = try await context.names()
            for name in ["", ".", "..", "a/b", "nul\u{0}byte", String(repeating: "n", count: 256)] {
                try await context.expectRefusal("creating a file named \(name.debugDescription.prefix(40))") {
                    try await context.makeFile(name, Data("x".utf8))
                }
            }
            let after = try await context.names()
            try expect(after.sorted() == before.sorted(), "refused names left items: \(Set(after).subtracting(before).sorted())")
        },
        Case(name: "names that differ only in case never replace each other") { context in
            let upper = try await context.makeFile("Case.txt", Data("upper".utf8))
            do {
                let lower = try await context.makeFile("case.txt", Data("lower".utf8))
                try expect(lower.itemIdentifier != upper.itemIdentifier, "two names that differ in case share an identifier")
                try expect(try await context.content(of: lower.itemIdentifier) == Data("lower".utf8), "“case.txt” has other bytes")
            } catch let error as FileProviderError where error.code == .filenameCollision {
                // A case-insensitive provider refuses the second name: allowed.
            }
            try expect(try await context.content(of: upper.itemIdentifier) == Data("upper".utf8), "“Case.txt” was replaced")
        },
    ]
}

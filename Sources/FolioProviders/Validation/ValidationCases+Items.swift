import Folio
import Foundation

extension ProviderValidation {
    /// Create, look up, modify, rename, reparent and delete.
    static let itemCases: [Case] = [
        Case(name: "the root is a folder") { context in
            let root = try await context.item(.rootContainer)
            try expect(root.isFolder, "the root's type is \(root.contentType.identifier), not public.folder")
        },
        Case(name: "create a folder and a file, look them up, list them") { context in
            let folder = try await context.makeFolder("Folder")
            let file = try await context.makeFile("hello.txt", Data("hello".utf8), in: folder.itemIdentifier)
            try expect(file.itemIdentifier != folder.itemIdentifier, "two items got one identifier")
            let found = try await context.item(file.itemIdentifier)
            try expect(found.filename == "hello.txt", "the file is named “\(found.filename)”")
            try expect(found.parentItemIdentifier == folder.itemIdentifier, "the file's parent is \(found.parentItemIdentifier)")
            try expect(found.size == 5, "the file's size is \(found.size.map(String.init) ?? "unknown"), not 5")
            try expect(try await context.names(in: folder.itemIdentifier) == ["hello.txt"], "the folder does not list exactly the file")
            try expect(try await context.names().contains("Folder"), "the scratch folder does not list the new folder")
        },
        Case(name: "modify content against the current base version") { context in
            let file = try await context.makeFile("edit.txt", Data("first".utf8))
            let edited = try await context.write(Data("second, longer".utf8), to: file, base: file.itemVersion)
            try expect(edited.itemIdentifier == file.itemIdentifier, "an edit changed the identifier")
            try expect(edited.itemVersion.contentVersion != file.itemVersion.contentVersion, "new content kept the old content version")
            try expect(try await context.content(of: file.itemIdentifier) == Data("second, longer".utf8), "the new content did not read back")
        },
        Case(name: "a stale base version is refused and writes nothing") { context in
            let file = try await context.makeFile("stale.txt", Data("one".utf8))
            _ = try await context.write(Data("two!".utf8), to: file, base: file.itemVersion)
            try await context.expectError(.localVersionConflictingWithServer, "writing against the first version") {
                try await context.write(Data("three".utf8), to: file, base: file.itemVersion)
            }
            try expect(try await context.content(of: file.itemIdentifier) == Data("two!".utf8), "a refused write changed the content")
            try await context.expectError(.localVersionConflictingWithServer, "deleting against the first version") {
                try await context.provider.deleteItem(identifier: file.itemIdentifier, baseVersion: file.itemVersion, options: [], request: context.request)
            }
            try expect(try await context.names().contains("stale.txt"), "a refused delete removed the file")
        },
        Case(name: "rename keeps the content, changes the metadata version") { context in
            let file = try await context.makeFile("before.txt", Data("kept".utf8))
            let renamed = try await context.move(file, to: "after.txt")
            try expect(renamed.filename == "after.txt", "the renamed item is named “\(renamed.filename)”")
            try expect(renamed.itemVersion.contentVersion == file.itemVersion.contentVersion, "a rename changed the content version")
            let names = try await context.names()
            try expect(names.contains("after.txt") && !names.contains("before.txt"), "the listing shows \(names)")
            try expect(try await context.content(of: renamed.itemIdentifier) == Data("kept".utf8), "the content changed in the rename")
        },
        Case(name: "reparent a file and a folder") { context in
            let source = try await context.makeFolder("source")
            let target = try await context.makeFolder("target")
            let file = try await context.makeFile("moving.txt", Data("moving".utf8), in: source.itemIdentifier)
            let moved = try await context.move(file, into: target.itemIdentifier)
            try expect(moved.parentItemIdentifier == target.itemIdentifier, "the moved file's parent is \(moved.parentItemIdentifier)")
            try expect(try await context.names(in: source.itemIdentifier).isEmpty, "the source folder still lists the file")
            let inner = try await context.makeFolder("inner", in: source.itemIdentifier)
            _ = try await context.makeFile("deep.txt", Data("deep".utf8), in: inner.itemIdentifier)
            let movedFolder = try await context.move(inner, into: target.itemIdentifier)
            let deep = try await context.list(movedFolder.itemIdentifier)
            try expect(deep.map(\.filename) == ["deep.txt"], "the moved folder lists \(deep.map(\.filename))")
            try expect(try await context.content(of: deep[0].itemIdentifier) == Data("deep".utf8), "a moved folder's file lost its content")
            try await context.expectRefusal("moving a folder into its own child") {
                let child = try await context.makeFolder("child", in: movedFolder.itemIdentifier)
                return try await context.move(movedFolder, into: child.itemIdentifier)
            }
        },
        Case(name: "a name in use is a collision, and nothing is replaced") { context in
            let first = try await context.makeFile("taken.txt", Data("original".utf8))
            try await context.expectError(.filenameCollision, "creating a second “taken.txt”") {
                try await context.makeFile("taken.txt", Data("intruder".utf8))
            }
            let other = try await context.makeFile("other.txt", Data("other".utf8))
            try await context.expectError(.filenameCollision, "renaming onto “taken.txt”") {
                try await context.move(other, to: "taken.txt")
            }
            try expect(try await context.content(of: first.itemIdentifier) == Data("original".utf8), "a collision replaced the content")
            try expect(try await context.content(of: other.itemIdentifier) == Data("other".utf8), "a refused rename lost the content")
        },
        Case(name: "delete: files, empty and non-empty folders, unknown items") { context in
            let file = try await context.makeFile("doomed.txt", Data("bye".utf8))
            try await context.provider.deleteItem(identifier: file.itemIdentifier, baseVersion: file.itemVersion, options: [], request: context.request)
            try await context.expectError(.noSuchItem, "looking up a deleted file") { try await context.item(file.itemIdentifier) }
            let folder = try await context.makeFolder("full")
            let inside = try await context.makeFile("inside.txt", Data("in".utf8), in: folder.itemIdentifier)
            try await context.expectError(.directoryNotEmpty, "deleting a non-empty folder without .recursive") {
                try await context.provider.deleteItem(identifier: folder.itemIdentifier, baseVersion: folder.itemVersion, options: [], request: context.request)
            }
            try expect(try await context.content(of: inside.itemIdentifier) == Data("in".utf8), "a refused delete touched the folder's file")
            try await context.provider.deleteItem(identifier: folder.itemIdentifier, baseVersion: folder.itemVersion, options: .recursive, request: context.request)
            try await context.expectError(.noSuchItem, "looking up a file of a deleted folder") { try await context.item(inside.itemIdentifier) }
            // An unknown item is already deleted: success.
            try await context.provider.deleteItem(
                identifier: FileProviderItemIdentifier("folio-validation-unknown"), baseVersion: FileProviderItemVersion(), options: [],
                request: context.request)
        },
        Case(name: "unknown items and parents are noSuchItem") { context in
            let unknown = FileProviderItemIdentifier("folio-validation-unknown")
            try await context.expectError(.noSuchItem, "item(for:) of an unknown identifier") { try await context.item(unknown) }
            try await context.expectError(.noSuchItem, "fetching an unknown item") { try await context.content(of: unknown) }
            try await context.expectError(.noSuchItem, "creating in an unknown folder") {
                try await context.makeFile("orphan.txt", Data("x".utf8), in: unknown)
            }
            try await context.expectError(.noSuchItem, "modifying an unknown item") {
                try await context.write(
                    Data("x".utf8),
                    to: FileProviderItemRecord(itemIdentifier: unknown, parentItemIdentifier: context.scratch, filename: "ghost.txt"),
                    base: FileProviderItemVersion())
            }
        },
    ]
}

import Folio
@testable import FolioSync
import FolioTestTraits
import Foundation
import Logging
import Testing

/// A provider whose working set is a fixed list, in the order given, in pages of two (a stand-in:
/// the listing's layout by path is what is tested, whatever order a provider lists in).
private struct ListedProvider: ListedStandIn {
    let items: [FileProviderItemRecord]
}

/// The same list handed over whole, by identifier, as the WebDAV and S3 providers do.
private struct WholeListedProvider: ListedStandIn, WorkingSetFileProvider {
    let items: [FileProviderItemRecord]

    func workingSetItems(request: FileProviderRequest) async throws -> [FileProviderItemIdentifier: FileProviderItemRecord] {
        Dictionary(items.map { ($0.itemIdentifier, $0) }, uniquingKeysWith: { _, last in last })
    }
}

private protocol ListedStandIn: FileProvider {
    var items: [FileProviderItemRecord] { get }
}

extension ListedStandIn {
    func enumerateItems(in container: FileProviderItemIdentifier, startingAt page: FileProviderPage, request: FileProviderRequest) async throws
        -> FileProviderItemPage
    {
        let start = page == .initialPageSortedByName ? 0 : Int(String(decoding: page.rawValue, as: UTF8.self))!
        let end = min(start + 2, items.count)
        return FileProviderItemPage(items: Array(items[start..<end]), nextPage: end < items.count ? FileProviderPage(Data("\(end)".utf8)) : nil)
    }
    func item(for identifier: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> any FileProviderItem {
        throw FileProviderError.noSuchItem(identifier)
    }
    func currentSyncAnchor(for container: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> FileProviderSyncAnchor {
        throw FileProviderError.noSuchItem(container)
    }
    func enumerateChanges(in container: FileProviderItemIdentifier, from anchor: FileProviderSyncAnchor, request: FileProviderRequest)
        async throws -> FileProviderChangeBatch
    {
        throw FileProviderError.noSuchItem(container)
    }
    func fetchContents(for identifier: FileProviderItemIdentifier, version: FileProviderItemVersion?, request: FileProviderRequest, progress: Progress)
        async throws -> (contents: URL, item: any FileProviderItem)
    {
        throw FileProviderError.noSuchItem(identifier)
    }
    func createItem(
        basedOn template: any FileProviderItem, fields: FileProviderItemFields, contents: URL?, options: FileProviderCreateItemOptions,
        request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        throw FileProviderError.noSuchItem(template.itemIdentifier)
    }
    func modifyItem(
        _ item: any FileProviderItem, baseVersion: FileProviderItemVersion, changedFields: FileProviderItemFields, contents: URL?,
        options: FileProviderModifyItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        throw FileProviderError.noSuchItem(item.itemIdentifier)
    }
    func deleteItem(identifier: FileProviderItemIdentifier, baseVersion: FileProviderItemVersion, options: FileProviderDeleteItemOptions, request: FileProviderRequest)
        async throws
    {
        throw FileProviderError.noSuchItem(identifier)
    }
}

@Suite("The server's tree", .elasticPool)
struct RemoteTreeTests {
    static func folder(_ identifier: String, in parent: String?, _ name: String) -> FileProviderItemRecord {
        FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier(identifier), parentItemIdentifier: parent.map { FileProviderItemIdentifier($0) } ?? .rootContainer,
            filename: name, contentType: .folder)
    }
    static func file(_ identifier: String, in parent: String?, _ name: String) -> FileProviderItemRecord {
        FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier(identifier), parentItemIdentifier: parent.map { FileProviderItemIdentifier($0) } ?? .rootContainer,
            filename: name, itemVersion: FileProviderItemVersion(contentVersion: Data(identifier.utf8), metadataVersion: Data()), size: 1)
    }

    /// Folders are found wherever they are listed (before or after what they hold, three deep),
    /// an item whose folder is not listed or whose name no file here can have is left out, of
    /// two items with one name the first by identifier stays, Folio's own names are reported, and the
    /// meta folder's items are taken aside: the same tree whichever order the provider lists in.
    @Test func theTreeIsLaidOutByPathWhateverTheListingsOrder() async throws {
        let items = [
            Self.folder("a", in: nil, "top"),
            Self.file("b", in: "a", "one.txt"),
            Self.file("c", in: "e", "deep.txt"),  // listed before its folder and that folder's folder
            Self.folder("d", in: "a", "mid"),
            Self.folder("e", in: "d", "low"),
            Self.file("f", in: "gone", "orphan.txt"),
            Self.file("g", in: nil, ".."),
            Self.file("h", in: nil, "same.txt"),
            Self.file("i", in: nil, "same.txt"),
            Self.file("j", in: "a", "doc.txt" + PlaceholderStub.suffix),
            Self.file("k", in: nil, LocalReplica.markerName),
            Self.folder("l", in: nil, RemoteTree.metaFolder),
            Self.file("m", in: "l", "drive.json"),
            Self.folder("n", in: "l", "conflicts"),
            Self.file("o", in: "n", "x.txt"),
            Self.file("p", in: "e", "last.txt"),
            // A folder and a file with one name: the folder is first in identifier order, and what it holds is laid out.
            Self.file("r", in: nil, "both"),
            Self.folder("q", in: nil, "both"),
            Self.file("s", in: "q", "inside.txt"),
            // A second conflict of one name: the last in identifier order is Folio's.
            Self.file("t", in: "n", "x.txt"),
        ]
        let request = FileProviderRequest(temporaryDirectory: FileManager.default.temporaryDirectory)
        var trees: [RemoteTree] = []
        for order in [items, items.reversed(), items.sorted { $0.filename < $1.filename }, items.sorted { $0.itemIdentifier.rawValue < $1.itemIdentifier.rawValue }] {
            trees.append(try await RemoteTree.list(ListedProvider(items: order), request: request, logger: Logger(label: "test")))
        }
        trees.append(try await RemoteTree.list(WholeListedProvider(items: items), request: request, logger: Logger(label: "test")))
        trees.append(try await RemoteTree.list(WholeListedProvider(items: items.reversed()), request: request, logger: Logger(label: "test")))
        for tree in trees {
            #expect(
                tree.entries.keys.map(\.text).sorted() == [
                    "both", "both/inside.txt", "same.txt", "top", "top/mid", "top/mid/low", "top/mid/low/deep.txt", "top/mid/low/last.txt", "top/one.txt",
                ])
            #expect(tree.entries[SyncPath("both")]?.identifier == "q" && tree.records[SyncPath("both")]?.itemIdentifier.rawValue == "q")
            #expect(tree.entries[SyncPath("top/mid/low/deep.txt")]?.identifier == "c")
            #expect(tree.records.count == tree.entries.count)
            #expect(tree.skipped.sorted() == ["..", LocalReplica.markerName, "both", "orphan.txt", "same.txt", "top/doc.txt" + PlaceholderStub.suffix])
            #expect(tree.meta?.itemIdentifier.rawValue == "l" && tree.marker?.itemIdentifier.rawValue == "m")
            #expect(tree.conflictFolder?.itemIdentifier.rawValue == "n" && tree.conflicts.keys.sorted() == ["x.txt"])
            #expect(tree.conflicts["x.txt"]?.itemIdentifier.rawValue == "t")
        }
        // Of the two named same.txt, the first in identifier order stays, however listed.
        #expect(trees.allSatisfy { $0.entries[SyncPath("same.txt")]?.identifier == "h" })
    }
}

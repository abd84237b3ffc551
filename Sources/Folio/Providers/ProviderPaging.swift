import Foundation

/// Pages that continue after a sort key (a name or an identifier), for providers that list in a
/// stable order: items added or removed meanwhile never shift a page, so a busy folder still
/// enumerates to the end.
package enum ProviderPaging {
    /// The page that continues after `key`.
    package static func page(after key: String) -> FileProviderPage {
        FileProviderPage(Data("after:".utf8) + Data(key.utf8))
    }

    /// The key `page` continues after; nil for a first page.
    ///
    /// - Throws: ``FileProviderError/Code/pageExpired`` for a page this scheme did not make.
    package static func key(of page: FileProviderPage) throws(FileProviderError) -> String? {
        if page.isInitial { return nil }
        let prefix = Data("after:".utf8)
        guard page.rawValue.count <= FileProviderPage.maximumLength, page.rawValue.starts(with: prefix),
            let key = String(data: page.rawValue.dropFirst(prefix.count), encoding: .utf8)
        else { throw FileProviderError(.pageExpired, message: "the page is not one this provider made") }
        return key
    }

    /// The next `limit` of `items` (sorted by `key`) after `page`, with the page after them.
    package static func slice<Item>(
        _ items: [Item], key: (Item) -> String, after page: FileProviderPage, limit: Int
    ) throws(FileProviderError) -> (items: ArraySlice<Item>, next: FileProviderPage?) {
        var start = items.startIndex
        if let after = try self.key(of: page) {
            // Binary search for the first key greater than `after`, comparing UTF-8 bytes.
            var low = items.startIndex, high = items.endIndex
            while low < high {
                let middle = (low + high) / 2
                if !ByteOrder.precedes(after, key(items[middle])) {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            start = low
        }
        let end = min(items.endIndex, start + max(1, limit))
        let slice = items[start..<end]
        return (slice, end < items.endIndex ? Self.page(after: key(items[end - 1])) : nil)
    }

    /// Sorts by the UTF-8 bytes of `key`, the order ``slice(_:key:after:limit:)`` expects.
    package static func sorted<Item>(_ items: [Item], key: (Item) -> String) -> [Item] {
        // The keys are read once and indices sorted, not the items: a listing's records are large,
        // and a key path read at each comparison cost more than the sort's own work.
        let keys = items.map(key)
        return keys.indices.sorted { ByteOrder.precedes(keys[$0], keys[$1]) }.map { items[$0] }
    }
}

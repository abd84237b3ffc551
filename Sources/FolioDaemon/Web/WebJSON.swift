import Folio
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The page's JSON: answers, errors (`{"error": message}` with the status that fits) and the item
/// form every listing uses.
enum WebJSON {
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A value in the daemon's wire form (grants, picker requests), as JSON.
    static func response(wire value: WireValue) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serialized())))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        response(["error": message], status: status)
    }

    /// The status for a daemon failure.
    static func status(of failure: CoordinationFailure) -> HTTPResponse.Status {
        if failure.isExists { return .conflict }
        switch failure.kind {
        case .denied: return .forbidden
        case .notFound: return .notFound
        case .invalid, .corrupt: return .badRequest
        case .presenterTimeout, .timedOut: return .gatewayTimeout
        default: return .internalServerError
        }
    }
}

/// One item as the page sees it.
struct WebItem: Encodable, Sendable {
    var path: String
    var name: String
    var folder: Bool
    var link: Bool
    var size: Int64
    /// Seconds since 1970.
    var modified: Double
    /// Its Uniform Type Identifier.
    var type: String
    var tags: [String]
    var favorite: Bool
    var lastUsed: Double?
    /// `notDownloaded`, `downloaded` or `current` for a drive item, nil elsewhere.
    var download: String?
    var uploaded: Bool?
    var downloading: Bool?
    var pinned: Bool?
    var error: String?
    /// Whether versions of it conflict and wait to be resolved.
    var conflict: Bool?
    /// Whether it may answer the picker request the page asked about.
    var pickable: Bool?
    /// For a search that matched its text, the passage around the match (matched words between
    /// U+0002 and U+0003).
    var snippet: String?

    init(_ record: IndexRecord) {
        path = record.path
        name = record.name
        folder = record.kind == .directory
        link = record.kind == .symbolicLink
        size = record.size
        modified = record.modified
        type = record.type
        tags = record.tags.map(IndexRecord.decode(tags:)) ?? []
        favorite = record.favoriteRank != nil
        lastUsed = record.lastUsed
        download = record.downloadStatus.map { $0.replacingOccurrences(of: "NSMetadataUbiquitousItemDownloadingStatus", with: "").lowercasedFirst }
        uploaded = record.sync?.isUploaded
        downloading = record.sync?.isDownloading
        pinned = record.sync?.isPinned
        error = record.sync?.error
        conflict = record.conflict ? true : nil
    }
}

extension String {
    fileprivate var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}

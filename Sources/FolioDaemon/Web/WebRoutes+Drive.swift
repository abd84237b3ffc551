import Folio
import FolioSync
import Foundation
import Hummingbird
import Logging
import NIOCore

extension WebRoutes {
    /// The drive: where it lives and how it stands (files local, in the cloud, waiting to upload,
    /// in error; the last passes), setting it up (checked before it is saved), a pass now (with the
    /// mass-deletion hold confirmed), and downloads with their progress pushed to the page.
    static func addDriveRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.get("drive") { _, _ in
            await answer {
                let paths = state.paths
                var page = DrivePage(replica: paths.driveDirectory)
                page.configuration = try await state.blocking(.quick) { try DriveConfiguration.load(paths) }.map(DriveSettings.init)
                if let service = state.context.drive, page.configuration != nil {
                    page.passes = service.passes.map(PassEntry.init)
                    page.downloads = DownloadEntry.all(of: service)
                    if let drive = try await service.drive() {
                        for (_, item) in try await drive.status([""]) {
                            switch item.state {
                            case .local: page.local += 1
                            case .cloud: page.cloud += 1
                            case .uploading: page.uploading += 1
                            default: break
                            }
                            if item.error != nil { page.errors += 1 }
                        }
                    }
                }
                return WebJSON.response(page)
            }
        }

        api.post("drive/setup") { request, _ in
            await answer {
                let form = try await body(DriveForm.self, of: request)
                // It looks at the folder or executable named: on a pool.
                let configuration = try await state.blocking(.quick) { try form.configuration() }
                guard let check = state.driveCheck else { throw WebScope.Refusal(status: 501, message: "this daemon cannot check a drive") }
                do {
                    try await check(configuration, form.secret)
                } catch {
                    throw WebScope.Refusal(status: 422, message: "the drive cannot be set up: \(error.localizedDescription)")
                }
                let paths = state.paths
                try await state.blocking(.slow) { try configuration.save(secret: form.secret, paths) }
                state.logger.info("drive set up from the browser page", metadata: ["drive": "\(configuration)"])
                return WebJSON.response(["drive": configuration.description])
            }
        }

        api.post("drive/sync") { request, _ in
            await answer {
                let change = try await body(SyncNow.self, of: request)
                guard let service = state.context.drive, let drive = try await service.drive() else {
                    throw WebScope.Refusal(status: 409, message: "no drive is set up")
                }
                let report = try await service.syncNow(drive, confirmingDeletions: change.confirmDeletions ?? false)
                return WebJSON.response(PassEntry(DriveService.PassRecord(ended: Date(), reason: DriveService.requested, report: report)))
            }
        }

        api.post("drive/download") { request, _ in
            await answer {
                let change = try await body(ItemPaths.self, of: request)
                guard let service = state.context.drive else { throw WebScope.Refusal(status: 409, message: "no drive is set up") }
                for path in change.paths {
                    try WebScope.checkForm(path)
                    guard service.contains(path) else { throw WebScope.Refusal(status: 400, message: "\(path) is not in the drive") }
                    try await service.startDownload(path) { error in
                        if let error { state.changes.publish(.downloadFailed(path, "\(error)")) }
                    }
                }
                reportProgress(state: state, service: service)
                return WebJSON.response(["paths": change.paths])
            }
        }

        api.post("drive/cancel") { request, _ in
            await answer {
                let change = try await body(ItemPath.self, of: request)
                guard let service = state.context.drive, service.cancelDownload(change.path) else {
                    throw WebScope.Refusal(status: 404, message: "no download of \(change.path) is under way")
                }
                return WebJSON.response(["path": change.path])
            }
        }

        api.post("drive/evict") { request, _ in
            await answer {
                let change = try await body(ItemPaths.self, of: request)
                guard let service = state.context.drive, let drive = try await service.drive() else { throw WebScope.Refusal(status: 409, message: "no drive is set up") }
                let relative = try change.paths.map(drive.drivePath)
                let (evicted, refused) = try await state.context.evictCoordinated(relative, drive: drive, driveDirectory: service.paths.driveDirectory)
                service.refreshStates()
                return WebJSON.response(["evicted": evicted, "refused": refused.map { "\($0.0): \($0.1.localizedDescription)" }])
            }
        }

        api.post("drive/pin") { request, _ in
            await answer {
                let change = try await body(Pin.self, of: request)
                guard let service = state.context.drive, let drive = try await service.drive() else { throw WebScope.Refusal(status: 409, message: "no drive is set up") }
                try await drive.setPinned(try change.paths.map(drive.drivePath), change.pinned)
                service.refreshStates()
                return WebJSON.response(["paths": change.paths])
            }
        }
    }

    /// Pushes the downloads' progress to the pages every 200 ms while any is under way, and once
    /// more when none is left.
    private static func reportProgress(state: WebState, service: DriveService) {
        guard state.claimProgressReporter() else { return }
        Task {
            while true {
                let downloads = DownloadEntry.all(of: service)
                state.changes.publish(.progress(downloads))
                if downloads.isEmpty {
                    state.releaseProgressReporter()
                    // A download that started after the list was read, while this task still held
                    // the claim, is reported by a reporter of its own.
                    if DownloadEntry.all(of: service).isEmpty || !state.claimProgressReporter() { return }
                    continue
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}

struct DriveSettings: Encodable, Sendable {
    var kind: String
    var url: String
    var user: String?
    var bucket: String?
    var prefix: String?
    var region: String?
    var arguments: [String]?
    var description: String

    init(_ configuration: DriveConfiguration) {
        kind = configuration.kind.rawValue
        // Never a password back to the page: an older configuration may keep one in its URL.
        url = DriveConfiguration.splittingCredentials(from: configuration.url).url
        user = configuration.user
        bucket = configuration.bucket
        prefix = configuration.prefix
        region = configuration.region
        arguments = configuration.arguments
        description = configuration.description
    }
}

struct PassEntry: Encodable, Sendable {
    var ended: Double
    var reason: String
    var uploaded = 0
    var downloaded = 0
    var placeholders = 0
    var deletedOnServer = 0
    var deletedHere = 0
    var conflicts = 0
    var held = 0
    var deferred = 0
    /// Items not tried: the server refused them pass after pass (`folio drive status` says why).
    var setAside = 0
    var error: String?

    init(_ record: DriveService.PassRecord) {
        ended = record.ended.timeIntervalSince1970
        reason = record.reason
        error = record.error
        if let report = record.report {
            uploaded = report.uploaded
            downloaded = report.downloaded
            placeholders = report.placeholders
            deletedOnServer = report.deletedOnServer
            deletedHere = report.deletedHere
            conflicts = report.conflicts.count
            held = report.heldDeletions
            deferred = report.deferred.count
            setAside = report.setAside.count
        }
    }
}

struct DownloadEntry: Codable, Sendable {
    var path: String
    var fraction: Double
    var completed: Int64
    var total: Int64

    /// The drive's downloads under way.
    static func all(of service: DriveService) -> [DownloadEntry] {
        service.downloadProgress().map { DownloadEntry(path: $0.path, fraction: $0.fraction, completed: $0.completed, total: $0.total) }
    }
}

struct DrivePage: Encodable, Sendable {
    var replica: String
    var configuration: DriveSettings?
    var local = 0
    var cloud = 0
    var uploading = 0
    var errors = 0
    var passes: [PassEntry] = []
    var downloads: [DownloadEntry] = []
}

/// The drive's setup form.
struct DriveForm: Decodable {
    var kind: String
    /// WebDAV: the collection URL; S3: the server URL; folder: the folder; provider: the executable.
    var url: String
    var user: String?
    /// The WebDAV password or S3 secret key: sealed, never logged nor shown again.
    var secret: String?
    var bucket: String?
    var region: String?
    var arguments: [String]?

    func configuration() throws(WebScope.Refusal) -> DriveConfiguration {
        func refuse(_ message: String) -> WebScope.Refusal { WebScope.Refusal(status: 400, message: message) }
        switch kind {
        case "webdav":
            guard let url = URL(string: self.url), url.scheme == "http" || url.scheme == "https", url.host != nil, url.user == nil else {
                throw refuse("a WebDAV drive needs an http(s) URL, without an account in it")
            }
            return DriveConfiguration(kind: .webdav, url: self.url, user: user?.nilIfEmpty)
        case "s3":
            guard let url = URL(string: self.url), url.host != nil, url.user == nil, let bucket = bucket?.nilIfEmpty, let user = user?.nilIfEmpty, secret?.isEmpty == false else {
                throw refuse("an S3 drive needs the server URL, BUCKET or BUCKET/PREFIX, the access key and the secret key")
            }
            let parts = bucket.split(separator: "/", maxSplits: 1).map(String.init)
            return DriveConfiguration(
                kind: .s3, url: url.absoluteString, user: user, bucket: parts[0], prefix: parts.count > 1 ? parts[1] : nil, region: region?.nilIfEmpty ?? "us-east-1")
        case "folder":
            try WebScope.checkForm(url)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url, isDirectory: &isFolder), isFolder.boolValue else { throw refuse("\(url) is not a folder") }
            return DriveConfiguration(kind: .folder, url: url)
        case "provider":
            try WebScope.checkForm(url)
            guard access(url, X_OK) == 0 else { throw refuse("\(url) is not an executable") }
            return DriveConfiguration(kind: .provider, url: url, arguments: arguments ?? [])
        default:
            throw refuse("a drive is on webdav, s3, a folder or a provider, not “\(kind)”")
        }
    }
}

struct SyncNow: Decodable {
    var confirmDeletions: Bool?
}

struct Pin: Decodable {
    var paths: [String]
    var pinned: Bool
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}

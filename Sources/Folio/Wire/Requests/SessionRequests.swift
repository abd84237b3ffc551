/// The session's requests (docs/protocol.md, "Session"): the hello that opens every connection,
/// the daemon's status, and a pass of the drive.

/// `hello`: the first frame of a connection. An app says which it is (its socket may say it
/// instead); the user's own tools say nothing.
package struct Hello: DaemonRequest {
    package static let method = "hello"
    package typealias Reply = HelloReply

    /// The protocol the client speaks (`DaemonConnection.protocolVersion`).
    package var `protocol`: Int64?
    package var pid: Int64?
    /// A name for `folio status` (the first 256 bytes are kept).
    package var name: String?
    /// The app's identifier, for an app.
    package var app: String?

    package init(protocol: Int64?, pid: Int64?, name: String?, app: String?) {
        self.protocol = `protocol`
        self.pid = pid
        self.name = name
        self.app = app
    }

    package func validate() throws(CoordinationFailure) {
        if let name { try WireCheck.length(name, "params.name", limit: 4096) }
        if let app { try WireCheck.app(app, "params.app") }
    }
}

/// The daemon's answer to `hello`.
package struct HelloReply: Codable, Sendable {
    package var `protocol`: Int64
    /// Always `folio`.
    package var daemon: String
    package var pid: Int64
    package var uid: Int64
    /// The arbiter's number for this connection.
    package var client: Int64
    /// The app this connection is, if one.
    package var app: String?

    package init(protocol: Int64, daemon: String, pid: Int64, uid: Int64, client: Int64, app: String?) {
        self.protocol = `protocol`
        self.daemon = daemon
        self.pid = pid
        self.uid = uid
        self.client = client
        self.app = app
    }
}

/// `status`: the arbiter's clients, claims and presenters (`folio status`).
package struct DaemonStatus: DaemonRequest {
    package static let method = "status"
    package typealias Reply = WireValue
    package init() {}
}

/// `drive.sync`: runs a pass of the drive now and replies with its report (`folio drive sync`).
package struct DriveSyncRequest: DaemonRequest {
    package static let method = "drive.sync"
    package typealias Reply = WireValue
    /// Lets the pass delete on the server what was deleted here beyond the safety limit.
    package var confirmDeletions: Bool?
    package init(confirmDeletions: Bool) { self.confirmDeletions = confirmDeletions }
}

/// `drive.download`: downloads the drive's placeholders at or below `paths` (absolute paths in
/// the drive) in the daemon, replying when done with the drive paths downloaded (`folio drive
/// download` with a daemon running: the index and presenters see each download as it goes).
package struct DriveDownloadRequest: DaemonRequest {
    package static let method = "drive.download"
    package typealias Reply = DriveDownloadReply
    package var paths: [String]
    package init(paths: [String]) { self.paths = paths }
    package mutating func validate() throws(CoordinationFailure) {
        guard !paths.isEmpty else { throw CoordinationFailure(kind: .invalid, message: "params.paths: at least one path") }
        for index in paths.indices { paths[index] = try WireCheck.normalizedPath(paths[index], "params.paths[\(index)]") }
    }
}

/// What `drive.download` downloaded (drive paths).
package struct DriveDownloadReply: Codable, Sendable {
    package var downloaded: [String]
    package init(downloaded: [String]) { self.downloaded = downloaded }
}

/// `drive.replica`: where the drive's replica is reached while the daemon has the drive's folder
/// mounted (files on demand): a path into the daemon's descriptor of the folder beneath the mount,
/// for the user's `folio drive` commands that read the replica. Nil while it is not mounted.
package struct DriveReplicaRequest: DaemonRequest {
    package static let method = "drive.replica"
    package typealias Reply = DriveReplicaReply
    package init() {}
}

/// Where the drive's replica is reached now (nil: at the drive's folder itself).
package struct DriveReplicaReply: Codable, Sendable {
    package var path: String?
    package init(path: String?) { self.path = path }
}

/// `drive.progress`: what the drive's passes and downloads in the daemon are doing now (the bars
/// of `folio drive sync` and `folio drive download`).
package struct DriveProgressRequest: DaemonRequest {
    package static let method = "drive.progress"
    package typealias Reply = DriveProgressReply
    package init() {}
}

/// The pass under way (nil between passes), the last one that ended, and the transfers under way.
package struct DriveProgressReply: Codable, Sendable, Equatable {
    /// A pass: its actions planned and done, and the bytes of its transfers planned and done.
    package struct Pass: Codable, Sendable, Equatable {
        package var actions: Int
        package var done: Int
        package var bytes: Int64
        package var bytesDone: Int64
        package init(actions: Int, done: Int, bytes: Int64, bytesDone: Int64) {
            self.actions = actions
            self.done = done
            self.bytes = bytes
            self.bytesDone = bytesDone
        }
    }

    /// A transfer: the drive path, `upload` or `download`, and how far it is (0…100).
    package struct Transfer: Codable, Sendable, Equatable {
        package var path: String
        package var direction: String
        package var percent: Double
        package init(path: String, direction: String, percent: Double) {
            self.path = path
            self.direction = direction
            self.percent = percent
        }
    }

    package var pass: Pass?
    package var last: Pass?
    package var transfers: [Transfer]
    package init(pass: Pass?, last: Pass?, transfers: [Transfer]) {
        self.pass = pass
        self.last = last
        self.transfers = transfers
    }
}

/// `drive.evict`: makes the downloaded drive file at `path` (or every file below the folder) a
/// placeholder again, its content only on the server (`FileManager.evictUbiquitousItem(at:)`).
/// An app may name only items it may write: its ubiquity container, or what it was granted.
package struct DriveEvictRequest: DaemonRequest {
    package static let method = "drive.evict"
    package typealias Reply = DriveEvictReply
    package var path: ClientPath
    package init(path: String) { self.path = ClientPath(path) }
    package mutating func validate() throws(CoordinationFailure) { path = ClientPath(try WireCheck.normalizedPath(path.text, "params.path")) }
}

/// `drive.publish`: a link to the server's copy of the drive file at `path` that anyone may
/// download without the drive's credentials until it expires (an S3 presigned URL), for
/// `FileManager.url(forPublishingUbiquitousItemAt:expiration:)`. `seconds` asks for a lifetime (the
/// provider's longest, seven days on S3, by default and at most). An app may name only items it
/// may read: its ubiquity container, or what it was granted.
package struct DrivePublishRequest: DaemonRequest {
    package static let method = "drive.publish"
    package typealias Reply = DrivePublishReply
    package var path: ClientPath
    package var seconds: Double?
    package init(path: String, seconds: Double? = nil) {
        self.path = ClientPath(path)
        self.seconds = seconds
    }
    package mutating func validate() throws(CoordinationFailure) {
        path = ClientPath(try WireCheck.normalizedPath(path.text, "params.path"))
        if let seconds, !(seconds >= 1 && seconds.isFinite) {
            throw CoordinationFailure(kind: .invalid, message: "params.seconds: a lifetime of at least one second")
        }
    }
}

/// The link `drive.publish` made and when it expires (seconds since 1970).
package struct DrivePublishReply: Codable, Sendable {
    package var url: String
    package var expiration: Double
    package init(url: String, expiration: Double) {
        self.url = url
        self.expiration = expiration
    }
}

/// What `drive.evict` did: the drive paths evicted (none when all was already in the cloud).
package struct DriveEvictReply: Codable, Sendable {
    package var evicted: [String]
    package init(evicted: [String]) { self.evicted = evicted }
}


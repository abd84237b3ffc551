#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The daemon keeps the drive in sync by itself: a coordinated write in it is uploaded shortly
/// after, remote files arrive as placeholders, and a coordinated read of a placeholder downloads
/// it before the reader is let in. The "server" is a folder (the local folder provider), so the
/// test sees exactly what reached it.
@Suite("The daemon's drive", .elasticPool)
struct DriveDaemonTests {
    @Test func coordinatedAccessSyncsAndMaterializes() async throws {
        let (dir, environment, server, daemon) = try Self.driveOnFolder("drive-daemon", interval: 1)
        defer { daemon.stop() }
        let drive = dir.child("data/folio/Drive").path

        // A coordinated write in the drive reaches the server without a `folio drive sync`.
        let notes = drive + "/notes.txt"
        let wrote = try ProcessRunner.folio(["coordinate", "write", notes, "--", "sh", "-c", "echo 'written on this device' > '\(notes)'"], environment: environment)
        #expect(wrote.status == 0, "\(wrote.stderr)")
        #expect(await eventually { FileManager.default.contents(atPath: server + "/notes.txt") == Data("written on this device\n".utf8) }, "\(daemon.log)")
        // …sent by a pass of the daemon's (the one pass so far that uploaded anything).
        #expect(await eventually { Self.uploads(in: daemon.log).filter { $0 > 0 } == [1] }, "\(daemon.log)")

        // A file that appears on the server arrives as a placeholder…
        let content = String(repeating: "from elsewhere ", count: 1000)
        try Data(content.utf8).write(to: URL(fileURLWithPath: server + "/remote.txt"))
        #expect(await eventually { FileManager.default.fileExists(atPath: drive + "/remote.txt.folio-cloud") }, "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: drive + "/remote.txt"))
        // With the server gone, the reader gets a clear error and the placeholder stays.
        try FileManager.default.moveItem(atPath: server, toPath: server + ".away")
        let failed = try ProcessRunner.folio(["coordinate", "read", drive + "/remote.txt", "--", "cat", drive + "/remote.txt"], environment: environment)
        #expect(failed.status == 75 && failed.stderr.contains("could not be downloaded") && failed.stdout.isEmpty, "\(failed.stdout)\(failed.stderr)")
        #expect(FileManager.default.fileExists(atPath: drive + "/remote.txt.folio-cloud") && !FileManager.default.fileExists(atPath: drive + "/remote.txt"))
        // A pass runs without the server (begun after the failed read, whose download waited for
        // any pass under way) and fails: the server's drive marker is gone, so it syncs nothing.
        let mark = daemon.logLength
        #expect(await eventually { daemon.log(after: mark).contains("drive sync failed") }, "no pass ran without the server: \(daemon.log(after: mark))")
        let failedPass = daemon.log(after: mark).split(separator: "\n").first { $0.contains("drive sync failed") } ?? ""
        #expect(failedPass.contains("nothing was synced or deleted"), "\(failedPass)")
        #expect(FileManager.default.fileExists(atPath: drive + "/remote.txt.folio-cloud") && FileManager.default.fileExists(atPath: notes), "a pass without the server changed the replica")
        try FileManager.default.moveItem(atPath: server + ".away", toPath: server)
        // …and once it is back, a coordinated read gets its content, downloaded before the reader runs.
        let read = try ProcessRunner.folio(["coordinate", "read", drive + "/remote.txt", "--", "cat", drive + "/remote.txt"], environment: environment)
        #expect(read.status == 0 && read.stdout == content, "\(read.stderr)\n\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: drive + "/remote.txt.folio-cloud"))
        let status = try ProcessRunner.folio(["drive", "status", drive + "/remote.txt"], environment: environment)
        #expect(status.stdout == "local\tremote.txt\n", "\(status.stdout)\(status.stderr)")

        // A package (a folder) that arrives as placeholders: a coordinated read of it downloads
        // everything inside before the reader runs.
        try FileManager.default.createDirectory(atPath: server + "/Trip.pages/Data", withIntermediateDirectories: true)
        try Data("index".utf8).write(to: URL(fileURLWithPath: server + "/Trip.pages/index.xml"))
        try Data("photo".utf8).write(to: URL(fileURLWithPath: server + "/Trip.pages/Data/photo.jpg"))
        #expect(await eventually { FileManager.default.fileExists(atPath: drive + "/Trip.pages/Data/photo.jpg.folio-cloud") }, "\(daemon.log)")
        let package = drive + "/Trip.pages"
        let whole = try ProcessRunner.folio(
            ["coordinate", "read", package, "--", "sh", "-c", "cat '\(package)/index.xml' '\(package)/Data/photo.jpg'"], environment: environment)
        #expect(whole.status == 0 && whole.stdout == "indexphoto", "\(whole.stdout)\(whole.stderr)")
        #expect(!FileManager.default.fileExists(atPath: package + "/index.xml.folio-cloud") && !FileManager.default.fileExists(atPath: package + "/Data/photo.jpg.folio-cloud"))
    }

    /// iCloud's app-side API: an app (`folio run --app`, `NSUbiquitousContainers` in its manifest)
    /// saves a Document in its ubiquity container without any grant, finds it with a query over the
    /// ubiquitous documents scope, sees it uploaded through its ubiquity values, evicts it, opens
    /// it again as a document (its coordinated read downloads it first), evicts
    /// it again and downloads it with `startDownloadingUbiquitousItem`; outside its container it
    /// may evict nothing.
    @Test func anAppUsesItsUbiquityContainerAsOnIOS() async throws {
        let (dir, environment, server, daemon) = try Self.driveOnFolder("drive-daemon-app", interval: 1)
        defer { daemon.stop() }
        let asApp = try NotesApp(dir, environment)
        let app = NotesApp.identifier
        let container = try #require(try asApp("container")["ubiquity"]?.stringValue)
        let drive = dir.child("data/folio/Drive").path
        #expect(container == drive + "/iCloud.\(app)")
        let note = container + "/Documents/note.txt"
        // Saved as an iOS app saves: a Document subclass, saved for creating, closed.
        #expect(try asApp("save-document", note, "a note in the cloud")["ok"] == true)
        #expect(await eventually { FileManager.default.contents(atPath: server + "/iCloud.\(app)/Documents/note.txt") == Data("a note in the cloud".utf8) }, "\(daemon.log)")
        #expect(await eventually { (try? asApp("ubiquity", note))?["uploaded"] == true }, "never shown uploaded")
        // Its query over the ubiquitous documents scope runs in the daemon, with the drive's states.
        let found = try asApp("query", "kMDItemFSName == 'note.txt'")
        #expect(found["results"] == .array([["path": .string(note), "uploaded": true]]), "\(found)")
        let values = try asApp("ubiquity", note)
        #expect(values["ubiquitous"] == true && values["isUbiquitousItem"] == true && values["uploading"] == false, "\(values)")
        #expect(values["status"]?.stringValue == "NSURLUbiquitousItemDownloadingStatusCurrent" && values["conflicts"] == false, "\(values)")

        // This drive's server (a folder) cannot make links: publishing is refused, saying why.
        let unpublished = try asApp("publish", note)
        #expect(unpublished["ok"] == false && unpublished["code"]?.intValue == Int64(CocoaError.Code.featureUnsupported.rawValue), "\(unpublished)")
        #expect(unpublished["message"]?.stringValue?.contains("cannot publish links") == true, "\(unpublished)")

        // Evicted: only the placeholder is here.
        #expect(try asApp("evict", note)["ok"] == true)
        #expect(!FileManager.default.fileExists(atPath: note) && FileManager.default.fileExists(atPath: note + ".folio-cloud"))
        #expect(try asApp("ubiquity", note)["status"]?.stringValue == "NSURLUbiquitousItemDownloadingStatusNotDownloaded")
        // Opened again as a document: its coordinated read gets the contents, downloaded first.
        #expect(try asApp("open-document", note)["text"]?.stringValue == "a note in the cloud")
        // Evicted again, then downloaded on request.
        #expect(try asApp("evict", note)["ok"] == true)
        let downloaded = try asApp("download", note)
        #expect(downloaded["downloaded"] == true, "\(downloaded)")
        #expect(FileManager.default.contents(atPath: note) == Data("a note in the cloud".utf8))

        // setUbiquitous: a document of the app's local container moves into its ubiquity
        // container (and is sent), then back out.
        let local = try #require(try asApp("container")["container"]?.stringValue) + "/Documents/draft.txt"
        #expect(try asApp("write", local, "a draft")["ok"] == true)
        let moved = container + "/Documents/draft.txt"
        #expect(try asApp("ubiquitous", local, moved, "true")["ok"] == true)
        #expect(FileManager.default.contents(atPath: moved) == Data("a draft".utf8) && !FileManager.default.fileExists(atPath: local))
        #expect(await eventually { FileManager.default.contents(atPath: server + "/iCloud.\(app)/Documents/draft.txt") == Data("a draft".utf8) }, "\(daemon.log)")
        let wrongSide = try asApp("ubiquitous", moved, container + "/Documents/elsewhere.txt", "false")
        #expect(wrongSide["ok"] == false && wrongSide["code"]?.intValue == Int64(CocoaError.Code.fileWriteInvalidFileName.rawValue), "\(wrongSide)")
        #expect(try asApp("ubiquitous", moved, local, "false")["ok"] == true)
        #expect(FileManager.default.contents(atPath: local) == Data("a draft".utf8) && !FileManager.default.fileExists(atPath: moved))
        #expect(await eventually { !FileManager.default.fileExists(atPath: server + "/iCloud.\(app)/Documents/draft.txt") }, "\(daemon.log)")

        // Outside its container (another file of the drive): no grant, no eviction.
        let other = drive + "/private.txt"
        try Data("the user's own".utf8).write(to: URL(fileURLWithPath: other))
        #expect(await eventually { FileManager.default.fileExists(atPath: server + "/private.txt") }, "\(daemon.log)")
        let refused = try asApp("evict", other)
        #expect(refused["ok"] == false && refused["code"]?.intValue == Int64(CocoaError.Code.fileWriteNoPermission.rawValue), "\(refused)")
        #expect(FileManager.default.fileExists(atPath: other))
        let outside = try dir.write("outside.txt", "not in the drive")
        #expect(try asApp("ubiquity", outside.path)["ubiquitous"] == false)
    }

    /// `url(forPublishingUbiquitousItemAt:expiration:)` on an S3 drive (moto): the app gets a
    /// presigned URL for a document in its container, valid for seven days, from which anyone
    /// downloads it without credentials; outside its container it gets none. `folio drive publish`
    /// makes one for the user, for as long as asked, and refuses a folder and a file whose changes
    /// the server lacks.
    @Test(.enabled(if: TestServer.shouldRun(.moto)))
    func anAppPublishesALinkToItsDocumentOnAnS3Drive() async throws {
        let server = try TestServer(.moto)
        let account = try #require(server.s3)
        let dir = try TemporaryDirectory("drive-daemon-publish")
        var environment = dir.xdgEnvironment()
        environment["FOLIO_DRIVE_INTERVAL"] = "1"
        environment["FOLIO_PASSWORD"] = account.secretKey
        let setup = try ProcessRunner.folio(
            ["drive", "setup", "--files", "stubs", "s3", server.baseURL.absoluteString, account.bucket + "/drive", "--user", account.accessKey], environment: environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        let daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"])
        defer { daemon.stop() }
        _ = try daemon.waitForListening()
        let asApp = try NotesApp(dir, environment)
        let container = try #require(try asApp("container")["ubiquity"]?.stringValue)
        let note = container + "/Documents/shared note.txt"
        #expect(try asApp("save-document", note, "a note to share")["ok"] == true)
        #expect(await eventually { (try? asApp("ubiquity", note))?["uploaded"] == true }, "never shown uploaded: \(daemon.log)")

        let published = try asApp("publish", note)
        let link = try #require(published["url"]?.stringValue.flatMap(URL.init(string:)), "\(published)")
        let expiration: Double
        switch published["expiration"] {
        case .double(let seconds)?: expiration = seconds
        case .int(let seconds)?: expiration = Double(seconds)
        default: throw TestFailure("no expiration: \(published)")
        }
        #expect(abs(expiration - Date().addingTimeInterval(7 * 24 * 3600).timeIntervalSince1970) < 120, "\(published)")
        let query = link.query ?? ""
        #expect(query.contains("X-Amz-Expires=604800") && query.contains("X-Amz-Signature=") && !link.absoluteString.contains(account.secretKey), "\(link)")
        // Fetched as anyone would: no credentials, only the link.
        let fetched = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-sS", "--fail", link.absoluteString])
        #expect(fetched.status == 0 && fetched.stdout == "a note to share", "\(fetched.stdout)\(fetched.stderr)")

        // Outside its container (another file of the drive): no grant, no link.
        let drive = dir.child("data/folio/Drive").path
        let other = drive + "/private.txt"
        try Data("the user's own".utf8).write(to: URL(fileURLWithPath: other))
        #expect(await eventually { (try? ProcessRunner.folio(["drive", "status", other], environment: environment))?.stdout.hasPrefix("local") == true }, "\(daemon.log)")
        let refused = try asApp("publish", other)
        #expect(refused["ok"] == false && refused["code"]?.intValue == Int64(CocoaError.Code.fileReadNoPermission.rawValue), "\(refused)")

        // The user's command: a link for as long as asked; none for a folder, nor for changes the
        // server does not have yet.
        let command = try ProcessRunner.folio(["drive", "publish", other, "--expires", "60"], environment: environment)
        #expect(command.status == 0 && command.stdout.contains("X-Amz-Expires=60&") && command.stderr.hasPrefix("expires: "), "\(command.stdout)\(command.stderr)")
        let own = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-sS", "--fail", command.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(own.stdout == "the user's own", "\(own.stdout)\(own.stderr)")
        let folder = try ProcessRunner.folio(["drive", "publish", container + "/Documents"], environment: environment)
        #expect(folder.status == 4 && folder.stderr.contains("only files can be published") && folder.stdout.isEmpty, "\(folder.stdout)\(folder.stderr)")
        // Stop the daemon's passes, so the edit stays unsent.
        daemon.stop()
        try Data("changed here".utf8).write(to: URL(fileURLWithPath: other))
        let unsent = try ProcessRunner.folio(["drive", "publish", other], environment: environment)
        #expect(unsent.status == 4 && unsent.stderr.contains("changes the server does not have yet") && unsent.stdout.isEmpty, "\(unsent.stdout)\(unsent.stderr)")
    }

    /// A presenter of a drive file hears its state with the server change
    /// (`presentedItemDidChangeUbiquityAttributes`): written here it is not uploaded; once a pass
    /// of the daemon's sent it, it is.
    @Test func presentersHearTheirItemsStateWithTheServer() async throws {
        let (dir, environment, server, daemon) = try Self.driveOnFolder("drive-daemon-ubiquity", interval: 1)
        defer { daemon.stop() }
        let drive = dir.child("data/folio/Drive").path
        let file = drive + "/watched.txt"
        try Data("first".utf8).write(to: URL(fileURLWithPath: file))
        #expect(await eventually { FileManager.default.contents(atPath: server + "/watched.txt") == Data("first".utf8) }, "\(daemon.log)")
        let uploaded = URLResourceKey(rawValue: "NSURLUbiquitousItemIsUploadedKey")
        let presenter = UbiquityPresenter(URL(fileURLWithPath: file), observing: [uploaded])
        let engine = try DaemonCoordinationEngine(socketPath: FolioPaths(environment: environment).socketPath, app: nil)
        FileCoordinator.addFilePresenter(presenter, engine: engine)
        defer { FileCoordinator.removeFilePresenter(presenter) }
        // A coordinated write: not uploaded (told), then uploaded by the next pass (told again).
        let wrote = try ProcessRunner.folio(["coordinate", "write", file, "--", "sh", "-c", "echo 'second' > '\(file)'"], environment: environment)
        #expect(wrote.status == 0, "\(wrote.stderr)")
        #expect(await eventually { FileManager.default.contents(atPath: server + "/watched.txt") == Data("second\n".utf8) }, "\(daemon.log)")
        #expect(await eventually { presenter.heard.count >= 2 }, "\(presenter.heard) \(daemon.log)")
        #expect(presenter.heard.allSatisfy { $0 == [uploaded] }, "only the observed key: \(presenter.heard)")
    }

    /// With a daemon running, `folio drive sync` asks it for the pass (`drive.sync`): the daemon
    /// runs it (and logs it as asked for) and the command prints its report; with none, the
    /// command runs the pass itself.
    @Test func driveSyncAsksTheRunningDaemon() async throws {
        // No pass of the daemon's own but the first: only the asked-for pass can send the file.
        let (dir, environment, server, daemon) = try Self.driveOnFolder("drive-daemon-request", interval: 3600)
        defer { daemon.stop() }
        // The first pass merges (so it is logged) and is over before the file is written.
        #expect(await eventually { daemon.log.contains("reason=start") }, "\(daemon.log)")
        let drive = dir.child("data/folio/Drive").path
        try Data("sent by the daemon".utf8).write(to: URL(fileURLWithPath: drive + "/asked.txt"))

        let asked = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(asked.status == 0 && asked.stdout == "uploaded 1, downloaded 0, deleted on the server 0, deleted here 0\n", "\(asked.stdout)\(asked.stderr)")
        #expect(FileManager.default.contents(atPath: server + "/asked.txt") == Data("sent by the daemon".utf8))
        // The pass was the daemon's: it logged it, as asked for, with the upload.
        let requested = { daemon.log.split(separator: "\n").filter { $0.contains("drive synced") && $0.contains("reason=request") } }
        #expect(await eventually { requested().count == 1 }, "\(daemon.log)")
        #expect(requested().first?.contains("uploaded=1") == true, "\(daemon.log)")

        // A stop is the command's error as before (exit status 3), said by the daemon.
        try FileManager.default.moveItem(atPath: server, toPath: server + ".away")
        let stopped = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(stopped.status == 3 && stopped.stderr.contains("nothing was synced"), "\(stopped.stdout)\(stopped.stderr)")
        #expect(await eventually { daemon.log.split(separator: "\n").contains { $0.contains("drive sync failed") && $0.contains("reason=request") } }, "\(daemon.log)")
        try FileManager.default.moveItem(atPath: server + ".away", toPath: server)

        // Without a daemon, the command runs the pass itself.
        daemon.stop()
        try Data("sent by the command".utf8).write(to: URL(fileURLWithPath: drive + "/alone.txt"))
        let alone = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(alone.status == 0 && alone.stdout == "uploaded 1, downloaded 0, deleted on the server 0, deleted here 0\n", "\(alone.stdout)\(alone.stderr)")
        #expect(FileManager.default.contents(atPath: server + "/alone.txt") == Data("sent by the command".utf8))
        #expect(requested().count == 1, "\(daemon.log)")
    }

    /// `folio drive setup` while the daemon runs: its next pass goes to the new server, with the
    /// checks a pass of the command's own makes (a server without the drive's marker stops the
    /// pass until `folio drive repair`), never to the old server it had made its drive for.
    @Test func aNewSetupTakesEffectWithoutARestart() async throws {
        let (dir, environment, first, daemon) = try Self.driveOnFolder("drive-daemon-setup", interval: 3600, server: "first")
        defer { daemon.stop() }
        let second = dir.child("second").path
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        #expect(await eventually { daemon.log.contains("reason=start") }, "\(daemon.log)")
        let drive = dir.child("data/folio/Drive").path
        try Data("one".utf8).write(to: URL(fileURLWithPath: drive + "/one.txt"))
        #expect(try ProcessRunner.folio(["drive", "sync"], environment: environment).status == 0)
        #expect(FileManager.default.contents(atPath: first + "/one.txt") == Data("one".utf8))

        #expect(try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "folder", second], environment: environment).status == 0)
        try Data("two".utf8).write(to: URL(fileURLWithPath: drive + "/two.txt"))
        let stopped = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(stopped.status == 3 && stopped.stderr.contains("marker"), "\(stopped.stdout)\(stopped.stderr)")
        #expect(!FileManager.default.fileExists(atPath: first + "/two.txt"), "the daemon synced with the server it was set up with before")
        #expect(daemon.log.contains("the drive's configuration changed"), "\(daemon.log)")

        #expect(try ProcessRunner.folio(["drive", "repair"], environment: environment).status == 0)
        let merged = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(merged.status == 0, "\(merged.stdout)\(merged.stderr)")
        #expect(FileManager.default.contents(atPath: second + "/one.txt") == Data("one".utf8))
        #expect(FileManager.default.contents(atPath: second + "/two.txt") == Data("two".utf8))
        #expect(!FileManager.default.fileExists(atPath: first + "/two.txt"))
    }

    /// The daemon killed (SIGKILL) while its pass uploads: the next daemon finishes the work, and
    /// the server ends with each file once, byte for byte; nothing is deleted anywhere.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func aDaemonKilledMidSyncLosesAndDuplicatesNothing() async throws {
        let (server, proxy, dir, environment) = try Self.driveOnApache("drive-daemon-killed")
        let drive = dir.child("data/folio/Drive").path
        let slow = Data((0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try slow.write(to: URL(fileURLWithPath: drive + "/slow.bin"))
        for index in 0..<6 { try Data("quick \(index)".utf8).write(to: URL(fileURLWithPath: drive + "/quick\(index).txt")) }
        proxy.add(.init(method: "PUT", pathContains: "slow.bin", action: .delay(120), times: 1))
        let first = try DaemonProcess(environment: environment)
        _ = try first.waitForListening()
        #expect(await eventually(60) { proxy.requests.contains { $0.hasPrefix("PUT /slow.bin") } }, "\(first.log)")
        try await Task.sleep(for: .milliseconds(300))
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        proxy.clearRules()
        let second = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"])
        defer { second.stop() }
        _ = try second.waitForListening()
        let expected = ["quick0.txt", "quick1.txt", "quick2.txt", "quick3.txt", "quick4.txt", "quick5.txt", "slow.bin"]
        #expect(await eventually(60) {
            ((try? FileManager.default.contentsOfDirectory(atPath: server.root!.path)) ?? []).filter { !$0.hasPrefix(".folio") }.sorted() == expected
                && FileManager.default.contents(atPath: server.root!.appendingPathComponent("slow.bin").path) == slow
        }, "\(second.log)")
        // The second daemon's passes sent what the first did not finish: slow.bin at least, and at
        // most every file.
        #expect(await eventually { (1...expected.count).contains(Self.uploads(in: second.log).reduce(0, +)) }, "\(second.log)")
        #expect(await eventually(30) { (try? ProcessRunner.folio(["drive", "status"], environment: environment).stdout.contains("0 waiting to upload")) == true })
        let settled = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(settled.stdout.hasPrefix("uploaded 0, downloaded 0, deleted on the server 0, deleted here 0"), "\(settled.stdout)\(settled.stderr)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: drive)).isSuperset(of: expected))
    }

    /// The index tells where each drive item stands with the server (Apple's ubiquitous-item keys,
    /// and Folio's pinned key), through the daemon's queries: uploaded, waiting to upload with the
    /// last error, pinned, and downloading while a coordinated read waits for its content.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func theIndexTellsEachItemsSyncState() async throws {
        let (server, proxy, dir, environment) = try Self.driveOnApache("drive-daemon-states")
        let drive = dir.child("data/folio/Drive").path
        try Data("sent".utf8).write(to: URL(fileURLWithPath: drive + "/sent.txt"))
        try Data("refused".utf8).write(to: URL(fileURLWithPath: drive + "/refused.txt"))
        let remote = String(repeating: "from the server ", count: 500)
        try Data(remote.utf8).write(to: server.root!.appendingPathComponent("remote.txt"))
        server.fixOwnership()
        proxy.add(.init(method: "PUT", pathContains: "refused.txt", action: .status(507)))
        let daemon = try DaemonProcess(environment: environment)
        defer { daemon.stop() }
        _ = try daemon.waitForListening()
        func found(_ predicate: String) -> Set<String> { Self.found(predicate, in: drive, environment) }
        #expect(await eventually(60) {
            found("NSMetadataUbiquitousItemIsUploadedKey == YES AND kMDItemFSName LIKE '*.txt'") == ["sent.txt", "remote.txt"]
        }, "\(daemon.log)")
        #expect(await eventually { found("NSMetadataUbiquitousItemIsUploadingKey == YES") == ["refused.txt"] })
        #expect(found("NSMetadataUbiquitousItemUploadingErrorKey LIKE '*507*'") == ["refused.txt"])
        #expect(found("NSMetadataUbiquitousItemDownloadingStatusKey == 'NSMetadataUbiquitousItemDownloadingStatusNotDownloaded'") == ["remote.txt"])
        #expect(found("FolioUbiquitousItemIsPinnedKey == YES").isEmpty)

        // Pinned by another process: the daemon's next pass tells the index.
        #expect(try ProcessRunner.folio(["drive", "pin", drive + "/sent.txt"], environment: environment).status == 0)
        #expect(await eventually { found("FolioUbiquitousItemIsPinnedKey == YES") == ["sent.txt"] })
        // Apple's "download requested" for what is kept downloaded; nothing is shared.
        #expect(found("NSMetadataUbiquitousItemDownloadRequestedKey == YES") == ["sent.txt"])
        #expect(found("NSMetadataUbiquitousItemIsSharedKey == YES").isEmpty && found("NSMetadataUbiquitousItemIsSharedKey == NO").contains("sent.txt"))

        // Downloading while a coordinated read waits for the content (held at the proxy).
        let gate = FaultProxy.Gate()
        proxy.add(.init(method: "GET", pathContains: "remote.txt", action: .hold(gate), times: 1))
        let reader = Task(executorPreference: ElasticPoolTrait.executor) {
            try ProcessRunner.folio(["coordinate", "read", drive + "/remote.txt", "--", "cat", drive + "/remote.txt"], environment: environment)
        }
        #expect(await eventually(60) { gate.held == 1 })
        #expect(await eventually { found("NSMetadataUbiquitousItemIsDownloadingKey == YES") == ["remote.txt"] })
        gate.open()
        let read = try await reader.value
        #expect(read.status == 0 && read.stdout == remote, "\(read.stderr)")
        #expect(await eventually { found("NSMetadataUbiquitousItemIsDownloadingKey == YES").isEmpty })

        // The refusal ends: uploaded, and its error gone; a live query hears it leave.
        let live = Process()
        live.executableURL = ProcessRunner.folioExecutable()
        live.arguments = ["query", "--live", "NSMetadataUbiquitousItemIsUploadingKey == YES", "--scope", drive]
        live.environment = environment
        let liveLog = dir.child("live.log")
        #expect(FileManager.default.createFile(atPath: liveLog.path, contents: nil))
        live.standardOutput = try FileHandle(forWritingTo: liveLog)
        live.standardError = FileHandle.nullDevice
        try live.run()
        defer { kill(live.processIdentifier, SIGKILL) }
        let heard = { (try? String(contentsOf: liveLog, encoding: .utf8)) ?? "" }
        #expect(await eventually { heard().contains(drive + "/refused.txt\n") }, "the live query did not gather: \(heard())")
        proxy.clearRules()
        #expect(await eventually(60) { heard().contains("- " + drive + "/refused.txt\n") }, "the live query did not hear it: \(heard())\n\(daemon.log)")
        #expect(found("NSMetadataUbiquitousItemIsUploadingKey == YES").isEmpty)
        #expect(found("NSMetadataUbiquitousItemIsUploadedKey == YES AND kMDItemFSName LIKE '*.txt'") == ["sent.txt", "remote.txt", "refused.txt"])
        #expect(found("NSMetadataUbiquitousItemUploadingErrorKey LIKE '*'").isEmpty)
    }

    /// What each pass the daemon logged ("drive synced", at the info level) uploaded, in order.
    static func uploads(in log: String) -> [Int] {
        log.split(separator: "\n").filter { $0.contains("drive synced") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("uploaded=") }.flatMap { Int($0.dropFirst("uploaded=".count)) }
        }
    }

    /// A drive set up on Apache through a fault proxy (its replica made, a pass every second): the
    /// server, the proxy, the XDG folders and their environment.
    /// A drive set up on a folder `server` (the local folder provider) under a fresh scratch folder,
    /// whose daemon passes every `interval` seconds and is started logging at the info level (each
    /// pass that did something is logged, "drive synced").
    /// Eviction asks the file's presenters in other processes first (Apple's
    /// `accommodatePresentedItemEviction`): a presenter that does not accommodate it keeps the
    /// file downloaded; an open document closes and lets it go.
    @Test func evictionAsksThePresentersFirst() async throws {
        let (dir, environment, server, daemon) = try Self.driveOnFolder("drive-daemon-evict", interval: 3600)
        defer { daemon.stop() }
        let drive = dir.child("data/folio/Drive").path
        let file = drive + "/kept.txt"
        let wrote = try ProcessRunner.folio(["coordinate", "write", file, "--", "sh", "-c", "echo 'kept here' > '\(file)'"], environment: environment)
        #expect(wrote.status == 0, "\(wrote.stderr)")
        #expect(try ProcessRunner.folio(["drive", "sync"], environment: environment).status == 0)
        #expect(FileManager.default.contents(atPath: server + "/kept.txt") == Data("kept here\n".utf8))

        // A plain presenter in another process: the eviction is refused, the file stays.
        let plain = try BackgroundProcess(ProcessRunner.builtExecutable("FolioAppHelper"), ["present", file], environment: environment)
        defer { plain.stop() }
        #expect(await eventually { plain.output.contains("\"presenting\"") }, "\(plain.output)")
        let refused = try ProcessRunner.folio(["drive", "evict", file], environment: environment)
        #expect(refused.status == 6 && refused.stderr.contains("did not let it go"), "\(refused.stdout) \(refused.stderr)")
        #expect(FileManager.default.fileExists(atPath: file) && !FileManager.default.fileExists(atPath: file + ".folio-cloud"))
        plain.stop()

        // An open document in another process closes, and the file becomes a placeholder.
        let document = try BackgroundProcess(ProcessRunner.builtExecutable("FolioAppHelper"), ["keep-open", file], environment: environment)
        defer { document.stop() }
        #expect(await eventually { document.output.contains("\"opened\"") }, "\(document.output)")
        let evicted = try ProcessRunner.folio(["drive", "evict", file], environment: environment)
        #expect(evicted.status == 0 && evicted.stdout.contains("evicted: kept.txt"), "\(evicted.stdout) \(evicted.stderr)")
        #expect(await eventually { document.output.contains("\"closed\":true") }, "\(document.output)")
        #expect(!FileManager.default.fileExists(atPath: file) && FileManager.default.fileExists(atPath: file + ".folio-cloud"))
    }

    private static func driveOnFolder(_ name: String, interval: Int, server: String = "server") throws -> (TemporaryDirectory, [String: String], String, DaemonProcess) {
        let dir = try TemporaryDirectory(name)
        var environment = dir.xdgEnvironment()
        environment["FOLIO_DRIVE_INTERVAL"] = "\(interval)"
        let folder = dir.child(server).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let setup = try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "folder", folder], environment: environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        let daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"])
        _ = try daemon.waitForListening()
        return (dir, environment, folder, daemon)
    }

    /// Progress as iOS shows it: a download under way, whoever asked for it, is downloading in
    /// the daemon's index with how far it is (`NSMetadataUbiquitousItemPercentDownloadedKey`), and
    /// 100 once here; `folio drive download` has the daemon download, and on a terminal draws its
    /// bar from the daemon's progress, as `folio drive sync` does for a pass.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func transfersShowHowFarTheyAreAndTheCommandsDrawBars() async throws {
        var (server, proxy, dir, environment) = try Self.driveOnApache("drive-daemon-progress")
        environment["FOLIO_DRIVE_INTERVAL"] = "3600"
        let drive = dir.child("data/folio/Drive").path
        let big = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try big.write(to: server.root!.appendingPathComponent("big.bin"))
        server.fixOwnership()
        let daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"])
        defer { daemon.stop() }
        _ = try daemon.waitForListening()
        func found(_ predicate: String) -> Set<String> { Self.found(predicate, in: drive, environment) }
        #expect(await eventually(60) { found("NSMetadataUbiquitousItemPercentDownloadedKey == 0 AND NSMetadataUbiquitousItemIsDownloadingKey == NO") == ["big.bin"] }, "\(daemon.log)")

        // Part way (the proxy holds the reply after 400,000 of its 1,000,000 bytes): downloading,
        // 40% in the index and on the command's bar.
        let gate = FaultProxy.Gate()
        proxy.add(.init(method: "GET", pathContains: "big.bin", action: .pauseReply(after: 400_000, gate), times: 1))
        let download = try OnTerminal(["drive", "download", drive + "/big.bin"], environment: environment, in: dir)
        #expect(await eventually(60) {
            found("NSMetadataUbiquitousItemIsDownloadingKey == YES AND NSMetadataUbiquitousItemPercentDownloadedKey == 40") == ["big.bin"]
        }, "\(daemon.log)")
        #expect(await eventually { download.output.contains("downloading [#########               ]  40%  0 of 1 items, 400 KB of 1 MB") }, "\(download.output)")
        gate.open()
        let downloaded = await download.exit()
        #expect(downloaded == 0 && download.output.contains("downloading [########################] 100%  1 of 1 items"), "\(download.output)")
        #expect(download.output.contains("downloaded: big.bin") && FileManager.default.contents(atPath: drive + "/big.bin") == big, "\(download.output)")
        #expect(await eventually { found("NSMetadataUbiquitousItemPercentDownloadedKey == 100 AND NSMetadataUbiquitousItemIsDownloadingKey == NO") == ["big.bin"] }, "\(daemon.log)")

        // A pass the command asks for: its bar counts the items while one upload is held.
        for index in 0..<20 { try Data("small \(index)".utf8).write(to: URL(fileURLWithPath: drive + "/small\(index).txt")) }
        let held = FaultProxy.Gate()
        proxy.add(.init(method: "PUT", pathContains: "small19.txt", action: .hold(held), times: 1))
        let sync = try OnTerminal(["drive", "sync"], environment: environment, in: dir)
        #expect(await eventually(60) { sync.output.contains("syncing [") && sync.output.contains(" of 20 items") }, "\(sync.output)")
        held.open()
        let synced = await sync.exit()
        #expect(synced == 0 && sync.output.contains("syncing [########################] 100%  20 of 20 items, 150 bytes of 150 bytes"), "\(sync.output)")
        #expect(sync.output.contains("uploaded 20, downloaded 0"), "\(sync.output)")
    }

    /// The names of the drive items the daemon's index finds for `predicate` in `drive`.
    static func found(_ predicate: String, in drive: String, _ environment: [String: String]) -> Set<String> {
        let output = try? ProcessRunner.folio(["query", predicate, "--scope", drive], environment: environment)
        return Set((output?.stdout ?? "").split(separator: "\n").map { ($0 as NSString).lastPathComponent })
    }

    private static func driveOnApache(_ name: String) throws -> (TestServer, FaultProxy, TemporaryDirectory, [String: String]) {
        let server = try TestServer(.apache)
        let proxy = try FaultProxy(upstreamPort: server.port)
        let dir = try TemporaryDirectory(name)
        var environment = dir.xdgEnvironment()
        environment["FOLIO_DRIVE_INTERVAL"] = "1"
        let setup = try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "webdav", proxy.baseURL.absoluteString], environment: environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        try FileManager.default.createDirectory(atPath: dir.child("data/folio/Drive").path, withIntermediateDirectories: true)
        return (server, proxy, dir, environment)
    }
}

/// The stand-in app `com.example.Notes` (its manifest lists the ubiquity container
/// `iCloud.com.example.Notes`), registered with the daemon of `environment`: called with the app
/// helper's arguments, it runs the helper as that app and returns its JSON line.
struct NotesApp {
    static let identifier = "com.example.Notes"
    let environment: [String: String]

    init(_ dir: TemporaryDirectory, _ environment: [String: String]) throws {
        self.environment = environment
        let manifest = try dir.write(
            "notes.json",
            """
            {"CFBundleIdentifier": "\(Self.identifier)", "CFBundleName": "Notes",
             "NSUbiquitousContainers": {"iCloud.\(Self.identifier)": {"NSUbiquitousContainerIsDocumentScopePublic": true, "NSUbiquitousContainerName": "Notes"}}}
            """)
        let registered = try ProcessRunner.folio(["app", "register", manifest.path], environment: environment)
        guard registered.status == 0 else { throw TestFailure("app register: \(registered.stderr)") }
    }

    func callAsFunction(_ arguments: String...) throws -> WireValue {
        let helper = ProcessRunner.builtExecutable("FolioAppHelper").path
        let output = try ProcessRunner.folio(["run", "--app", Self.identifier, "--", helper] + arguments, environment: environment)
        guard let line = output.stdout.split(separator: "\n").last, let value = try? WireValue(parsing: Array(line.utf8)) else {
            throw TestFailure("no JSON (status \(output.status)): \(output.stdout) \(output.stderr)")
        }
        return value
    }
}

/// A `folio` command run on a terminal (a pseudo-terminal of `script(1)`), whose output, as the
/// terminal shows it, is read while it runs.
final class OnTerminal: @unchecked Sendable {
    let process = Process()
    let typescript: String

    init(_ arguments: [String], environment: [String: String], in dir: TemporaryDirectory) throws {
        typescript = dir.child("terminal-\(UUID().uuidString).txt").path
        let command = ([ProcessRunner.folioExecutable().path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        // -f: each write reaches the file at once; -e: script's status is the command's.
        process.arguments = ["-qfec", command.joined(separator: " "), typescript]
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// What the terminal showed so far.
    var output: String { (try? String(contentsOfFile: typescript, encoding: .utf8)) ?? "" }

    /// Waits (on a thread of its own) for the command to end, two minutes at most (then it is
    /// stopped); its exit status.
    func exit() async -> Int32 {
        await withCheckedContinuation { (done: CheckedContinuation<Int32, Never>) in
            Thread { [process] in
                let deadline = Date().addingTimeInterval(120)
                while process.isRunning, Date() < deadline { usleep(20_000) }
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
                done.resume(returning: process.terminationStatus)
            }.start()
        }
    }
}

/// A presenter that records the ubiquity keys it is told changed.
final class UbiquityPresenter: FilePresenter, @unchecked Sendable {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    let observedPresentedItemUbiquityAttributes: Set<URLResourceKey>
    private let lock = NSLock()
    private var reports: [Set<URLResourceKey>] = []

    init(_ url: URL, observing: Set<URLResourceKey>) {
        presentedItemURL = url
        observedPresentedItemUbiquityAttributes = observing
    }

    /// Each report's keys, in order.
    var heard: [Set<URLResourceKey>] { lock.withLock { reports } }

    func presentedItemDidChangeUbiquityAttributes(_ attributes: Set<URLResourceKey>) {
        lock.withLock { reports.append(attributes) }
    }
}

import ArgumentParser
import Folio
import FolioProviders
import Foundation

/// `folio provider validate`: the provider conformance suite.
struct ProviderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provider", abstract: "Work with file providers.", subcommands: [Validate.self, Serve.self])

    /// `folio provider serve local <folder>`: a built-in provider over the provider protocol on
    /// standard input and output, as the daemon runs out-of-process providers.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Serve a built-in provider over the provider protocol on standard input and output.", shouldDisplay: false)

        @Argument(help: "The provider kind: local.") var kind: String
        @Argument(help: "The folder served.") var folder: String

        func run() async throws {
            guard kind == "local" else { throw ValidationError("unknown provider kind “\(kind)” (known: local)") }
            let provider = try LocalFolderProvider(root: folder)
            await FileProviderServer(provider: provider).run()
        }
    }

    /// `folio provider validate <folder>`.
    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "validate",
            abstract: "Run the conformance suite against a provider and print each case, then “N passed, N failed”.",
            discussion: """
                The suite works in a scratch folder it creates in the provider's root and deletes afterwards. \
                A folder validates the local folder provider over that folder; an http(s) URL the WebDAV provider \
                (with --user, and the password in $FOLIO_PASSWORD); s3://BUCKET[/PREFIX] the S3 provider (with \
                --endpoint and --region, the access key from --user or $AWS_ACCESS_KEY_ID and the secret from \
                $FOLIO_PASSWORD or $AWS_SECRET_ACCESS_KEY); an executable file is run as an out-of-process \
                provider (docs/provider-protocol.md), with the arguments after `--`.
                """)

        @Argument(help: "The provider: a folder (the local folder provider), a WebDAV URL, s3://BUCKET[/PREFIX], or a provider executable.")
        var provider: String
        @Option(help: "The WebDAV user or S3 access key (the secret comes from $FOLIO_PASSWORD, never the command line).") var user: String?
        @Option(help: "The S3 server (scheme, host and port).") var endpoint = "https://s3.amazonaws.com"
        @Option(help: "The S3 region.") var region = "us-east-1"
        @Argument(parsing: .postTerminator, help: "Arguments for a provider executable.") var providerArguments: [String] = []
        @Option(help: "The size of the large streamed file, in bytes or with K, M or G (e.g. 3G).") var largeSize = "64M"
        @Option(help: "How many files the paging case creates.") var pagingItems = 120
        @Option(help: "Run only cases whose names contain this text (repeatable).") var only: [String] = []
        @Flag(help: "List the cases and exit.") var list = false

        func run() async throws {
            if list {
                for name in ProviderValidation.caseNames { print(name) }
                return
            }
            guard let size = ByteCount.parse(largeSize) else {
                throw ValidationError("--large-size: “\(largeSize)” is not a size (examples: 4096, 64M, 3G)")
            }
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("folio-validate-\(getpid())")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let target: any FileProvider
            var isFolder: ObjCBool = false
            let environment = ProcessInfo.processInfo.environment
            if provider.hasPrefix("http://") || provider.hasPrefix("https://"), let url = URL(string: provider) {
                target = WebDAVProvider(baseURL: url, user: user, password: environment["FOLIO_PASSWORD"])
            } else if provider.hasPrefix("s3://") {
                let path = provider.dropFirst(5).split(separator: "/", maxSplits: 1).map(String.init)
                guard let bucket = path.first, !bucket.isEmpty, let server = URL(string: endpoint), server.host != nil else {
                    throw ValidationError("s3://BUCKET[/PREFIX] with --endpoint http(s)://HOST[:PORT]")
                }
                guard let key = user ?? environment["AWS_ACCESS_KEY_ID"], let secret = environment["FOLIO_PASSWORD"] ?? environment["AWS_SECRET_ACCESS_KEY"] else {
                    throw ValidationError("S3 needs an access key (--user or $AWS_ACCESS_KEY_ID) and a secret ($FOLIO_PASSWORD or $AWS_SECRET_ACCESS_KEY)")
                }
                target = S3Provider(endpoint: server, bucket: bucket, prefix: path.count > 1 ? path[1] : "", accessKey: key, secretKey: secret, region: region)
            } else if FileManager.default.fileExists(atPath: provider, isDirectory: &isFolder), !isFolder.boolValue {
                let domain = FileProviderDomain(identifier: FileProviderDomainIdentifier(rawValue: "validate"), displayName: provider)
                target = ProviderProcess(
                    executable: URL(fileURLWithPath: provider), arguments: providerArguments, domain: domain,
                    temporaryDirectory: scratch.appendingPathComponent("provider"))
            } else {
                do {
                    target = try LocalFolderProvider(root: provider)
                } catch {
                    printError("folio provider validate: \(error.localizedDescription)")
                    throw ExitCode(2)
                }
            }
            var options = ProviderValidation.Options()
            options.largeFileSize = size
            options.pagingItems = pagingItems
            options.only = only
            let outcomes = await ProviderValidation(provider: target, temporaryDirectory: scratch.appendingPathComponent("provider"), options: options).run { outcome in
                let time = outcome.duration.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow))
                if let failure = outcome.failure {
                    print("FAIL  \(outcome.name): \(failure) (\(time))")
                } else {
                    print("pass  \(outcome.name) (\(time))")
                }
            }
            let failed = outcomes.filter { !$0.passed }.count
            (target as? ProviderProcess)?.stop()
            print("\(outcomes.count - failed) passed, \(failed) failed")
            if failed > 0 { throw ExitCode.failure }
        }
    }
}

/// Sizes written as bytes or with a K, M or G suffix (powers of 1024).
enum ByteCount {
    static func parse(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.uppercased().last, let unit = units[last] {
            return Int64(text.dropLast()).map { $0 * unit }
        }
        return Int64(text).flatMap { $0 >= 0 ? $0 : nil }
    }
}

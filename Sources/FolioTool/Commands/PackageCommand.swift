import ArgumentParser
import FolioServers
import FolioSystem
import FolioVersion
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio package deb`: Debian's package of this build, laid out as `folio install` lays out a
/// user's install, under /usr.
struct PackageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "package", abstract: "Make a package of this build for a distribution.", subcommands: [Deb.self])

    /// `folio package deb [--output FOLDER]`.
    struct Deb: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "deb",
            abstract: "Make Debian's package of this build (folio_VERSION_ARCH.deb), to install system-wide with dpkg -i.",
            discussion: """
                The build must be a release one with the Swift runtime linked in, so that nothing points into \
                the toolchain: swift build -c release --static-swift-stdlib. The package puts folio in /usr/bin, \
                its tool and resources in /usr/lib/folio, man pages, completions for bash, zsh and fish, the menu \
                entry and systemd's user units (enable with systemctl --user enable --now folio.socket). Its \
                dependencies are read from the binaries with dpkg-shlibdeps; it is built with dpkg-deb.
                """)
        @Option(help: "The folder the package is written to.") var output = "."

        func run() throws {
            let package = try DebianPackage.make(output: URL(fileURLWithPath: output).standardizedFileURL.path)
            print(package)
        }
    }
}

/// Debian's package of the running build.
enum DebianPackage {
    /// The package's version: Folio's, and for a build from a git checkout, `+git` and its commit
    /// (`.dirty` for a work tree with changes).
    static var version: String {
        let commit = FolioVersion.commit
        guard !commit.isEmpty else { return FolioVersion.package }
        return FolioVersion.package + "+git" + (commit.hasSuffix("+") ? commit.dropLast() + ".dirty" : commit)
    }

    /// Who made the package: `$DEBFULLNAME <$DEBEMAIL>` as Debian's tools read them, else the
    /// project's name at a documentation domain.
    static var maintainer: String {
        let environment = ProcessInfo.processInfo.environment
        guard let email = environment["DEBEMAIL"], !email.isEmpty else { return "Folio developers <folio@example.org>" }
        return "\(environment["DEBFULLNAME"] ?? "Folio developers") <\(email)>"
    }

    /// Builds the package in `output`; returns its path.
    static func make(output: String) throws -> String {
        let (front, toolFolder) = try InstallLayout.runningBuild()
        // The Swift runtime must be linked in: a package whose binaries need the toolchain's
        // libraries runs only where that toolchain is.
        let maps = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? ""
        if maps.contains("libswiftCore.so") || !toolFolder.hasSuffix("/release") {
            throw InstallFailure("this build is not a release build with the Swift runtime linked in; build one: swift build -c release --static-swift-stdlib, then .build/release/folio package deb")
        }
        let staging = try TemporaryDirectory("folio-deb")
        // Removed when released: kept until the package is built, not only until its last use.
        defer { withExtendedLifetime(staging) {} }
        let root = staging.path + "/root"
        let layout = InstallLayout.system(prefix: "/usr")
        _ = try InstallLayout.place(try layout.entries(front: front, toolFolder: toolFolder), under: root)

        // Man pages and the changelog compressed as Debian's policy asks (gzip -9n); binaries
        // stripped of their symbols.
        let manuals = try FileManager.default.contentsOfDirectory(atPath: root + layout.manualFolder).map { root + layout.manualFolder + "/" + $0 }
        try run(["gzip", "-9n"] + manuals)
        try run(["strip", "--strip-unneeded", "--remove-section=.comment", "--remove-section=.note", root + layout.bin + "/folio", root + layout.library + "/folio-tool"])
        let documentation = root + "/usr/share/doc/folio"
        _ = try InstallLayout.place(
            [
                InstallLayout.Entry(path: "/usr/share/doc/folio/copyright", source: .text(copyright)),
                InstallLayout.Entry(path: "/usr/share/doc/folio/changelog", source: .text(changelog)),
                InstallLayout.Entry(path: "/usr/share/lintian/overrides/folio", source: .text(lintianOverrides)),
            ], under: root)
        try run(["gzip", "-9n", documentation + "/changelog"])

        let architecture = try run(["dpkg", "--print-architecture"]).trimmingCharacters(in: .whitespacesAndNewlines)
        // dpkg-shlibdeps reads debian/control in the folder it runs in.
        try FileManager.default.createDirectory(atPath: staging.path + "/debian", withIntermediateDirectories: true)
        try "Source: folio\n\nPackage: folio\nArchitecture: any\n".write(toFile: staging.path + "/debian/control", atomically: true, encoding: .utf8)
        let substitutions = try run(
            ["sh", "-c", "cd \"$1\" && shift && exec dpkg-shlibdeps -O \"$@\"", "shlibdeps", staging.path,
                "-e" + root + layout.bin + "/folio", "-e" + root + layout.library + "/folio-tool"])
        guard let line = substitutions.split(separator: "\n").first(where: { $0.hasPrefix("shlibs:Depends=") }) else {
            throw InstallFailure("dpkg-shlibdeps named no dependencies: \(substitutions)")
        }
        let depends = line.dropFirst("shlibs:Depends=".count)
        let size = try run(["du", "-sk", "--apparent-size", root]).split(separator: "\t").first.map(String.init) ?? "0"

        let control = """
            Package: folio
            Version: \(version)
            Architecture: \(architecture)
            Maintainer: \(maintainer)
            Installed-Size: \(size)
            Depends: \(depends)
            Recommends: shared-mime-info, bubblewrap, fuse3, xdg-utils
            Suggests: poppler-utils, unzip, libgdk-pixbuf2.0-bin, gnome-keyring, libsecret-tools
            Section: utils
            Priority: optional
            Description: Apple's document system for Linux
             Folio brings Apple's document APIs to Swift apps on Linux, with the same
             names and semantics: file coordination across processes, documents and
             versions, metadata queries and search, Uniform Type Identifiers,
             security-scoped bookmarks, the document picker and browser, file
             providers and a synced drive on WebDAV or S3 that every program reads on
             demand.
             .
             This package holds the folio command, the per-user daemon it runs, man
             pages, shell completions, a menu entry for the browser page and systemd
             user units for socket activation.

            """
        let debian = root + "/DEBIAN"
        _ = try InstallLayout.place([InstallLayout.Entry(path: "/DEBIAN/control", source: .text(control))], under: root)
        let sums = try run(["sh", "-c", "cd \"$1\" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum", "md5sums", root])
        try sums.write(toFile: debian + "/md5sums", atomically: true, encoding: .utf8)
        chmod(debian + "/md5sums", 0o644)

        let package = output + "/folio_\(version)_\(architecture).deb"
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", root, package])
        return package
    }

    /// The copyright file: Folio's, and what the binaries carry of other projects.
    static let copyright = """
        Folio: Apple's document system for Linux, in Swift.

        Copyright (C) 2026 the Folio developers.

        The binaries link in, each under its own license:
         - the Swift runtime, standard library, Foundation and Dispatch (Apache License 2.0 with
           the Runtime Library Exception), the Swift Project Authors;
         - swift-argument-parser, swift-log, swift-system, swift-nio, swift-crypto,
           swift-service-lifecycle, async-http-client and their dependencies (Apache License 2.0);
         - Hummingbird (Apache License 2.0), the Hummingbird authors;
         - GRDB.swift (MIT License), Gwendal Roué;
         - zlib 1.3 (the zlib License), Jean-loup Gailly and Mark Adler, compiled in by
           swift-nio-extras (CNIOExtrasZlib) with its symbols renamed, for async-http-client's
           decompression of replies.

        On Debian systems, the complete text of the Apache License 2.0 is in
        /usr/share/common-licenses/Apache-2.0.

        """

    /// What lintian is told to pass over, each with why. swift-nio-extras compiles its own copy of
    /// zlib in (CNIOExtrasZlib, its symbols renamed so that it cannot clash with the system's),
    /// and async-http-client links it for decompressing replies: a copy that cannot be swapped for
    /// Debian's libz without patching that package.
    static let lintianOverrides = """
        # zlib compiled in by swift-nio-extras (CNIOExtrasZlib, symbols renamed), which
        # async-http-client links for decompressing replies; not replaceable by Debian's libz
        # without patching that package.
        folio: embedded-library zlib [usr/lib/folio/folio-tool]

        """

    /// The package's changelog, as Debian's tools read it.
    static var changelog: String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let commit = FolioVersion.commit.isEmpty ? "" : " from commit \(FolioVersion.commit)"
        return """
            folio (\(version)) unstable; urgency=medium

              * Built\(commit).

             -- \(maintainer)  \(formatter.string(from: Date()))

            """
    }

    /// Runs a command found on PATH to its end within ten minutes; its standard output, or an
    /// error with its standard error.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        guard let executable = ExecutableSearch.locate(arguments[0]) else { throw InstallFailure("\(arguments[0]) is not installed (Debian: dpkg-dev, binutils)") }
        let folder = try TemporaryDirectory("folio-run")
        defer { withExtendedLifetime(folder) {} }
        let output = open(folder.path + "/out", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        let errors = open(folder.path + "/err", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer {
            close(output)
            close(errors)
        }
        guard let child = SpawnedProcess([executable] + arguments.dropFirst(), output: output, errors: errors) else {
            throw InstallFailure("cannot start \(executable)")
        }
        let status = child.wait(timeLimit: .seconds(600))
        let said = (try? String(contentsOfFile: folder.path + "/err", encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw InstallFailure("\(arguments.prefix(2).joined(separator: " ")) failed (\(status.map { "exit \($0)" } ?? "no end within 10 minutes")): \(said)")
        }
        return (try? String(contentsOfFile: folder.path + "/out", encoding: .utf8)) ?? ""
    }
}

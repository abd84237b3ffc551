import Folio
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// What a sandboxed app sees is an allow-list: the system's folders, its container, its executable
/// and the libraries that executable loads from its own folder, and each live grant — bound by the
/// descriptor the daemon checked, never by a path that may since lead elsewhere.
@Suite("Attacks: the sandbox's binds", .serialized, .elasticPool)
struct SandboxAllowListTests {
    typealias World = ProtocolAttackTests.World
    static let mallory = ProtocolAttackTests.mallory

    /// Whether bubblewrap can make a sandbox here (it needs user namespaces).
    static var bubblewrapRuns: Bool {
        guard let bwrap = ProcessRunner.which("bwrap") else { return false }
        return (try? ProcessRunner.run(URL(fileURLWithPath: bwrap), ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]).status) == 0
    }

    /// `folio run --sandbox` as the app, with the world's home.
    static func runSandboxed(_ world: World, _ command: [String]) throws -> ProcessRunner.Output {
        var environment = world.dir.xdgEnvironment()
        environment["HOME"] = world.dir.path
        return try ProcessRunner.folio(["run", "--app", mallory, "--sandbox", "--"] + command, environment: environment)
    }

    /// A tool folder with a reader script: prints the file it is given, or `absent: PATH`.
    static func makeReader(in world: World) throws -> (folder: String, reader: String) {
        let tools = world.dir.path + "/tools"
        try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
        let reader = tools + "/reader"
        try Data("#!/bin/sh\nfor f; do if [ -e \"$f\" ]; then cat \"$f\"; echo; else echo \"absent: $f\"; fi; done\n".utf8).write(to: URL(fileURLWithPath: reader))
        #expect(chmod(reader, 0o755) == 0)
        return (tools, reader)
    }

    /// Links named like libraries beside the executable lead nowhere in the sandbox: one to the
    /// home folder and one to Folio's keys (bubblewrap follows links, so binding them by name bound
    /// the whole home and the bookmark key).
    @Test func librariesBesideTheExecutableThatAreLinksOutBindNothing() throws {
        guard Self.bubblewrapRuns else { return print("skipped: bubblewrap cannot run here") }
        let world = try World("attack-so-links")
        let (tools, reader) = try Self.makeReader(in: world)
        let config = world.dir.xdgEnvironment()["XDG_CONFIG_HOME"]! + "/folio"
        #expect(FileManager.default.fileExists(atPath: config + "/bookmark.key") || (try? world.call(world.user, "bookmark.create", ["path": .string(world.secret)])) != nil)
        #expect(symlink("..", tools + "/libhome.so") == 0)
        #expect(symlink(config, tools + "/libkeys.so.1") == 0)
        let home = tools + "/libhome.so/Documents/diary.txt", key = tools + "/libkeys.so.1/bookmark.key"
        #expect(FileManager.default.fileExists(atPath: home) && FileManager.default.fileExists(atPath: key))
        let run = try Self.runSandboxed(world, [reader, home, key])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("absent: \(home)") && run.stdout.contains("absent: \(key)"), "\(run.stdout) \(run.stderr)")
        #expect(!run.stdout.contains("the user's words"), "\(run.stdout)")
    }

    /// An ELF program sees the library it needs from its own folder (through `RUNPATH=$ORIGIN`,
    /// by its soname link) and nothing else that is there.
    @Test func anELFProgramSeesTheLibrariesItNeedsAndNoOthers() throws {
        guard Self.bubblewrapRuns else { return print("skipped: bubblewrap cannot run here") }
        guard let cc = ProcessRunner.which("cc") else { return print("skipped: no C compiler") }
        let world = try World("attack-elf")
        let tools = world.dir.path + "/tools"
        try world.dir.write("tools/greet.c", "const char *greet(void) { return \"hello from the library\"; }\n")
        try world.dir.write(
            "tools/main.c",
            """
            #include <stdio.h>
            const char *greet(void);
            int main(int argc, char **argv) {
                puts(greet());
                for (int i = 1; i < argc; i++) { FILE *f = fopen(argv[i], "r"); printf("%s: %s\\n", argv[i], f ? "present" : "absent"); if (f) fclose(f); }
                return 0;
            }

            """)
        let compiles = [
            ["-shared", "-fPIC", "-Wl,-soname,libgreet.so.1", "-o", tools + "/libgreet.so.1.0", tools + "/greet.c"],
            ["-o", tools + "/app", tools + "/main.c", tools + "/libgreet.so.1.0", "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags"],
        ]
        for arguments in compiles {
            let built = try ProcessRunner.run(URL(fileURLWithPath: cc), arguments)
            try #require(built.status == 0, "\(built.stderr)")
        }
        #expect(symlink("libgreet.so.1.0", tools + "/libgreet.so.1") == 0)
        try FileManager.default.copyItem(atPath: tools + "/libgreet.so.1.0", toPath: tools + "/libextra.so")
        let secretLink = tools + "/libsecret.so"
        #expect(symlink(world.secret, secretLink) == 0)
        let run = try Self.runSandboxed(world, [tools + "/app", tools + "/libextra.so", tools + "/main.c", secretLink])
        #expect(run.stdout.contains("hello from the library"), "\(run.status) \(run.stdout) \(run.stderr)")
        for unneeded in [tools + "/libextra.so", tools + "/main.c", secretLink] {
            #expect(run.stdout.contains("\(unneeded): absent"), "\(run.stdout)")
        }
    }

    /// A system program runs by the name it was found at, not its link's target: a multi-call
    /// program (`sh -> dash`, `unxz -> xz`) acts by that name.
    @Test func aSystemProgramKeepsTheNameItWasFoundAt() throws {
        guard Self.bubblewrapRuns else { return print("skipped: bubblewrap cannot run here") }
        let world = try World("sandbox-argv0")
        let run = try Self.runSandboxed(world, ["/bin/sh", "-c", "tr '\\0' ' ' < /proc/$$/cmdline"])
        #expect(run.stdout.hasPrefix("/bin/sh -c"), "\(run.status) \(run.stdout) \(run.stderr)")
    }

    /// A grant is bound by the item the daemon checked, not by its path: after the granted file is
    /// deleted and a private one made at its name, the sandbox shows nothing there; a live grant
    /// stays readable and writable.
    @Test func aReplacedGrantPathIsNotBound() throws {
        guard Self.bubblewrapRuns else { return print("skipped: bubblewrap cannot run here") }
        let world = try World("attack-reused-path")
        let doc = try world.dir.write("reuse/doc.txt", "granted words").path
        let live = try world.dir.write("reuse/live.txt", "live words").path
        for path in [doc, live] {
            let granted = try world.call(world.user, "grant.add", ["app": .string(Self.mallory), "path": .string(path), "write": true])
            #expect(granted["result"] != nil, "\(granted)")
        }
        #expect(unlink(doc) == 0)
        try world.dir.write("reuse/doc.txt", "the user's new private words")
        let script = "for f; do if [ -e \"$f\" ]; then cat \"$f\"; echo; echo appended >> \"$f\"; else echo \"absent: $f\"; fi; done"
        let run = try Self.runSandboxed(world, ["/bin/sh", "-c", script, "sh", doc, live])
        #expect(!run.stdout.contains("private words") && run.stdout.contains("absent: \(doc)"), "\(run.stdout) \(run.stderr)")
        #expect(try String(contentsOfFile: doc, encoding: .utf8) == "the user's new private words")
        #expect(run.stdout.contains("live words"), "\(run.stdout) \(run.stderr)")
        #expect(try String(contentsOfFile: live, encoding: .utf8) == "live wordsappended\n")
    }

    /// A copy made with its attributes (`cp -a`) carries the original's identity attribute, but not
    /// its grant: the app's claims on the copy are refused, the sandbox does not show it, and the
    /// original stays granted.
    @Test func aGrantDoesNotFollowACopy() throws {
        guard Self.bubblewrapRuns else { return print("skipped: bubblewrap cannot run here") }
        let world = try World("attack-copy")
        let original = try world.dir.write("shared/granted.txt", "shared words").path
        let granted = try world.call(world.user, "grant.add", ["app": .string(Self.mallory), "path": .string(original), "write": true])
        #expect(granted["result"] != nil, "\(granted)")
        let copy = world.dir.path + "/shared/granted (copy).txt"
        let copied = try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", original, copy])
        #expect(copied.status == 0)
        #expect((try? FilePath(copy).extendedAttribute(named: "user.folio.id")) == (try? FilePath(original).extendedAttribute(named: "user.folio.id")))
        // The user writes into the copy, in place.
        try Data("the user's private words".utf8).write(to: URL(fileURLWithPath: copy))
        for access in ["read", "write"] {
            let claim = try world.call(world.app, "claim", ["purpose": "m", "items": [["path": .string(copy), "access": .string(access), "options": 0]]])
            #expect(claim["error"]?["code"]?.stringValue == "denied", "\(access): \(claim)")
            if claim["result"] != nil { world.notify(world.app, "release", ["claim": claim["id"] ?? .null]) }
        }
        let run = try Self.runSandboxed(world, ["/bin/sh", "-c", "cat \"$1\" 2>/dev/null || echo \"absent: $1\"", "sh", copy])
        #expect(!run.stdout.contains("private words"), "\(run.stdout) \(run.stderr)")
        let claim = try world.call(world.app, "claim", ["purpose": "m", "items": [["path": .string(original), "access": "write", "options": 0]]])
        #expect(claim["result"] != nil, "\(claim)")
        let grants = try world.call(world.user, "grant.list", ["app": .string(Self.mallory)])["result"]?["grants"]?.arrayValue ?? []
        #expect(grants.map { $0["path"]?.stringValue } == [original], "\(grants)")
    }
}

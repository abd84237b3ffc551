import Foundation
import PackagePlugin

/// Writes `BuildCommit.swift` for the target it is applied to: the git commit the package is built
/// from (`FolioVersion.commit`), with `+` when the work tree has changes, or an empty string when
/// the package is not a git checkout. It runs before every build, and rewrites the file only when
/// its text changes, so an unchanged commit compiles nothing again.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "Generated")
        let script = #"""
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2> /dev/null || true)
            if [ -n "$commit" ] && ! git -C "$1" diff --quiet HEAD -- 2> /dev/null; then commit="$commit+"; fi
            mkdir -p "$2"
            file="$2/BuildCommit.swift"
            text="extension FolioVersion { /** The commit built from. */ package static let commit = \"$commit\" }"
            [ -f "$file" ] && [ "$(cat "$file")" = "$text" ] || printf '%s\n' "$text" > "$file"
            """#
        return [
            .prebuildCommand(
                displayName: "Reading the commit Folio is built from",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "build-commit", context.package.directoryURL.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}

// `folio`: the front of the command. It starts in a few milliseconds because it links neither
// Foundation nor the daemon: `folio search` (the command people type while they wait) it answers
// itself over the daemon's socket; every other command, and any `search` it does not handle
// plainly (help, an option it does not know, an error from the daemon, no daemon), it hands to
// `folio-tool` beside it, which runs with the same arguments in the same process.
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "search", let search = SearchInvocation(arguments.dropFirst()) {
    switch search.perform() {
    case .answered(let lines, let nothingFound):
        for line in lines { print(line) }
        if nothingFound { ToolHandOff.printError("nothing found") }
        exit(0)
    case .failed(let message):
        ToolHandOff.printError("folio search: \(message)")
        exit(1)
    case .handOff:
        break
    }
}
ToolHandOff.execute()

#if canImport(Glibc)
import Glibc
#endif
import FolioWire

/// `folio search TEXT [--limit N] [-c|--content] [--json]`, when it is that plainly: the same
/// arguments `folio-tool`'s `SearchCommand` takes, the same request and the same output.
struct SearchInvocation {
    var text: String
    var limit = 50
    var content = false
    var json = false

    /// What became of the search.
    enum Outcome {
        /// The daemon answered: these lines for standard output (and "nothing found" for standard
        /// error when there were no items).
        case answered([String], nothingFound: Bool)
        /// The daemon was reached and then failed to answer.
        case failed(String)
        /// `folio-tool` does it: it explains what is wrong better than a front can.
        case handOff
    }

    /// Reads the arguments after `search`; nil for anything but the plain form (help, an unknown
    /// option, a missing or repeated value), which `folio-tool` then handles.
    init?(_ arguments: ArraySlice<String>) {
        var text: String?
        var limit: Int?
        var content = false
        var json = false
        var onlyText = false
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if onlyText || !argument.hasPrefix("-") || argument == "-" {
                guard text == nil else { return nil }
                text = argument
                continue
            }
            switch argument {
            case "--": onlyText = true
            case "-c", "--content":
                guard !content else { return nil }
                content = true
            case "--json":
                guard !json else { return nil }
                json = true
            case "--limit":
                guard limit == nil, let value = rest.popFirst().flatMap({ Int($0) }) else { return nil }
                limit = value
            case _ where argument.hasPrefix("--limit="):
                guard limit == nil, let value = Int(argument.dropFirst("--limit=".count)) else { return nil }
                limit = value
            default:
                return nil
            }
        }
        guard let text, !text.isEmpty else { return nil }
        self.text = text
        self.limit = limit ?? 50
        self.content = content
        self.json = json
    }

    /// The request frames: `hello`, then `search`, sent together.
    var frames: [UInt8] {
        var params: [String: WireValue] = ["text": .string(text), "limit": .int(Int64(limit))]
        if content { params["content"] = .bool(true) }
        let hello: WireValue = [
            "id": 1, "method": "hello",
            "params": ["protocol": .int(DaemonProtocol.version), "pid": .int(Int64(getpid())), "name": "folio search"],
        ]
        let search: WireValue = ["id": 2, "method": "search", "params": .object(params)]
        return hello.serialized() + [UInt8(ascii: "\n")] + search.serialized() + [UInt8(ascii: "\n")]
    }

    /// Asks the user's daemon. An app's process (`FOLIO_APP_ID`) and custom deadlines are
    /// `folio-tool`'s to handle, as is a daemon that is not there or refuses the request.
    func perform() -> Outcome {
        for variable in ["FOLIO_APP_ID", "FOLIO_CONNECT_TIMEOUT", "FOLIO_REQUEST_TIMEOUT"] where getenv(variable) != nil {
            return .handOff
        }
        let runtime = DaemonSocketPath.runtimeDirectory(getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }, uid: getuid())
        guard let socket = UnixSocketExchange(path: DaemonSocketPath.socket(inRuntimeDirectory: runtime)) else { return .handOff }
        defer { socket.close() }
        let replies: [WireValue]
        switch socket.exchange(frames, replies: 2) {
        case .replies(let frames): replies = frames
        case .refused: return .handOff
        case .failed(let message): return .failed(message)
        }
        guard replies[0]["id"] == 1, replies[0]["result"]?["protocol"] == .int(DaemonProtocol.version),
            replies[1]["id"] == 2, let items = replies[1]["result"]?["items"]?.arrayValue
        else { return .handOff }
        let lines = SearchListing.lines(items, json: json, marks: SearchListing.marks(terminal: isatty(STDOUT_FILENO) == 1))
        return .answered(lines, nothingFound: items.isEmpty && !json)
    }
}

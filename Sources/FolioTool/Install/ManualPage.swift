import ArgumentParser
import FolioVersion
import Foundation

/// A man page for `folio` or one of its commands, written for people: NAME, SYNOPSIS, DESCRIPTION,
/// OPTIONS, EXAMPLES, FILES, ENVIRONMENT, EXIT STATUS and SEE ALSO. What each command takes comes
/// from ArgumentParser's own description of it (the `--experimental-dump-help` JSON); its examples,
/// exit statuses and variables from `ManualNotes`, written by hand.
struct ManualPage {
    /// `folio-drive-sync.1`.
    var fileName: String
    /// The page in roff.
    var roff: String

    /// A page for `folio` and for each command `folio --help` shows, below it too.
    static func all() -> [ManualPage] {
        guard let data = FolioCommand._dumpHelp().data(using: .utf8),
            let tool = try? JSONDecoder().decode(ToolDescription.self, from: data)
        else { return [] }
        var pages: [ManualPage] = []
        func visit(_ command: CommandDescription, names: [String], parent: CommandDescription?) {
            guard isShown(command, depth: names.count) else { return }
            pages.append(page(command, names: names, parent: parent))
            for child in command.subcommands ?? [] { visit(child, names: names + [child.commandName], parent: command) }
        }
        visit(tool.command, names: [tool.command.commandName], parent: nil)
        return pages
    }

    /// Whether `command`, `depth` words deep, has a page: the commands `--help` shows, but for
    /// ArgumentParser's own `help` command (every page is its help).
    static func isShown(_ command: CommandDescription, depth: Int) -> Bool {
        (command.shouldDisplay ?? true) && !(depth == 2 && command.commandName == "help")
    }

    /// The page of `command`, named by `names` (`["folio", "drive", "sync"]`).
    static func page(_ command: CommandDescription, names: [String], parent: CommandDescription?) -> ManualPage {
        let title = names.joined(separator: "-")
        let notes = ManualNotes.notes[names.dropFirst().joined(separator: " ")] ?? ManualNotes.Notes()
        // `--version` is the top command's (ArgumentParser lists it on every command).
        let arguments = (command.arguments ?? []).filter { $0.shouldDisplay && (names.count == 1 || !$0.isVersion) }
        let children = (command.subcommands ?? []).filter { isShown($0, depth: names.count + 1) }
        var roff = ".TH \(title.uppercased()) 1 \"\" \"Folio \(FolioVersion.package)\" \"Folio Manual\"\n"
        roff += ".SH NAME\n\(title) \\- \(text(sentence(command.abstract ?? "")))\n"

        roff += ".SH SYNOPSIS\n"
        let invocation = names.map { "\\fB\($0)\\fR" }.joined(separator: " ")
        if !children.isEmpty {
            let optional = command.defaultSubcommand != nil
            roff += ".nf\n\(invocation) \(optional ? "[" : "")\\fIcommand\\fR\(optional ? "]" : "") [\\fIarguments\\fR]\n"
            roff += "\(invocation) \\fB\\-\\-help\\fR\n.fi\n"
        } else {
            roff += ".nf\n\(invocation) \(arguments.filter { !$0.isHelpOrVersion }.map(synopsis).joined(separator: " "))\n.fi\n"
        }

        roff += ".SH DESCRIPTION\n" + paragraphs(sentence(command.abstract ?? ""))
        if let discussion = command.discussion, !discussion.isEmpty { roff += paragraphs(discussion) }
        if let extra = notes.description { roff += paragraphs(extra) }
        if !children.isEmpty {
            roff += ".PP\nCommands (each has a page of its own):\n"
            for child in children {
                let isDefault = command.defaultSubcommand == child.commandName
                roff += ".TP\n\\fB\(child.commandName)\\fR\(isDefault ? " (the default)" : "")\n\(text(sentence(child.abstract ?? "")))"
                roff += " See \\fB\(title)\\-\(child.commandName)\\fR(1).\n"
            }
        }

        if !arguments.isEmpty {
            roff += ".SH OPTIONS\n"
            for argument in arguments {
                roff += ".TP\n\(label(argument))\n"
                var help = sentence(argument.abstract ?? "")
                if let discussion = argument.discussion, !discussion.isEmpty { help += " " + sentence(discussion) }
                if let values = argument.allValues, !values.isEmpty, argument.kind != "flag" {
                    help += " One of: " + values.joined(separator: ", ") + "."
                }
                if let value = argument.defaultValue, !value.isEmpty, argument.kind != "flag" { help += " Default: \(value)." }
                roff += text(help) + "\n"
            }
        }

        roff += ".SH EXAMPLES\n"
        let examples = notes.examples.isEmpty ? ManualNotes.fallbackExamples(names: names, children: children.map(\.commandName)) : notes.examples
        for example in examples {
            roff += ".PP\n\(text(sentence(example.what)))\n.PP\n.RS 4\n.nf\n\(code(example.command))\n.fi\n.RE\n"
        }

        roff += ".SH FILES\n"
        for (path, what) in ManualNotes.files + notes.files {
            roff += ".TP\n\(code(path))\n\(text(what))\n"
        }

        roff += ".SH ENVIRONMENT\n"
        for (name, what) in notes.environment + ManualNotes.environment {
            roff += ".TP\n\\fB\(text(name))\\fR\n\(text(what))\n"
        }

        roff += ".SH EXIT STATUS\n"
        let statuses = [(0, "Success.")] + notes.exitStatus + [
            (1, "A failure, said on standard error (no daemon answered, a file could not be read, a request was refused)."),
            (64, "The command line was not understood (an unknown option, a missing argument); the usage is printed."),
        ]
        for (status, what) in statuses.sorted(by: { $0.0 < $1.0 }) {
            roff += ".TP\n\\fB\(status)\\fR\n\(text(what))\n"
        }

        roff += ".SH SEE ALSO\n"
        var related: [String] = []
        if names.count > 1 { related.append(names.dropLast().joined(separator: "-")) }
        related += children.map { title + "-" + $0.commandName }
        if names.count > 1, let parent {
            related += (parent.subcommands ?? []).filter { isShown($0, depth: names.count) && $0.commandName != command.commandName }
                .map { names.dropLast().joined(separator: "-") + "-" + $0.commandName }
        }
        related += notes.seeAlso
        var seen = Set<String>()
        roff += related.filter { seen.insert($0).inserted }.map { "\\fB\(text($0))\\fR(1)" }.joined(separator: ", ") + "\n"
        return ManualPage(fileName: title + ".1", roff: roff)
    }

    /// An argument as the synopsis shows it: `[\fB--user\fR \fIuser\fR]`, `\fIpaths\fR...`.
    static func synopsis(_ argument: ArgumentDescription) -> String {
        var shown: String
        switch argument.kind {
        case "positional":
            shown = "\\fI\(text(argument.valueName ?? "value"))\\fR"
        case "flag":
            shown = "\\fB\(text(argument.preferredName?.dashed ?? ""))\\fR"
        default:
            shown = "\\fB\(text(argument.preferredName?.dashed ?? ""))\\fR \\fI\(text(argument.valueName ?? "value"))\\fR"
        }
        if argument.isRepeating { shown += "\\&..." }
        return argument.isOptional ? "[\(shown)]" : shown
    }

    /// An argument's label in OPTIONS: `\fB-h\fR, \fB--help\fR`, `\fB--user\fR \fIuser\fR`.
    static func label(_ argument: ArgumentDescription) -> String {
        if argument.kind == "positional" { return "\\fI\(text(argument.valueName ?? "value"))\\fR" + (argument.isRepeating ? "\\&..." : "") }
        let names = (argument.names ?? []).map { "\\fB\(text($0.dashed))\\fR" }.joined(separator: ", ")
        return argument.kind == "flag" ? names : names + " \\fI\(text(argument.valueName ?? "value"))\\fR"
    }

    /// Paragraphs of prose (blank lines between them), each after `.PP`.
    static func paragraphs(_ prose: String) -> String {
        prose.components(separatedBy: "\n\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            .map { ".PP\n" + text($0.replacingOccurrences(of: "\n", with: " ")) + "\n" }.joined()
    }

    /// `text` with a full stop at its end.
    static func sentence(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let last = trimmed.last, !".!?:".contains(last) else { return trimmed }
        return trimmed + "."
    }

    /// Prose for roff: backslashes and hyphens escaped, a line never starting as a request.
    static func text(_ prose: String) -> String {
        let escaped = prose.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        return escaped.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : String($0) }.joined(separator: "\n")
    }

    /// A command line in bold, as typed.
    static func code(_ line: String) -> String {
        text(line).split(separator: "\n", omittingEmptySubsequences: false).map { "\\fB\($0)\\fR" }.joined(separator: "\n")
    }
}

/// The parts of ArgumentParser's description of a command (`ToolInfoV0`) that the pages use.
struct ToolDescription: Decodable {
    var command: CommandDescription
}

/// A command in ArgumentParser's description.
struct CommandDescription: Decodable {
    var commandName: String
    var shouldDisplay: Bool?
    var abstract: String?
    var discussion: String?
    var defaultSubcommand: String?
    var subcommands: [CommandDescription]?
    var arguments: [ArgumentDescription]?
}

/// An argument, option or flag in ArgumentParser's description.
struct ArgumentDescription: Decodable {
    struct Name: Decodable {
        var kind: String
        var name: String
        /// `--user`, `-h`.
        var dashed: String { (kind == "long" ? "--" : "-") + name }
    }
    var kind: String
    var shouldDisplay: Bool
    var isOptional: Bool
    var isRepeating: Bool
    var names: [Name]?
    var preferredName: Name?
    var valueName: String?
    var defaultValue: String?
    var allValues: [String]?
    var abstract: String?
    var discussion: String?

    var isVersion: Bool { (names ?? []).contains { $0.name == "version" } }
    var isHelpOrVersion: Bool { (names ?? []).contains { $0.name == "help" || $0.name == "version" } }
}

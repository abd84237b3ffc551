import ArgumentParser

@main
struct FolioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "folio")
}

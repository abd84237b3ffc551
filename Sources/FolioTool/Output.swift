import Foundation

/// Writes a JSON value to standard output, keys sorted, one document per call.
func printJSON(_ value: Any) {
    let data = (try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("null".utf8)
    print(String(decoding: data, as: UTF8.self))
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes rows under a header, each column as wide as its widest cell (the last one as it is),
/// two spaces apart: what a person reads; scripts take `--json`.
func printTable(_ header: [String], _ rows: [[String]]) {
    var widths = header.map(\.count)
    for row in rows {
        for (column, cell) in row.enumerated() where column < widths.count { widths[column] = max(widths[column], cell.count) }
    }
    for row in [header] + rows {
        let cells = row.enumerated().map { column, cell in
            column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
        }
        print(cells.joined(separator: "  "))
    }
}

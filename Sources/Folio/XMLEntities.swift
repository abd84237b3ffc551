import FolioSystem

/// XML character data with its references decoded, for the project's own small XML readers
/// (GTK's recently-used list, WebDAV replies): the five predefined entities and numeric character
/// references only, since no reader here accepts a DTD that could declare more.
package enum XMLEntities {
    /// Why a text was refused, and where in it.
    package struct Failure: Error {
        /// What was wrong.
        package var reason: String
        /// The byte offset within the text.
        package var offset: Int
    }

    /// `raw` with `&amp;` `&lt;` `&gt;` `&quot;` `&apos;` `&#N;` `&#xN;` decoded; it must be UTF-8.
    package static func decode(_ raw: ArraySlice<UInt8>) throws(Failure) -> String {
        guard raw.contains(UInt8(ascii: "&")) else {
            guard let text = String(validUTF8: raw) else { throw Failure(reason: "text that is not UTF-8", offset: 0) }
            return text
        }
        var output: [UInt8] = []
        output.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            let byte = raw[index]
            guard byte == UInt8(ascii: "&") else {
                output.append(byte)
                index += 1
                continue
            }
            guard let semicolon = raw[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw Failure(reason: "an unterminated entity", offset: index - raw.startIndex)
            }
            let entity = String(decoding: raw[(index + 1)..<semicolon], as: UTF8.self)
            switch entity {
            case "amp": output.append(UInt8(ascii: "&"))
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            default:
                let number: UInt32? =
                    entity.hasPrefix("#x") || entity.hasPrefix("#X")
                    ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst(), radix: 10) : nil
                guard let number, number != 0, let scalar = Unicode.Scalar(number) else {
                    throw Failure(reason: "an unknown entity &\(entity.prefix(10));", offset: index - raw.startIndex)
                }
                output.append(contentsOf: Array(String(Character(scalar)).utf8))
            }
            index = semicolon + 1
        }
        guard let text = String(validUTF8: output) else { throw Failure(reason: "text that is not UTF-8", offset: 0) }
        return text
    }

    /// `text` with XML's five special characters escaped, for element text and attribute values.
    package static func encode(_ text: String) -> String {
        guard text.contains(where: { "&<>\"'".contains($0) }) else { return text }
        var output = ""
        output.reserveCapacity(text.utf8.count + 16)
        for character in text {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&apos;"
            default: output.append(character)
            }
        }
        return output
    }
}

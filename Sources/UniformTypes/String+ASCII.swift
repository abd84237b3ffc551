extension String {
    /// Lowercases the way identifiers, extensions and MIME types compare: without allocating when the
    /// string holds no uppercase ASCII letter (nearly always), by Unicode rules when it is not ASCII.
    func asciiLowercased() -> String {
        let verdict = utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            var needsWork = false
            for byte in bytes {
                if byte >= 0x80 { return nil }
                needsWork = needsWork || (byte &- UInt8(ascii: "A") < 26)
            }
            return needsWork
        }
        if case .some(.some(false)) = verdict { return self }
        return lowercased()
    }
}

/// Entry points for the fuzz targets in `Fuzz/` (not API): they reach the wire decoders, which are
/// internal to the package.
@_spi(Fuzzing)
public enum WireFuzzing {
    /// Decodes `bytes` as a daemon event; whatever parses must serialize and parse back to the same
    /// value. Traps only on a real defect. (Client frames are the daemon's: `DaemonFuzzing`.)
    public static func exercise(_ bytes: [UInt8]) {
        guard let value = try? WireValue(parsing: bytes) else { return }
        _ = try? CoordinationWire.presenterEvent(value)
        let again = try? WireValue(parsing: value.serialized())
        precondition(again == value, "a parsed frame did not survive serialization")
    }

    /// Decodes `bytes` as a provider-protocol reply (docs/provider-protocol.md): items, pages,
    /// anchors, versions and errors are refused or read, and an item read survives encoding again.
    public static func exerciseProviderFrame(_ bytes: [UInt8]) {
        guard let value = try? WireValue(parsing: bytes) else { return }
        let result = value["result"] ?? value
        if let item = try? ProviderWire.item(result["item"]) {
            let again = try? ProviderWire.item(ProviderWire.encode(item))
            precondition(again == item, "an item read did not survive encoding")
        }
        _ = try? ProviderWire.items(result["items"], "items")
        _ = try? ProviderWire.items(result["updated"], "updated")
        _ = try? ProviderWire.page(result["nextPage"])
        _ = try? ProviderWire.anchor(result["anchor"])
        _ = try? ProviderWire.version(result["version"], "version")
        _ = ProviderWire.error(value["error"], context: "fuzz")
    }
}

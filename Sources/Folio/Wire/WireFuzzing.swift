/// Entry points for the fuzz targets in `Fuzz/` (not API): they reach the wire decoders, which are
/// internal to the package.
@_spi(Fuzzing)
public enum WireFuzzing {
    /// Decodes `bytes` as a client frame and as a daemon event; whatever parses must serialize and
    /// parse back to the same value. Traps only on a real defect.
    public static func exercise(_ bytes: [UInt8]) {
        _ = try? ClientFrame(decoding: bytes)
        guard let value = try? WireValue(parsing: bytes) else { return }
        _ = try? CoordinationWire.presenterEvent(value)
        _ = try? CoordinationWire.answer(params: value["params"])
        let again = try? WireValue(parsing: value.serialized())
        precondition(again == value, "a parsed frame did not survive serialization")
    }
}

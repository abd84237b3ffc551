import Foundation

#if !canImport(Darwin)
/// Entry points for the fuzz targets in `Fuzz/` (not API): a file wrapper's serialized bytes, as a
/// pasteboard or a drag hands them over.
@_spi(Fuzzing)
public enum FileWrapperFuzzing {
    /// Reads `bytes` as `FileWrapper.serializedRepresentation`: refused, or a wrapper whose own
    /// serialization reads back to the same bytes; never a trap.
    public static func exercise(_ bytes: [UInt8]) {
        guard let wrapper = FileWrapper(serializedRepresentation: Data(bytes)) else { return }
        let again = wrapper.serializedRepresentation
        precondition(again != nil && FileWrapper(serializedRepresentation: again!)?.serializedRepresentation == again)
    }
}
#endif

import Foundation
import Testing
@testable import UniformTypes
import FolioTestTraits

/// Seeded mutation runs over the parsers of untrusted bytes, in every CI run. The libFuzzer targets in
/// Fuzz/ (scripts/fuzz) explore further by hand.
@Suite("Parser robustness", .elasticPool)
struct ParserRobustnessTests {
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func mutate(_ input: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...8, using: &rng) {
            guard !bytes.isEmpty else { break }
            let i = Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: bytes[i] = UInt8.random(in: 0...255, using: &rng)
            case 1: bytes.remove(at: i)
            case 2: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: i)
            default: bytes.removeSubrange(i..<min(bytes.count, i + Int.random(in: 1...16, using: &rng)))
            }
        }
        return bytes
    }

    @Test func mutatedManifestsParseOrFailCleanly() throws {
        var rng = SeededGenerator(state: 0xF011_0001)
        let seeds = [Array(particlesInfoPlist.utf8), Array(#"{"CFBundleIdentifier":"a.b","UTExportedTypeDeclarations":[{"UTTypeIdentifier":"a.b.c","UTTypeConformsTo":["public.data"]}]}"#.utf8)]
        let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
        var accepted = 0, refused = 0
        for round in 0..<1500 {
            let input = Self.mutate(seeds[round % seeds.count], &rng)
            do {
                let manifest = try AppManifest(data: Data(input))
                accepted += 1
                try? registry.register(manifest)
            } catch {
                refused += 1
                #expect(!error.message.isEmpty)
            }
        }
        #expect(accepted + refused == 1500)
        #expect(refused > 0)
        #expect(registry.type(tag: "jpg", tagClass: .filenameExtension) == .jpeg)
    }

    @Test func mutatedMagicParsesOrFailsCleanly() throws {
        guard let seed = SharedMimeInfo.readFile("/usr/share/mime/magic").map({ Array($0.prefix(4000)) }) else { return }
        var rng = SeededGenerator(state: 0xF011_0002)
        var refused = 0
        for _ in 0..<800 {
            let input = Self.mutate(seed, &rng)
            if let magic = try? MimeMagic(bytes: input) {
                _ = magic.match(Array(input.prefix(256)))
            } else {
                refused += 1
            }
        }
        #expect(refused > 0)
    }

    @Test func randomDynamicIdentifiersNeverTrap() {
        var rng = SeededGenerator(state: 0xF011_0003)
        let alphabet = Array("abcdefghkmnpqrstuvwxyz0123456789.!?".utf8)
        for _ in 0..<5000 {
            let length = Int.random(in: 0...40, using: &rng)
            let body = (0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] }
            let identifier = "dyn.a" + String(decoding: body, as: UTF8.self)
            if let type = UTType(identifier) {
                #expect(type.isDynamic)
                #expect(!type.tags.isEmpty)
            }
        }
    }
}

import Crypto
import Folio
import Foundation

extension ProviderValidation {
    /// Sizes at the edges, a large streamed file, cancellation.
    static let contentCases: [Case] = [
        Case(name: "boundary sizes round trip byte for byte (0, 1, 4095, 4096, 4097 B, 1 MiB + 1)") { context in
            var versions: Set<Data> = []
            for (index, size) in [0, 1, 4095, 4096, 4097, (1 << 20) + 1].enumerated() {
                let data = pattern(size, seed: UInt8(index))
                let file = try await context.makeFile("size-\(size).bin", data)
                try expect(file.size == Int64(size), "the \(size) B file's size is \(file.size.map(String.init) ?? "unknown")")
                let back = try await context.content(of: file.itemIdentifier)
                try expect(back == data, "the \(size) B file read back as \(back.count) B with other bytes")
                try expect(versions.insert(file.itemVersion.contentVersion).inserted, "two different contents share a content version")
            }
        },
        Case(name: "a large file streams both ways") { context in
            let size = context.options.largeFileSize
            let source = context.temporaryDirectory.appendingPathComponent("large-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: source) }
            let written = try LargeFile.write(size: size, to: source)
            let file = try await context.makeFile("large.bin", from: source)
            try expect(file.size == size, "the large file's size is \(file.size.map(String.init) ?? "unknown"), not \(size)")
            let progress = Progress(totalUnitCount: 0)
            let (url, _) = try await context.provider.fetchContents(for: file.itemIdentifier, version: nil, request: context.request, progress: progress)
            defer { try? FileManager.default.removeItem(at: url) }
            let read = try LargeFile.digest(of: url)
            try expect(read == written, "the large file read back with other bytes")
            try expect(progress.completedUnitCount == size || progress.fractionCompleted >= 1, "progress ended at \(progress.completedUnitCount) of \(size)")
        },
        Case(name: "a cancelled fetch stops and leaves no file") { context in
            let file = try await context.makeFile("cancelled.bin", pattern(4 << 20))
            let before = Set(try FileManager.default.contentsOfDirectory(atPath: context.temporaryDirectory.path))
            let task = Task {
                // Begins only once cancelled (a task may start before `cancel()` is called).
                while !Task.isCancelled { await Task.yield() }
                return try await context.provider.fetchContents(for: file.itemIdentifier, version: nil, request: context.request, progress: Progress(totalUnitCount: 0))
            }
            task.cancel()
            do {
                let (url, _) = try await task.value
                try? FileManager.default.removeItem(at: url)
                throw ValidationFailure(message: "a fetch cancelled before it began completed")
            } catch is CancellationError {
            } catch let error as CocoaError where error.code == .userCancelled {
            }
            let after = Set(try FileManager.default.contentsOfDirectory(atPath: context.temporaryDirectory.path))
            try expect(after.subtracting(before).isEmpty, "a cancelled fetch left \(after.subtracting(before).sorted())")
        },
        Case(name: "a fetch of an outdated version is refused") { context in
            let file = try await context.makeFile("versioned.txt", Data("v1".utf8))
            _ = try await context.write(Data("v2 longer".utf8), to: file, base: file.itemVersion)
            try await context.expectError(.versionNoLongerAvailable, "fetching the first version") {
                try await context.provider.fetchContents(for: file.itemIdentifier, version: file.itemVersion, request: context.request, progress: Progress(totalUnitCount: 0))
            }
        },
    ]
}

/// A large file of known bytes, written and hashed a chunk at a time.
enum LargeFile {
    static func write(size: Int64, to url: URL) throws -> Data {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        var chunk = pattern(1 << 20, seed: 9)
        var written: Int64 = 0
        var round: UInt8 = 0
        while written < size {
            let part = chunk.prefix(Int(min(Int64(chunk.count), size - written)))
            hasher.update(data: part)
            try handle.write(contentsOf: part)
            written += Int64(part.count)
            round &+= 1
            chunk[0] = round
        }
        return Data(hasher.finalize())
    }

    static func digest(of url: URL) throws -> Data {
        try ContentDigest.sha256(ofFileAt: url.path)
    }
}

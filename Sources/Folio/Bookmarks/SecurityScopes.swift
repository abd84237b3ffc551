import Foundation
import Logging

/// This process's security-scoped resources. A URL is scoped when Folio handed it out (resolving a
/// bookmark, the document picker); a `URL` value cannot carry the scope itself on Linux, so the
/// scope is kept here, by path. Starts nest per process; the last balancing stop ends access; extra
/// stops do nothing; past `maximumActive` scopes at once, a start fails with a logged error.
package final class SecurityScopes: @unchecked Sendable {
    /// The process's scopes.
    package static let shared = SecurityScopes()

    /// How many scopes may be accessed at once (Apple's undocumented limits made explicit).
    package let maximumActive: Int
    private let lock = NSLock()
    private var scopes: [String: Scope] = [:]
    private var active = 0
    private let logger = Logger(label: "folio.scope")

    struct Scope {
        var readOnly: Bool
        var count: Int
    }

    package init(maximumActive: Int = 4096) {
        self.maximumActive = maximumActive
    }

    /// Marks `path` as handed out with a scope.
    package func grant(_ path: String, readOnly: Bool) {
        lock.withLock {
            if scopes[path] == nil { scopes[path] = Scope(readOnly: readOnly, count: 0) }
        }
    }

    /// Starts (or nests) access; false for a URL without scope, or past the limit, or when `verify`
    /// (asked on the outermost start only) says the grant behind the scope is gone.
    package func start(_ path: String, verify: ((String) -> Bool)? = nil) -> Bool {
        if let verify, lock.withLock({ scopes[path].map { $0.count == 0 } ?? false }), !verify(path) {
            logger.notice("security-scoped access refused: the grant was revoked", metadata: ["path": "\(path)"])
            return false
        }
        let result = lock.withLock { () -> Bool? in
            guard var scope = scopes[path] else { return false }
            if scope.count == 0 {
                guard active < maximumActive else { return nil }
                active += 1
            }
            scope.count += 1
            scopes[path] = scope
            return true
        }
        guard let result else {
            logger.error(
                "too many security-scoped resources in use in this process; stop accessing some first",
                metadata: ["limit": "\(maximumActive)", "path": "\(path)"])
            return false
        }
        return result
    }

    /// Balances one start; the last one ends access. Extra stops do nothing.
    package func stop(_ path: String) {
        lock.withLock {
            guard var scope = scopes[path], scope.count > 0 else { return }
            scope.count -= 1
            if scope.count == 0 { active -= 1 }
            scopes[path] = scope
        }
    }

    /// Whether `path` is reached only through read-only scopes being accessed: an accessed
    /// read-only scope of it or a folder above it, and no accessed read-write one.
    package func deniesWriting(_ path: String) -> Bool {
        lock.withLock {
            guard active > 0 else { return false }
            var readOnly = false
            var current = path
            while true {
                if let scope = scopes[current], scope.count > 0 {
                    if !scope.readOnly { return false }
                    readOnly = true
                }
                guard current != "/", let slash = current.utf8.lastIndex(of: UInt8(ascii: "/")) else { break }
                current = slash == current.utf8.startIndex ? "/" : String(current[..<slash])
            }
            return readOnly
        }
    }

    /// Whether access to `path` is started.
    package func isAccessing(_ path: String) -> Bool {
        lock.withLock { (scopes[path]?.count ?? 0) > 0 }
    }

    /// Whether `path`'s scope allows reading only (nil: no scope).
    package func isReadOnly(_ path: String) -> Bool? {
        lock.withLock { scopes[path]?.readOnly }
    }
}

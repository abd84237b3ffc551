#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
import CFolioShims
public import SystemPackage

extension FilePath {
    /// Renames this item to `destination` only if nothing is there yet (`renameat2` with
    /// `RENAME_NOREPLACE`): the check and the rename are one step, so a file created meanwhile by
    /// another process is never replaced.
    ///
    /// - Throws: `Errno.fileExists` when `destination` exists; `.invalidArgument` where the file
    ///   system cannot do it.
    public func rename(toNewItemAt destination: FilePath) throws(Errno) {
        _ = try valueOrErrno {
            self.withPlatformString { from in destination.withPlatformString { to in cfolio_rename_noreplace(from, to) } }
        }
    }

    /// Renames this item to `destination`, replacing what is there (`rename(2)`).
    public func rename(replacing destination: FilePath) throws(Errno) {
        _ = try valueOrErrno {
            self.withPlatformString { from in destination.withPlatformString { to in Glibc.rename(from, to) } }
        }
    }

    /// Swaps this item and `other` in one step (`renameat2` with `RENAME_EXCHANGE`): both must exist.
    public func exchange(with other: FilePath) throws(Errno) {
        _ = try valueOrErrno {
            self.withPlatformString { from in other.withPlatformString { to in cfolio_renameat2(AT_FDCWD, from, AT_FDCWD, to, 2) } }
        }
    }
}

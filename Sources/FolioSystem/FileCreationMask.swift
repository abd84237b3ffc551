#if canImport(Glibc)
public import Glibc
#endif

/// The process's file mode creation mask (umask), read without changing it: `umask(2)` can only
/// be read by setting it, which would race with every thread creating files meanwhile.
public enum FileCreationMask {
    /// The mask, from the `Umask:` line of `/proc/self/status` (Linux 4.7 and later); 0o077 (the
    /// strictest) where that cannot be read.
    public static var current: mode_t {
        ProcessStatusFile.value("Umask", at: "/proc/self/status").flatMap { mode_t($0, radix: 8) } ?? 0o077
    }

    /// The mode a new regular file gets from `open(…, 0666)`: what a downloaded file should have.
    /// The mask is read once per process (reading it costs an open and a read of `/proc`, which
    /// was 3% of a many-file download's processor time); Folio's processes never change theirs.
    public static var fileMode: mode_t { 0o666 & ~atStart }

    /// The mode a new executable file gets from `open(…, 0777)`: what a download the provider
    /// marks executable should have.
    public static var executableMode: mode_t { 0o777 & ~atStart }

    private static let atStart = current
}

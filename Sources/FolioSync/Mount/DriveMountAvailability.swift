#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import FolioSystem
import Foundation

/// Whether this machine lets Folio mount the drive with FUSE, and whether it is mounted.
package enum DriveMountAvailability {
    /// Why the drive cannot be mounted here, in one sentence; nil when it can.
    package static func refusal() -> String? {
        var device = stat()
        guard stat("/dev/fuse", &device) == 0, device.st_mode & S_IFMT == S_IFCHR else { return "this machine has no /dev/fuse (files stay stubs)" }
        // fusermount3 opens the device as the user, too.
        guard access("/dev/fuse", R_OK | W_OK) == 0 else {
            return "/dev/fuse is not open to this user (mode \(String(device.st_mode & 0o777, radix: 8)); most systems make it 0666)"
        }
        guard geteuid() == 0 || ExecutableSearch.locate("fusermount3") != nil else { return "fusermount3 is not installed (Debian: apt install fuse3)" }
        return nil
    }

    /// Whether Folio's file system is mounted at `folder` now (`/proc/self/mountinfo`).
    package static func isMounted(at folder: String) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return false }
        // Fields: id, parent, device, root, mount point, options, optional fields, "-", type, source, …
        // The mount point escapes spaces and the like as octal (\040).
        let escaped = folder.replacingOccurrences(of: "\\", with: "\\134").replacingOccurrences(of: " ", with: "\\040")
            .replacingOccurrences(of: "\t", with: "\\011").replacingOccurrences(of: "\n", with: "\\012")
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            guard fields.count > 4, fields[4] == escaped, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count else { return false }
            return fields[dash + 1] == "fuse.folio"
        }
    }
}

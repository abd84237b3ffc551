import Foundation

/// Names for new files that take nothing over.
package enum AvailableName {
    /// `folder/name`, or `name 2`, `name 3`… (before the extension) when that is taken.
    package static func path(for name: String, in folder: String) -> String {
        let stem = (name as NSString).deletingPathExtension
        let suffix = (name as NSString).pathExtension
        var candidate = folder + "/" + name
        var number = 2
        var status = stat()
        while lstat(candidate, &status) == 0 {
            candidate = folder + "/" + stem + " \(number)" + (suffix.isEmpty ? "" : "." + suffix)
            number += 1
        }
        return candidate
    }
}

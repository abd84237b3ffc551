import Foundation

extension CoordinationFailure {
    /// A presenter's error, kept as domain, code and description so it crosses processes.
    init(presenterError error: any Error) {
        let ns = error as NSError
        self.init(kind: .presenterError, message: ns.localizedDescription, domain: ns.domain, code: ns.code)
    }

    /// The error apps see: Apple's `CocoaError` codes where Apple has them (a cancel is
    /// `userCancelled`), the presenter's own error when a presenter refused.
    var publicError: any Error {
        switch kind {
        case .cancelled:
            return CocoaError(.userCancelled, userInfo: [NSLocalizedDescriptionKey: message])
        case .presenterError:
            let domain = domain ?? NSCocoaErrorDomain
            let code = code ?? CocoaError.Code.fileWriteUnknown.rawValue
            if domain == NSCocoaErrorDomain {
                return CocoaError(CocoaError.Code(rawValue: code), userInfo: [NSLocalizedDescriptionKey: message])
            }
            return NSError(domain: domain, code: code, userInfo: [NSLocalizedDescriptionKey: message])
        case .presenterTimeout, .connectionLost, .timedOut:
            return CocoaError(.fileLocking, userInfo: [NSLocalizedDescriptionKey: message])
        case .invalid, .unknownMethod, .unknownType, .failed:
            return CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: message])
        case .denied:
            // As a sandbox refusal: the POSIX error underneath is EACCES; `code` says read or write.
            return CocoaError(
                CocoaError.Code(rawValue: code ?? CocoaError.Code.fileReadNoPermission.rawValue),
                userInfo: [NSLocalizedDescriptionKey: message, NSUnderlyingErrorKey: POSIXError(.EACCES)])
        case .notFound:
            return CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: message])
        case .corrupt:
            return CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: message])
        case .userCancelled:
            return CocoaError(.userCancelled, userInfo: [NSLocalizedDescriptionKey: message])
        }
    }
}

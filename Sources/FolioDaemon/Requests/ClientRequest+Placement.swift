import Folio

extension ClientRequest {
    /// Where this request's handler runs, for a connection that is `app` (nil: the user's own
    /// tools) on a daemon with `drive`. Every request is listed: a new one must say whether it
    /// blocks before it compiles.
    func placement(app: String?, drive: DriveService?) -> RequestPlacement {
        switch self {
        case .hello(_, _, let declared):
            // An app's hello reads its manifest from disk.
            return declared != nil || app != nil ? .quick : .eventLoop
        case .typesShow, .status, .release, .cancel, .moved, .updatePresenter, .removePresenter, .answer, .ubiquityChanged:
            return .eventLoop
        case .typesOf:
            // Opens the file and may read its head for magic.
            return .slow
        case .claim(let claim):
            // An app's paths are checked (realpath, stat); a placeholder in the drive is looked for.
            if app != nil { return .quick }
            if let drive, claim.items.contains(where: { drive.contains($0.path) }) { return .quick }
            return .eventLoop
        case .addPresenter(_, _, let path):
            return app != nil && path != nil ? .quick : .eventLoop
        case .access(let request):
            return request.placement
        case .index(let request):
            return request.placement(app: app)
        case .driveSync:
            // Reads the drive's configuration and makes its provider; the pass then runs as the
            // drive's own work, and its reply comes when it ends.
            return .slow
        }
    }
}

extension AccessRequest {
    /// Where an access request runs: every one touches files or the grant table.
    var placement: RequestPlacement {
        switch self {
        case .resolveBookmark, .createBookmark, .listGrants:
            // Resolution (and a grant list's relocation of moved items) may walk a whole tree.
            .slow
        case .check, .revoke, .grant, .bookmarkValues, .pick, .attachPicker, .choose, .container, .appSocket:
            .quick
        }
    }
}

extension IndexRequest {
    /// Where an index request runs: the index does its work on its own queue, so only an app's
    /// access checks block here.
    func placement(app: String?) -> RequestPlacement {
        switch self {
        case .stopQuery, .search, .status, .addRoot, .removeRoot, .rebuild, .recents, .favorites, .addFavorite, .removeFavorite,
            .simulateOverflow:
            .eventLoop
        case .startQuery, .used, .item:
            app != nil ? .quick : .eventLoop
        }
    }
}

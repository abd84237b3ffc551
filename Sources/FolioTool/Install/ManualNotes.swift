/// The hand-written part of each man page: examples, and what a command adds to the shared FILES,
/// ENVIRONMENT and EXIT STATUS sections. Keyed by the command's words after `folio`.
enum ManualNotes {
    /// One example: what it does, and the command line.
    struct Example {
        var what: String
        var command: String
        init(_ what: String, _ command: String) {
            self.what = what
            self.command = command
        }
    }

    /// A command's own part of its page.
    struct Notes {
        var description: String?
        var examples: [Example] = []
        var exitStatus: [(Int, String)] = []
        var environment: [(String, String)] = []
        var files: [(String, String)] = []
        var seeAlso: [String] = []
    }

    /// Examples for a command without notes of its own: its help, and each of its commands' help.
    static func fallbackExamples(names: [String], children: [String]) -> [Example] {
        let command = names.joined(separator: " ")
        return [Example("Show the command's usage and options", command + " --help")]
            + children.prefix(3).map { Example("Show what \(command) \($0) takes", "\(command) \($0) --help") }
    }

    /// Files every page names.
    static let files: [(String, String)] = [
        ("$XDG_RUNTIME_DIR/folio/folio.sock", "The daemon's socket (mode 0600, in a folder only you may enter)."),
        ("$XDG_DATA_HOME/folio/", "Folio's data (~/.local/share/folio by default): app containers and manifests, the version store (Versions/), the drive's folder (Drive/)."),
        ("$XDG_CONFIG_HOME/folio/", "Configuration (~/.config/folio): the drive's drive.json and its sealed secret, the bookmark key."),
        ("$XDG_STATE_HOME/folio/", "State (~/.local/state/folio): the index database (index.sqlite), the drive's journal, daemon.log."),
    ]

    /// Variables every page names.
    static let environment: [(String, String)] = [
        ("XDG_DATA_HOME, XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR", "Where Folio's folders are (see FILES); unset, the XDG defaults under $HOME."),
        ("FOLIO_LOG_LEVEL", "The log level on standard error: trace, debug, info, notice, warning, error or critical (default: info for the daemon, warning otherwise)."),
    ]

    static let noDrive = (2, "No drive is set up (folio drive setup).")
    static let password = ("FOLIO_PASSWORD", "The WebDAV password or S3 secret key; never taken from the command line.")

    /// The notes of each command, by its words after `folio` ("" for `folio` itself).
    static let notes: [String: Notes] = [
        "": Notes(
            description: """
                Apps on Linux reach Folio through `import Folio` (Apple's APIs: FileCoordinator, Document, \
                MetadataQuery, UTType, bookmarks, the document picker, file providers); people and scripts reach \
                it through this command. Most commands talk to the per-user daemon over its socket; start one \
                with folio daemon --background, or let systemd start it on demand after folio install --user.

                folio search is answered by this command itself, in a few milliseconds; every other command is \
                run by folio-tool, installed beside it or in ../lib/folio.
                """,
            examples: [
                Example("Start the daemon in the background, then see what it coordinates", "folio daemon --background\nfolio status"),
                Example("Index your documents and search them by name", "folio index add ~/Documents\nfolio search budget"),
                Example("Set up a synced drive on a WebDAV server and sync it", "FOLIO_PASSWORD=secret folio drive setup webdav https://dav.example.com/drive/ --user me\nfolio drive sync"),
                Example("Print the version (and the commit of a build from a git checkout)", "folio --version"),
            ]),
        "daemon": Notes(
            description: """
                The daemon arbitrates file coordination between every process of the user, keeps the metadata \
                index, runs the drive's sync and serves the browser page on 127.0.0.1 behind a token. It listens \
                on $XDG_RUNTIME_DIR/folio/folio.sock (or the socket systemd passes it) and says so on its first \
                line. One runs per user: a second refuses to start.
                """,
            examples: [
                Example("Run it in the foreground (Ctrl-C stops it)", "folio daemon"),
                Example("Start it in the background, then stop it (the command returns once the process is gone)", "folio daemon --background\nfolio daemon --stop"),
                Example("Run it without the browser page, logging more", "folio daemon --web-port off --log-level debug"),
            ],
            environment: [("FOLIO_PRESENTER_TIMEOUT", "Seconds a file presenter may take to answer (default 30).")],
            files: [("$XDG_STATE_HOME/folio/daemon.log", "The log of a daemon started with --background (the previous run's in daemon.log.1).")]),
        "status": Notes(examples: [
            Example("See the claims held and waiting, the presenters and the clients", "folio status"),
            Example("The same as JSON, for a script", "folio status --json"),
        ]),
        "drive": Notes(
            description: """
                The drive is a folder synced with a WebDAV server, an S3 bucket, a folder or an out-of-process \
                provider: iCloud Drive for Linux. With files on demand (where FUSE can mount) every program sees \
                each file under its own name and reads it as it downloads; with stubs, files not downloaded are \
                name.folio-cloud files. folio drive path prints the folder.
                """,
            examples: [
                Example("Put the drive on a folder (a mounted share, a USB disk) and sync", "folio drive setup folder /media/share/Drive\nfolio drive sync"),
                Example("Copy a file into the drive and see where everything stands", "cp report.pdf \"$(folio drive path)\"/\nfolio drive status"),
            ]),
        "drive setup": Notes(
            examples: [
                Example("A WebDAV server, the password from the environment", "FOLIO_PASSWORD=secret folio drive setup webdav https://dav.example.com/drive/ --user me"),
                Example("An S3 bucket under a prefix, with stub files", "AWS_ACCESS_KEY_ID=key AWS_SECRET_ACCESS_KEY=secret folio drive setup s3 https://s3.eu-west-3.amazonaws.com bucket/drive --region eu-west-3 --files stubs"),
                Example("A folder, then the folder the drive's files are in", "folio drive setup folder ~/Server\nfolio drive path"),
            ],
            exitStatus: [(4, "The server could not be reached or refused the check; nothing was saved.")],
            environment: [password, ("AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY", "An S3 key and secret when --user and $FOLIO_PASSWORD are not given.")],
            files: [("$XDG_CONFIG_HOME/folio/drive.json", "The drive's configuration."), ("$XDG_CONFIG_HOME/folio/drive.secret", "The sealed secret (mode 0600).")]),
        "drive path": Notes(examples: [
            Example("Open the drive's folder in the file manager", "xdg-open \"$(folio drive path)\""),
            Example("Copy a file into the drive", "cp notes.txt \"$(folio drive path)\"/"),
        ], exitStatus: [noDrive]),
        "drive sync": Notes(
            description: """
                A pass uploads what changed here, downloads or makes placeholders for what changed on the server, \
                moves and deletes on both sides, and keeps both sides of a conflict (this device's as a version: \
                folio versions list). A first pass, or one after folio drive repair, merges: it deletes nothing.
                """,
            examples: [
                Example("Sync now", "folio drive sync"),
                Example("Let a mass deletion the guard held go ahead", "folio drive sync --confirm-deletions"),
            ],
            exitStatus: [noDrive, (3, "The pass stopped: the server's root is gone or another device replaced it (the message says what to do)."), (4, "The server could not be reached or refused."), (5, "Some items were deferred or set aside (listed); the next pass tries them again.")]),
        "drive status": Notes(examples: [
            Example("Where the drive lives and how many files are local, in the cloud and waiting", "folio drive status"),
            Example("The state of each file under a folder", "folio drive status \"$(folio drive path)\"/Reports"),
        ], exitStatus: [noDrive, (5, "The drive's folder is mounted but no daemon answers for it.")]),
        "drive download": Notes(examples: [
            Example("Download a folder's placeholders", "folio drive download \"$(folio drive path)\"/Reports"),
        ], exitStatus: [noDrive, (4, "A download failed (what was not downloaded stays a placeholder).")]),
        "drive evict": Notes(examples: [
            Example("Free the space a folder's files take (they stay on the server)", "folio drive evict \"$(folio drive path)\"/Archive"),
        ], exitStatus: [noDrive, (6, "Some files were not evicted: pinned, or with changes the server does not have yet.")]),
        "drive pin": Notes(examples: [
            Example("Keep a folder downloaded, now and after every sync", "folio drive pin \"$(folio drive path)\"/Current"),
        ], exitStatus: [noDrive, (4, "Pinned, but the download failed; the next sync tries again.")]),
        "drive unpin": Notes(examples: [
            Example("Stop keeping a folder downloaded", "folio drive unpin \"$(folio drive path)\"/Current"),
        ], exitStatus: [noDrive]),
        "drive publish": Notes(examples: [
            Example("A link to a file, valid for a day (S3 drives)", "folio drive publish \"$(folio drive path)\"/slides.pdf --expires 86400"),
        ], exitStatus: [noDrive, (4, "The server refused."), (6, "The file cannot be published (not synced, or the provider makes no links).")]),
        "drive repair": Notes(examples: [
            Example("After restoring the drive's folder from a backup, merge instead of deleting", "folio drive repair\nfolio drive sync"),
        ], exitStatus: [noDrive]),
        "coordinate": Notes(
            examples: [
                Example("Back a document up while no coordinated writer changes it", "folio coordinate read notes.txt -- cp notes.txt /backup/"),
                Example("Append to a file inside a write claim (presenters save first, then reload)", "folio coordinate write notes.txt -- sh -c 'echo more >> notes.txt'"),
                Example("Move a document so its presenters follow it", "folio coordinate move old.txt new.txt -- mv old.txt new.txt"),
            ],
            exitStatus: [(75, "The claim could not be had (a presenter refused, the daemon failed)."), (127, "Otherwise the command's own exit status; 127 when it could not run.")]),
        "versions": Notes(examples: [
            Example("List a document's versions, then restore one", "folio versions list notes.txt\nfolio versions restore notes.txt 3"),
        ], files: [("$XDG_DATA_HOME/folio/Versions/", "The version store (contents by digest, manifests by document).")]),
        "versions list": Notes(examples: [Example("A document's versions, oldest first", "folio versions list notes.txt")]),
        "versions show": Notes(examples: [Example("Compare a version with the current text", "folio versions show notes.txt 2 | diff - notes.txt")]),
        "versions restore": Notes(examples: [Example("Put version 2 back (the current contents become a version first)", "folio versions restore notes.txt 2")]),
        "versions resolve": Notes(examples: [
            Example("Keep a conflict version's contents and mark the conflicts resolved", "folio versions resolve notes.txt --keep 4 --remove-others"),
        ]),
        "bookmark": Notes(examples: [
            Example("Make a bookmark, move the file, and find it again", "folio bookmark create notes.txt > notes.bookmark\nmv notes.txt budget.txt\nfolio bookmark resolve \"$(cat notes.bookmark)\""),
        ], files: [("$XDG_CONFIG_HOME/folio/bookmark.key", "The key bookmark data is signed with (mode 0600).")]),
        "bookmark create": Notes(examples: [Example("A read-only bookmark, base64", "folio bookmark create --read-only report.pdf")]),
        "bookmark resolve": Notes(examples: [Example("Where a bookmark points now, as JSON", "folio bookmark resolve --json \"$(cat notes.bookmark)\"")]),
        "types": Notes(examples: [
            Example("A type by extension, and whether it is an image", "folio types show heic\nfolio types conforms heic public.image"),
        ]),
        "types show": Notes(examples: [
            Example("A type by extension, MIME type or identifier", "folio types show jpg\nfolio types show application/pdf\nfolio types show public.plain-text"),
        ], exitStatus: [(2, "No type matches.")]),
        "types of": Notes(examples: [Example("The content types of your downloads (by name, then by content)", "folio types of ~/Downloads/*")]),
        "types conforms": Notes(examples: [
            Example("In a script: act on images only", "folio types conforms \"$ext\" public.image && echo image"),
        ], exitStatus: [(1, "The type does not conform."), (2, "No type matches A or B.")]),
        "types handlers": Notes(examples: [Example("Which app opens a PDF, and why", "folio types handlers report.pdf")]),
        "types set-default": Notes(examples: [
            Example("Open Markdown in an app, then forget the choice", "folio types set-default md com.example.Editor\nfolio types set-default md none"),
        ]),
        "app": Notes(examples: [Example("Register an app and see its container", "folio app register Info.plist\nfolio app list")]),
        "app register": Notes(examples: [Example("Register an app from its Info.plist", "folio app register Examples/TextDocuments/Info.plist")], files: [("$XDG_DATA_HOME/folio/Apps/", "Registered manifests."), ("$XDG_DATA_HOME/folio/Containers/", "Apps' containers.")]),
        "app list": Notes(examples: [Example("The registered apps, as JSON", "folio app list --json")]),
        "app unregister": Notes(examples: [Example("Unregister an app and delete its container", "folio app unregister com.example.Editor --delete-container")]),
        "grants": Notes(examples: [Example("Grant an app a folder, list, and revoke", "folio grants add --app com.example.Editor ~/Projects --write\nfolio grants list\nfolio grants revoke 1")]),
        "grants list": Notes(examples: [Example("One app's grants", "folio grants list --app com.example.Editor")]),
        "grants add": Notes(examples: [Example("Let an app read a document until the daemon restarts", "folio grants add --app com.example.Viewer report.pdf --session")]),
        "grants revoke": Notes(examples: [
            Example("Revoke grant 3, then everything an app was granted", "folio grants revoke 3\nfolio grants revoke --app com.example.Editor"),
        ]),
        "query": Notes(examples: [
            Example("Large PDFs under ~/Documents, biggest first", "folio query \"kMDItemFSName LIKE[c] '*.pdf' AND kMDItemFSSize > 1000000\" --scope ~/Documents --sort kMDItemFSSize --descending"),
            Example("Follow text files as they change", "folio query \"kMDItemContentTypeTree == 'public.text'\" --scope ~/Notes --live"),
        ], exitStatus: [(2, "The predicate is not understood.")]),
        "find": Notes(examples: [
            Example("Documents whose text mentions rent, case aside", "folio find 'kMDItemTextContent == \"*rent*\"c'"),
            Example("PDFs changed this week, in one folder", "folio find 'kMDItemFSName == \"*.pdf\"c && kMDItemFSContentChangeDate >= $time.this_week' -onlyin ~/Documents"),
            Example("Plain words, for xargs", "folio find -0 budget 2027 | xargs -0 ls -l"),
        ], exitStatus: [(2, "The query is not understood.")], seeAlso: ["folio-query"]),
        "search": Notes(examples: [
            Example("Names containing budget", "folio search budget"),
            Example("Names, then documents' text, with the passage that matched", "folio search --content \"rent increase\""),
        ]),
        "recents": Notes(examples: [Example("The last five documents you used", "folio recents --limit 5")]),
        "favorites": Notes(examples: [Example("Add two folders to the favorites, in that order", "folio favorites add ~/Projects ~/Documents\nfolio favorites")]),
        "favorites list": Notes(examples: [Example("The favorites, first first", "folio favorites list")]),
        "favorites add": Notes(examples: [Example("Put two folders at the top, the first named first", "folio favorites add ~/Projects ~/Documents")]),
        "favorites remove": Notes(examples: [Example("Remove a favorite", "folio favorites remove ~/Projects")]),
        "index": Notes(examples: [
            Example("Index a folder and wait until it is crawled", "folio index add ~/Documents\nfolio index status --wait"),
        ], files: [("$XDG_STATE_HOME/folio/index.sqlite", "The index.")]),
        "index status": Notes(examples: [Example("Wait until everything is indexed", "folio index status --wait")]),
        "index add": Notes(examples: [Example("Index your documents", "folio index add ~/Documents")]),
        "index remove": Notes(examples: [Example("Stop indexing a folder", "folio index remove ~/Old")]),
        "index exclude": Notes(examples: [
            Example("Keep names but not text of downloads; leave a cache out", "folio index exclude ~/Downloads --text\nfolio index exclude ~/Documents/cache"),
        ]),
        "index include": Notes(examples: [Example("Index an excluded folder again", "folio index include ~/Documents/cache")]),
        "index rebuild": Notes(examples: [Example("Start the index again from the roots", "folio index rebuild")]),
        "tag": Notes(examples: [Example("Tag files, then find them by tag", "folio tag add Finance budget.txt taxes.pdf\nfolio find 'kMDItemUserTags == Finance'")]),
        "tag add": Notes(examples: [Example("Tag two files", "folio tag add Finance budget.txt taxes.pdf")]),
        "tag remove": Notes(examples: [Example("Untag a file", "folio tag remove Finance taxes.pdf")]),
        "tag list": Notes(examples: [Example("Each file's tags", "folio tag list *.txt")]),
        "provider": Notes(examples: [Example("Check a WebDAV server before putting the drive on it", "FOLIO_PASSWORD=secret folio provider validate https://dav.example.com/files/ --user me")]),
        "provider validate": Notes(
            examples: [
                Example("A WebDAV server", "FOLIO_PASSWORD=secret folio provider validate https://dav.example.com/files/ --user me"),
                Example("An S3 bucket", "AWS_ACCESS_KEY_ID=key AWS_SECRET_ACCESS_KEY=secret folio provider validate s3://bucket/prefix --endpoint https://s3.eu-west-3.amazonaws.com --region eu-west-3"),
                Example("An out-of-process provider, only the paging cases", "folio provider validate ./folder_provider.py --only paging -- ~/Shared"),
            ],
            exitStatus: [(2, "The provider cannot be made (a folder that is not there).")],
            environment: [password]),
        "pick": Notes(examples: [
            Example("Pick PDFs in the terminal", "folio pick --type pdf --multiple --directory ~/Documents"),
            Example("Be the picker apps' requests appear in", "folio pick --serve"),
        ]),
        "open": Notes(examples: [
            Example("Open a document in its app", "folio open report.txt"),
            Example("See what an app would get, without starting it", "folio open report.txt --app com.example.Editor --no-launch"),
        ], exitStatus: [(127, "Otherwise the app's exit status.")]),
        "run": Notes(examples: [
            Example("Run a command as an app, confined to its container and grants", "folio run --app com.example.Editor --sandbox -- ls -a ~"),
        ], exitStatus: [(127, "Otherwise the command's exit status.")]),
        "browse": Notes(examples: [
            Example("Open the browser page on a folder", "folio browse ~/Documents"),
            Example("Print its address (with its token) instead", "folio browse --print"),
        ]),
        "doctor": Notes(examples: [
            Example("Check everything Folio needs here", "folio doctor"),
            Example("The same without touching the drive's server, as JSON", "folio doctor --offline --json"),
        ], exitStatus: [(1, "At least one problem was found (each printed with its fix).")]),
        "install": Notes(
            examples: [
                Example("Install a release build for yourself", "swift build -c release\n.build/release/folio install --user"),
                Example("Install under another prefix", ".build/release/folio install --user --prefix ~/opt/folio"),
            ],
            files: [("$XDG_DATA_HOME/folio/installed.txt", "What the install put in place, read by folio uninstall --user.")],
            seeAlso: ["folio-uninstall"]),
        "package": Notes(examples: [
            Example("Build Debian's package and install it", "swift build -c release --static-swift-stdlib\n.build/release/folio package deb --output /tmp\nsudo dpkg -i /tmp/folio_*.deb"),
        ]),
        "package deb": Notes(
            examples: [
                Example("Build the package, check it and install it", "swift build -c release --static-swift-stdlib\n.build/release/folio package deb --output /tmp\nlintian /tmp/folio_*.deb\nsudo dpkg -i /tmp/folio_*.deb"),
                Example("Then, as each user, let systemd start the daemon on demand", "systemctl --user enable --now folio.socket"),
            ],
            environment: [("DEBFULLNAME, DEBEMAIL", "The package's maintainer, as Debian's tools read them.")],
            files: [("/usr/lib/folio/", "Where the package puts folio-tool and its resources.")]),
        "uninstall": Notes(examples: [Example("Remove what folio install --user put in place", "folio uninstall --user")], seeAlso: ["folio-install"]),
        "bench": Notes(examples: [
            Example("Coordination round trips, beside a raw socket round trip", "swift run -c release folio bench coordination"),
            Example("Sync against a local Apache, with rclone for comparison", "swift run -c release folio bench sync --sync-files 1000 --rclone .venv-test/bin/rclone"),
        ]),
    ]
}

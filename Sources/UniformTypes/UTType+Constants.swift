// The type constants apps use (Apple's UTCoreTypes names).
extension UTType {
    /// The type `public.item`.
    public static var item: UTType { UTType.system("public.item") }
    /// The type `public.content`.
    public static var content: UTType { UTType.system("public.content") }
    /// The type `public.composite-content`.
    public static var compositeContent: UTType { UTType.system("public.composite-content") }
    /// The type `public.data`.
    public static var data: UTType { UTType.system("public.data") }
    /// The type `public.directory`.
    public static var directory: UTType { UTType.system("public.directory") }
    /// The type `public.folder`.
    public static var folder: UTType { UTType.system("public.folder") }
    /// The type `public.volume`.
    public static var volume: UTType { UTType.system("public.volume") }
    /// The type `com.apple.package`.
    public static var package: UTType { UTType.system("com.apple.package") }
    /// The type `com.apple.bundle`.
    public static var bundle: UTType { UTType.system("com.apple.bundle") }
    /// The type `public.symlink`.
    public static var symbolicLink: UTType { UTType.system("public.symlink") }
    /// The type `com.apple.alias-file`.
    public static var aliasFile: UTType { UTType.system("com.apple.alias-file") }
    /// The type `com.apple.resolvable`.
    public static var resolvable: UTType { UTType.system("com.apple.resolvable") }
    /// The type `public.url`.
    public static var url: UTType { UTType.system("public.url") }
    /// The type `public.file-url`.
    public static var fileURL: UTType { UTType.system("public.file-url") }
    /// The type `public.executable`.
    public static var executable: UTType { UTType.system("public.executable") }
    /// The type `public.unix-executable`.
    public static var unixExecutable: UTType { UTType.system("public.unix-executable") }
    /// The type `com.microsoft.windows-executable`.
    public static var exe: UTType { UTType.system("com.microsoft.windows-executable") }
    /// The type `com.apple.application`.
    public static var application: UTType { UTType.system("com.apple.application") }
    /// The type `com.apple.application-bundle`.
    public static var applicationBundle: UTType { UTType.system("com.apple.application-bundle") }
    /// The type `public.text`.
    public static var text: UTType { UTType.system("public.text") }
    /// The type `public.plain-text`.
    public static var plainText: UTType { UTType.system("public.plain-text") }
    /// The type `public.utf8-plain-text`.
    public static var utf8PlainText: UTType { UTType.system("public.utf8-plain-text") }
    /// The type `public.utf16-external-plain-text`.
    public static var utf16ExternalPlainText: UTType { UTType.system("public.utf16-external-plain-text") }
    /// The type `public.utf16-plain-text`.
    public static var utf16PlainText: UTType { UTType.system("public.utf16-plain-text") }
    /// The type `public.delimited-values-text`.
    public static var delimitedText: UTType { UTType.system("public.delimited-values-text") }
    /// The type `public.comma-separated-values-text`.
    public static var commaSeparatedText: UTType { UTType.system("public.comma-separated-values-text") }
    /// The type `public.tab-separated-values-text`.
    public static var tabSeparatedText: UTType { UTType.system("public.tab-separated-values-text") }
    /// The type `public.utf8-tab-separated-values-text`.
    public static var utf8TabSeparatedText: UTType { UTType.system("public.utf8-tab-separated-values-text") }
    /// The type `public.rtf`.
    public static var rtf: UTType { UTType.system("public.rtf") }
    /// The type `com.apple.rtfd`.
    public static var rtfd: UTType { UTType.system("com.apple.rtfd") }
    /// The type `com.apple.flat-rtfd`.
    public static var flatRTFD: UTType { UTType.system("com.apple.flat-rtfd") }
    /// The type `public.html`.
    public static var html: UTType { UTType.system("public.html") }
    /// The type `public.xml`.
    public static var xml: UTType { UTType.system("public.xml") }
    /// The type `public.json`.
    public static var json: UTType { UTType.system("public.json") }
    /// The type `public.yaml`.
    public static var yaml: UTType { UTType.system("public.yaml") }
    /// The type `public.log`.
    public static var log: UTType { UTType.system("public.log") }
    /// The type `public.source-code`.
    public static var sourceCode: UTType { UTType.system("public.source-code") }
    /// The type `public.assembly-source`.
    public static var assemblyLanguageSource: UTType { UTType.system("public.assembly-source") }
    /// The type `public.c-source`.
    public static var cSource: UTType { UTType.system("public.c-source") }
    /// The type `public.objective-c-source`.
    public static var objectiveCSource: UTType { UTType.system("public.objective-c-source") }
    /// The type `public.swift-source`.
    public static var swiftSource: UTType { UTType.system("public.swift-source") }
    /// The type `public.c-plus-plus-source`.
    public static var cPlusPlusSource: UTType { UTType.system("public.c-plus-plus-source") }
    /// The type `public.objective-c-plus-plus-source`.
    public static var objectiveCPlusPlusSource: UTType { UTType.system("public.objective-c-plus-plus-source") }
    /// The type `public.c-header`.
    public static var cHeader: UTType { UTType.system("public.c-header") }
    /// The type `public.c-plus-plus-header`.
    public static var cPlusPlusHeader: UTType { UTType.system("public.c-plus-plus-header") }
    /// The type `public.script`.
    public static var script: UTType { UTType.system("public.script") }
    /// The type `com.netscape.javascript-source`.
    public static var javaScript: UTType { UTType.system("com.netscape.javascript-source") }
    /// The type `public.shell-script`.
    public static var shellScript: UTType { UTType.system("public.shell-script") }
    /// The type `public.python-script`.
    public static var pythonScript: UTType { UTType.system("public.python-script") }
    /// The type `public.ruby-script`.
    public static var rubyScript: UTType { UTType.system("public.ruby-script") }
    /// The type `public.perl-script`.
    public static var perlScript: UTType { UTType.system("public.perl-script") }
    /// The type `public.php-script`.
    public static var phpScript: UTType { UTType.system("public.php-script") }
    /// The type `com.apple.property-list`.
    public static var propertyList: UTType { UTType.system("com.apple.property-list") }
    /// The type `com.apple.xml-property-list`.
    public static var xmlPropertyList: UTType { UTType.system("com.apple.xml-property-list") }
    /// The type `com.apple.binary-property-list`.
    public static var binaryPropertyList: UTType { UTType.system("com.apple.binary-property-list") }
    /// The type `public.contact`.
    public static var contact: UTType { UTType.system("public.contact") }
    /// The type `public.vcard`.
    public static var vCard: UTType { UTType.system("public.vcard") }
    /// The type `public.calendar-event`.
    public static var calendarEvent: UTType { UTType.system("public.calendar-event") }
    /// The type `com.apple.ical.ics`.
    public static var ics: UTType { UTType.system("com.apple.ical.ics") }
    /// The type `public.message`.
    public static var message: UTType { UTType.system("public.message") }
    /// The type `public.email-message`.
    public static var emailMessage: UTType { UTType.system("public.email-message") }
    /// The type `public.image`.
    public static var image: UTType { UTType.system("public.image") }
    /// The type `public.jpeg`.
    public static var jpeg: UTType { UTType.system("public.jpeg") }
    /// The type `public.png`.
    public static var png: UTType { UTType.system("public.png") }
    /// The type `com.compuserve.gif`.
    public static var gif: UTType { UTType.system("com.compuserve.gif") }
    /// The type `public.tiff`.
    public static var tiff: UTType { UTType.system("public.tiff") }
    /// The type `com.microsoft.bmp`.
    public static var bmp: UTType { UTType.system("com.microsoft.bmp") }
    /// The type `com.microsoft.ico`.
    public static var ico: UTType { UTType.system("com.microsoft.ico") }
    /// The type `public.heif`.
    public static var heif: UTType { UTType.system("public.heif") }
    /// The type `public.heic`.
    public static var heic: UTType { UTType.system("public.heic") }
    /// The type `public.avif`.
    public static var avif: UTType { UTType.system("public.avif") }
    /// The type `org.webmproject.webp`.
    public static var webP: UTType { UTType.system("org.webmproject.webp") }
    /// The type `public.svg-image`.
    public static var svg: UTType { UTType.system("public.svg-image") }
    /// The type `public.camera-raw-image`.
    public static var rawImage: UTType { UTType.system("public.camera-raw-image") }
    /// The type `public.3d-content`.
    public static var threeDContent: UTType { UTType.system("public.3d-content") }
    /// The type `com.adobe.pdf`.
    public static var pdf: UTType { UTType.system("com.adobe.pdf") }
    /// The type `org.idpf.epub-container`.
    public static var epub: UTType { UTType.system("org.idpf.epub-container") }
    /// The type `public.presentation`.
    public static var presentation: UTType { UTType.system("public.presentation") }
    /// The type `public.spreadsheet`.
    public static var spreadsheet: UTType { UTType.system("public.spreadsheet") }
    /// The type `public.database`.
    public static var database: UTType { UTType.system("public.database") }
    /// The type `public.audiovisual-content`.
    public static var audiovisualContent: UTType { UTType.system("public.audiovisual-content") }
    /// The type `public.movie`.
    public static var movie: UTType { UTType.system("public.movie") }
    /// The type `public.video`.
    public static var video: UTType { UTType.system("public.video") }
    /// The type `public.audio`.
    public static var audio: UTType { UTType.system("public.audio") }
    /// The type `com.apple.quicktime-movie`.
    public static var quickTimeMovie: UTType { UTType.system("com.apple.quicktime-movie") }
    /// The type `public.mpeg`.
    public static var mpeg: UTType { UTType.system("public.mpeg") }
    /// The type `public.mpeg-2-video`.
    public static var mpeg2Video: UTType { UTType.system("public.mpeg-2-video") }
    /// The type `public.mpeg-2-transport-stream`.
    public static var mpeg2TransportStream: UTType { UTType.system("public.mpeg-2-transport-stream") }
    /// The type `public.mpeg-4`.
    public static var mpeg4Movie: UTType { UTType.system("public.mpeg-4") }
    /// The type `public.mpeg-4-audio`.
    public static var mpeg4Audio: UTType { UTType.system("public.mpeg-4-audio") }
    /// The type `com.apple.m4v-video`.
    public static var appleProtectedMPEG4Video: UTType { UTType.system("com.apple.m4v-video") }
    /// The type `public.avi`.
    public static var avi: UTType { UTType.system("public.avi") }
    /// The type `public.mp3`.
    public static var mp3: UTType { UTType.system("public.mp3") }
    /// The type `com.microsoft.waveform-audio`.
    public static var wav: UTType { UTType.system("com.microsoft.waveform-audio") }
    /// The type `public.aiff-audio`.
    public static var aiff: UTType { UTType.system("public.aiff-audio") }
    /// The type `public.midi-audio`.
    public static var midi: UTType { UTType.system("public.midi-audio") }
    /// The type `public.playlist`.
    public static var playlist: UTType { UTType.system("public.playlist") }
    /// The type `public.m3u-playlist`.
    public static var m3uPlaylist: UTType { UTType.system("public.m3u-playlist") }
    /// The type `public.archive`.
    public static var archive: UTType { UTType.system("public.archive") }
    /// The type `public.zip-archive`.
    public static var zip: UTType { UTType.system("public.zip-archive") }
    /// The type `org.gnu.gnu-zip-archive`.
    public static var gzip: UTType { UTType.system("org.gnu.gnu-zip-archive") }
    /// The type `public.bzip2-archive`.
    public static var bz2: UTType { UTType.system("public.bzip2-archive") }
    /// The type `public.disk-image`.
    public static var diskImage: UTType { UTType.system("public.disk-image") }
    /// The type `public.font`.
    public static var font: UTType { UTType.system("public.font") }
    /// The type `public.x509-certificate`.
    public static var x509Certificate: UTType { UTType.system("public.x509-certificate") }

    /// Returns a system type from the shared registry's current snapshot.
    static func system(_ identifier: String) -> UTType {
        guard let type = UTType(identifier) else {
            preconditionFailure("system type \(identifier) missing from the built-in table")
        }
        return type
    }
}

/// Folio's built-in system type declarations: Apple's core types, both trees, with the tags Linux
/// needs. One line a type: `identifier | conforms to | extensions | MIME types | description`.
/// The first extension and MIME type of a line are the preferred ones.
enum SystemTypeTable {
    static let text = """
        public.item | | | | item
        public.content | | | | content
        public.composite-content | public.content | | | composite content
        public.data | public.item | | application/octet-stream | data
        public.directory | public.item | | | directory
        public.folder | public.directory | | inode/directory | folder
        public.volume | public.folder | | inode/mount-point | volume
        com.apple.package | public.directory | | | package
        com.apple.bundle | public.directory | | | bundle
        public.symlink | public.item | | inode/symlink | symbolic link
        com.apple.resolvable | | | | resolvable
        com.apple.alias-file | public.data, com.apple.resolvable | | | alias
        public.url | public.data | | | URL
        public.file-url | public.url | | | file URL
        public.executable | public.item | | | executable
        public.unix-executable | public.data, public.executable | | application/x-executable | Unix executable
        com.microsoft.windows-executable | public.data, public.executable | exe | application/x-msdownload, application/x-ms-dos-executable | Windows executable
        com.apple.application | public.executable | | | application
        com.apple.application-bundle | com.apple.application, com.apple.bundle, com.apple.package | app | | application bundle
        public.text | public.data, public.content | | | text
        public.plain-text | public.text | txt, text | text/plain | plain text
        public.utf8-plain-text | public.plain-text | | | UTF-8 plain text
        public.utf16-external-plain-text | public.plain-text | | | UTF-16 plain text with BOM
        public.utf16-plain-text | public.plain-text | | | UTF-16 plain text
        public.delimited-values-text | public.text | | | delimited values text
        public.comma-separated-values-text | public.delimited-values-text | csv | text/csv, text/comma-separated-values | comma-separated values
        public.tab-separated-values-text | public.delimited-values-text | tsv | text/tab-separated-values | tab-separated values
        public.utf8-tab-separated-values-text | public.tab-separated-values-text | | | UTF-8 tab-separated values
        public.rtf | public.text | rtf | text/rtf, application/rtf | rich text document
        com.apple.rtfd | com.apple.package, public.composite-content | rtfd | | rich text document with attachments
        com.apple.flat-rtfd | public.data, public.composite-content | flat-rtfd | | flat rich text document with attachments
        public.html | public.text | html, htm, shtml, shtm | text/html | HTML text
        public.xml | public.text | xml | application/xml, text/xml | XML text
        public.xhtml | public.xml | xhtml, xht | application/xhtml+xml | XHTML text
        public.json | public.text | json | application/json | JSON text
        public.geojson | public.json | geojson | application/geo+json | GeoJSON text
        public.yaml | public.text | yaml, yml | application/yaml, application/x-yaml, text/yaml, text/x-yaml | YAML text
        public.css | public.text | css | text/css | CSS style sheet
        net.daringfireball.markdown | public.plain-text | md, markdown, mdown | text/markdown, text/x-markdown | Markdown text
        public.log | public.plain-text | log | text/x-log | log file
        public.source-code | public.plain-text | | | source code
        public.assembly-source | public.source-code | s | text/x-asm | assembly source
        public.c-source | public.source-code | c | text/x-csrc, text/x-c | C source
        public.objective-c-source | public.source-code | m | text/x-objcsrc | Objective-C source
        public.swift-source | public.source-code | swift | text/x-swift | Swift source
        public.c-plus-plus-source | public.source-code | cpp, cp, c++, cc, cxx | text/x-c++src | C++ source
        public.objective-c-plus-plus-source | public.source-code | mm | text/x-objc++src | Objective-C++ source
        public.c-header | public.source-code | h | text/x-chdr | C header
        public.c-plus-plus-header | public.source-code | hpp, hxx, hh, h++ | text/x-c++hdr | C++ header
        com.sun.java-source | public.source-code | java | text/x-java | Java source
        public.script | public.source-code | | | script
        com.netscape.javascript-source | public.script | js, jsm, mjs | text/javascript, application/javascript, application/x-javascript | JavaScript script
        public.shell-script | public.script | sh, command | application/x-shellscript, text/x-shellscript, application/x-sh | shell script
        public.python-script | public.script | py | text/x-python, text/x-python3 | Python script
        public.ruby-script | public.script | rb, rbw | application/x-ruby, text/x-ruby | Ruby script
        public.perl-script | public.script | pl, pm | application/x-perl, text/x-perl | Perl script
        public.php-script | public.script | php, php3, php4, ph3, ph4, phtml | application/x-php, text/php | PHP script
        com.apple.property-list | public.data | plist | | property list
        com.apple.xml-property-list | public.xml, com.apple.property-list | | | XML property list
        com.apple.binary-property-list | com.apple.property-list | | | binary property list
        public.contact | public.item | | | contact
        public.vcard | public.text, public.contact | vcf, vcard | text/vcard, text/x-vcard, text/directory | vCard
        public.calendar-event | public.item | | | calendar event
        com.apple.ical.ics | public.text, public.calendar-event | ics, ifb | text/calendar | iCalendar file
        public.message | public.item | | | message
        public.email-message | public.message | | | email message
        com.apple.mail.email | public.data, public.email-message | eml | message/rfc822 | email message
        public.image | public.data, public.content | | | image
        public.jpeg | public.image | jpeg, jpg, jpe | image/jpeg, image/jpg, image/pjpeg | JPEG image
        public.png | public.image | png | image/png | PNG image
        com.compuserve.gif | public.image | gif | image/gif | GIF image
        public.tiff | public.image | tiff, tif | image/tiff | TIFF image
        com.microsoft.bmp | public.image | bmp, dib | image/bmp, image/x-bmp, image/x-ms-bmp | Windows bitmap image
        com.microsoft.ico | public.image | ico | image/vnd.microsoft.icon, image/x-icon | Windows icon image
        public.heif-standard | public.image | | | HEIF standard image
        public.heic | public.heif-standard | heic | image/heic | HEIC image
        public.heif | public.heif-standard | heif | image/heif | HEIF image
        public.avif | public.image | avif | image/avif | AVIF image
        org.webmproject.webp | public.image | webp | image/webp | WebP image
        public.svg-image | public.image, public.xml | svg | image/svg+xml | SVG image
        public.jpeg-2000 | public.image | jp2, jpf, jpx, j2k | image/jp2 | JPEG 2000 image
        public.xbitmap-image | public.image | xbm | image/x-xbitmap | X bitmap image
        com.adobe.photoshop-image | public.image | psd | image/vnd.adobe.photoshop, image/x-psd | Adobe Photoshop document
        com.truevision.tga-image | public.image | tga | image/x-tga | TGA image
        com.ilm.openexr-image | public.image | exr | image/x-exr | OpenEXR image
        public.camera-raw-image | public.image | | | raw image
        com.adobe.raw-image | public.camera-raw-image | dng | image/x-adobe-dng | DNG raw image
        com.canon.cr2-raw-image | public.camera-raw-image | cr2 | image/x-canon-cr2 | Canon CR2 raw image
        com.nikon.raw-image | public.camera-raw-image | nef | image/x-nikon-nef | Nikon raw image
        com.sony.arw-raw-image | public.camera-raw-image | arw | image/x-sony-arw | Sony raw image
        public.3d-content | public.content | | | 3D content
        com.adobe.pdf | public.data, public.composite-content | pdf | application/pdf, application/x-pdf | PDF document
        com.adobe.postscript | public.data | ps | application/postscript | PostScript document
        com.adobe.encapsulated-postscript | com.adobe.postscript | eps, epsf | image/x-eps | Encapsulated PostScript
        public.presentation | public.composite-content | | | presentation
        public.spreadsheet | public.content | | | spreadsheet
        public.database | public.item | | | database
        org.idpf.epub-container | public.data, public.composite-content | epub | application/epub+zip | EPUB book
        com.microsoft.word.doc | public.data, public.composite-content | doc | application/msword | Microsoft Word document
        com.microsoft.excel.xls | public.data, public.spreadsheet | xls | application/vnd.ms-excel | Microsoft Excel spreadsheet
        com.microsoft.powerpoint.ppt | public.data, public.presentation | ppt | application/vnd.ms-powerpoint | Microsoft PowerPoint presentation
        org.openxmlformats.openxml | public.zip-archive | | | Office Open XML document
        org.openxmlformats.wordprocessingml.document | org.openxmlformats.openxml, public.composite-content | docx | application/vnd.openxmlformats-officedocument.wordprocessingml.document | Word document
        org.openxmlformats.spreadsheetml.sheet | org.openxmlformats.openxml, public.spreadsheet | xlsx | application/vnd.openxmlformats-officedocument.spreadsheetml.sheet | Excel workbook
        org.openxmlformats.presentationml.presentation | org.openxmlformats.openxml, public.presentation | pptx | application/vnd.openxmlformats-officedocument.presentationml.presentation | PowerPoint presentation
        org.oasis-open.opendocument.text | public.data, public.composite-content | odt | application/vnd.oasis.opendocument.text | OpenDocument text
        org.oasis-open.opendocument.spreadsheet | public.data, public.spreadsheet | ods | application/vnd.oasis.opendocument.spreadsheet | OpenDocument spreadsheet
        org.oasis-open.opendocument.presentation | public.data, public.presentation | odp | application/vnd.oasis.opendocument.presentation | OpenDocument presentation
        com.apple.keynote.key | com.apple.package, public.presentation | key | application/vnd.apple.keynote | Keynote presentation
        public.audiovisual-content | public.data, public.content | | | audiovisual content
        public.movie | public.audiovisual-content | | | movie
        public.video | public.movie | | | video
        public.audio | public.audiovisual-content | | | audio
        com.apple.quicktime-movie | public.movie | mov, qt | video/quicktime | QuickTime movie
        public.mpeg | public.movie | mpeg, mpg, mpe, m1v | video/mpeg | MPEG movie
        public.mpeg-2-video | public.video | m2v | video/mpeg2 | MPEG-2 video
        public.mpeg-2-transport-stream | public.movie | m2ts, mts, ts | video/mp2t | MPEG-2 transport stream
        public.mpeg-4 | public.movie | mp4, mpg4 | video/mp4 | MPEG-4 movie
        public.mpeg-4-audio | public.mpeg-4, public.audio | m4a | audio/mp4, audio/x-m4a | MPEG-4 audio
        com.apple.m4v-video | public.mpeg-4 | m4v | video/x-m4v | MPEG-4 video
        public.avi | public.movie | avi | video/x-msvideo, video/avi | AVI movie
        org.webmproject.webm | public.movie | webm | video/webm | WebM movie
        public.3gpp | public.movie | 3gp, 3gpp | video/3gpp | 3GPP movie
        public.3gpp2 | public.movie | 3g2, 3gp2 | video/3gpp2 | 3GPP2 movie
        public.mp3 | public.audio | mp3 | audio/mpeg, audio/mp3, audio/x-mp3 | MP3 audio
        com.microsoft.waveform-audio | public.audio | wav, wave | audio/vnd.wave, audio/wav, audio/x-wav | Waveform audio
        public.aifc-audio | public.audio | aifc, aic | audio/x-aifc | AIFF-C audio
        public.aiff-audio | public.aifc-audio | aiff, aif | audio/aiff, audio/x-aiff | AIFF audio
        org.xiph.flac | public.audio | flac | audio/flac, audio/x-flac | FLAC audio
        public.midi-audio | public.audio | mid, midi | audio/midi, audio/x-midi | MIDI audio
        public.playlist | public.item | | | playlist
        public.m3u-playlist | public.playlist, public.text | m3u, m3u8 | audio/x-mpegurl, audio/mpegurl | M3U playlist
        public.archive | public.data | | | archive
        public.zip-archive | public.data, public.archive | zip | application/zip, application/x-zip-compressed, application/x-zip | ZIP archive
        com.pkware.zip-archive | public.zip-archive | | | ZIP archive
        com.sun.java-archive | public.zip-archive, public.executable | jar | application/java-archive, application/x-java-archive | Java archive
        org.gnu.gnu-zip-archive | public.data, public.archive | gz, gzip | application/gzip, application/x-gzip | gzip archive
        public.bzip2-archive | public.data, public.archive | bz2, bzip2 | application/x-bzip2, application/x-bzip | bzip2 archive
        public.tar-archive | public.data, public.archive | tar | application/x-tar | tar archive
        org.7-zip.7-zip-archive | public.data, public.archive | 7z | application/x-7z-compressed | 7-Zip archive
        com.rarlab.rar-archive | public.data, public.archive | rar | application/vnd.rar, application/x-rar | RAR archive
        public.disk-image | public.data, public.archive | | | disk image
        public.iso-image | public.disk-image | iso | application/x-iso9660-image, application/x-cd-image | ISO disk image
        public.font | public.data, public.content | | | font
        public.truetype-ttf-font | public.font | ttf | font/ttf, application/x-font-ttf | TrueType font
        public.opentype-font | public.font | otf | font/otf, application/x-font-otf | OpenType font
        public.truetype-collection-font | public.font | ttc | font/collection | TrueType font collection
        public.x509-certificate | public.data | cer, crt, der | application/pkix-cert, application/x-x509-ca-cert | X.509 certificate
        """

    /// The table as declarations, in table order; parsed once per process.
    static let declarations: [TypeDeclaration] = parse()

    private static func parse() -> [TypeDeclaration] {
        var result: [TypeDeclaration] = []
        result.reserveCapacity(170)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters()
            }
            precondition(fields.count == 5, "malformed system type line: \(line)")
            func list(_ field: Substring) -> [String] {
                field.split(separator: ",").map { String($0.trimmingCharacters()) }
            }
            var tags: [UTTagClass: [String]] = [:]
            if !fields[2].isEmpty { tags[.filenameExtension] = list(fields[2]) }
            if !fields[3].isEmpty { tags[.mimeType] = list(fields[3]) }
            result.append(
                TypeDeclaration(
                    identifier: String(fields[0]),
                    conformsTo: list(fields[1]),
                    tags: tags,
                    description: String(fields[4]),
                    origin: .system
                ))
        }
        return result
    }
}

extension Substring {
    func trimmingCharacters() -> Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}

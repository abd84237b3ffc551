/// The parents a shared-mime-info type gets from its name, so that the functional tree covers it:
/// `+xml`, `+json` and `+zip` suffixes, and the media type (`image/…` → public.image). A type left with
/// no parent at all conforms to public.data, except `inode/…` types.
///
/// The built-in identifiers are looked up once per snapshot, not once per MIME type.
struct ImpliedParents {
    private let xml, json, zip, plainText, image, audio, movie, font, model, item, data: Int32?

    init(index: (String) -> Int32?) {
        xml = index("public.xml")
        json = index("public.json")
        zip = index("public.zip-archive")
        plainText = index("public.plain-text")
        image = index("public.image")
        audio = index("public.audio")
        movie = index("public.movie")
        font = index("public.font")
        model = index("public.3d-content")
        item = index("public.item")
        data = index("public.data")
    }

    /// Appends the implied parents of `mime` (a lowercased canonical MIME type) to `parents`,
    /// skipping `excluding` (the entry itself) and any already present.
    func add(to parents: inout [Int32], forMimeType mime: String, excluding own: Int32) {
        func append(_ index: Int32?) {
            if let index, index != own { parents.appendIfAbsent(index) }
        }
        var bySuffix = false
        if mime.hasSuffix("+xml") { append(xml); bySuffix = true }
        if mime.hasSuffix("+json") { append(json); bySuffix = true }
        if mime.hasSuffix("+zip") { append(zip); bySuffix = true }
        let media = mime.utf8.prefix { $0 != UInt8(ascii: "/") }
        var isInode = false
        switch String(Substring(media)) {
        case "text": if !bySuffix { append(plainText) }
        case "image": append(image)
        case "audio": append(audio)
        case "video": append(movie)
        case "font": append(font)
        case "model": append(model)
        case "inode": append(item); isInode = true
        case "x-content": append(item)
        default: break
        }
        if parents.isEmpty && !isInode { append(data) }
    }
}

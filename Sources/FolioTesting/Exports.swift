// The real servers, scratch folders and process runs live in FolioServers, which `folio bench` links
// without the rest of the fixtures; the tests get them from here.
@_exported import FolioServers

// Apps `import Folio` and get the whole public API from this one module.
@_exported public import UniformTypes
@_exported public import struct FolioSystem.FolioPaths
@_exported public import enum FolioSystem.AtomicFile
// The wire protocol's values (package API only: nothing of it is public).
@_exported public import FolioWire

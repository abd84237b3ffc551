public enum FolioTestingPlaceholder {}

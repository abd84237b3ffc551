public enum FolioDaemonPlaceholder {}

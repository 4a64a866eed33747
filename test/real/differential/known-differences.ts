/**
 * The steps of the differential suite whose emulator answer differs from kube-apiserver's, each
 * with the reason it stays (docs/emulator.md, "Measured against the real API server").
 * `<sequence name> #<step>` -> reason.
 */
export const KNOWN_DIFFERENCES: Record<string, string> = {
  'watch: from a resourceVersion, bookmarks, initial events #3':
    "watch-list (sendInitialEvents): kube-apiserver on Debian's etcd 3.4.23 refuses it (RequestWatchProgress needs etcd 3.4.31 or 3.5.13); the emulator serves it as kube-apiserver on a newer etcd does. The sync lists and watches instead",
};

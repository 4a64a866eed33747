/**
 * The steps of the differential suite whose emulator answer differs from kube-apiserver's, each
 * with the reason it stays (docs/emulator.md, "Measured against the real API server").
 * `<sequence name> #<step>` -> reason.
 */
export const KNOWN_DIFFERENCES: Record<string, string> = {
  'endpoints CRUD and optimistic concurrency #5':
    'uid precondition failure: the message and details.kind are worded as in older releases (open)',
  'endpoints CRUD and optimistic concurrency #6':
    'DELETE of Endpoints answers the object; kube-apiserver answers a Status (open)',
  'no-op writes and empty maps #0': 'empty labels/annotations maps are kept (open)',
  'no-op writes and empty maps #1': 'a no-op update makes a new resourceVersion (open)',
  'no-op writes and empty maps #2': 'follows from #1 (resourceVersion numbering)',
  'no-op writes and empty maps #3': 'follows from #1 (resourceVersion numbering)',
  'no-op writes and empty maps #4': 'an emptied labels map is kept (open)',
  'Endpoints validation and defaulting #3': 'the unknown-field warning drops list indices (open)',
  'EndpointSlice defaulting, validation, immutability #0':
    'an endpoint without conditions is not defaulted to {} (open)',
  'EndpointSlice defaulting, validation, immutability #2':
    'the required-addresses message carries a detail kube-apiserver 1.37 leaves out (open)',
  'EndpointSlice defaulting, validation, immutability #3':
    'a changed addressType: kube-apiserver reports only the immutability, as "Invalid value: null" (open)',
  'EndpointSlice defaulting, validation, immutability #4': 'follows from #0 (conditions default)',
  'the four patch types #2':
    'a failed JSON-patch test: kube-apiserver adds an empty details (open)',
  'the four patch types #6': 'the message for a patch that is not JSON (open)',
  'server-side apply: create, owners, conflicts, force #0':
    "an applier's managed fields include the map's own '.' entry (open)",
  'server-side apply: create, owners, conflicts, force #1':
    'the conflict message and causes are worded as in older releases (open)',
  'server-side apply: create, owners, conflicts, force #2':
    'a manager left with no fields is kept in managedFields (open)',
  'server-side apply: create, owners, conflicts, force #3': 'follows from #2',
  'dryRun #3': 'DELETE of Endpoints answers the object; kube-apiserver answers a Status (open)',
  'list: pagination, selectors #8': 'the label-selector parse error is worded differently (open)',
  'list: pagination, selectors #10':
    'the invalid-continue-token message is worded differently (open)',
  'watch: from a resourceVersion, bookmarks, initial events #3':
    'watch-list (sendInitialEvents): kube-apiserver on etcd 3.4 refuses it (RequestWatchProgress needs etcd 3.5); the emulator serves it as kube-apiserver on etcd 3.5 does. The sync lists and watches instead',
  'watch: from a resourceVersion, bookmarks, initial events #5':
    'DELETE of Endpoints answers the object; kube-apiserver answers a Status (open)',
};

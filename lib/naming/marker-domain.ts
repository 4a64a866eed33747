/**
 * The domain of the labels and annotations that mark host objects as ours (docs/sync.md, "Metadata
 * of the host copy").
 */

/**
 * Default `<domain>` of marker keys. It is a deployment setting so that an installation can adopt
 * the objects of an existing one that used another domain.
 */
export const DEFAULT_MARKER_DOMAIN = 'virtualcluster.loft.sh';

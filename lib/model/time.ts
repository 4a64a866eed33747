/** Timestamps as the Kubernetes API writes them. */

/** The last second {@link rfc3339} formatted, and its text: every write of a second shares one. */
let lastSecond = { second: Number.NaN, text: '' };

/**
 * `ms` (milliseconds since the epoch) as RFC 3339 in whole seconds, UTC, as the API serialises
 * `creationTimestamp`, managed-fields times and Events' `firstTimestamp`/`lastTimestamp`. The text
 * of the last second is kept: every create and update in the emulator stamps one or two, and
 * formatting was a tenth of storing a create.
 */
export function rfc3339(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond.second) {
    lastSecond = { second, text: new Date(second * 1000).toISOString().replace('.000Z', 'Z') };
  }
  return lastSecond.text;
}

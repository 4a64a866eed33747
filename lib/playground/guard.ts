/**
 * Which requests the playground answers. It listens on 127.0.0.1 only, but a web page from
 * anywhere can still reach a loopback port through the browser: with a DNS name that resolves to
 * 127.0.0.1 (DNS rebinding: the browser then sends that name as `Host`) or with a cross-site
 * request (the browser sends the page's `Origin`). So every request must name a loopback host
 * and, when it carries an origin, a loopback origin on this very port.
 */

/** Host names a browser on this machine uses for the loopback interface. */
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** `host[:port]` split at its last colon (a bracketed IPv6 literal keeps its colons). */
function splitHost(value: string): { name: string; port: string | undefined } {
  const at = value.lastIndexOf(':');
  if (at === -1 || value.endsWith(']')) return { name: value, port: undefined };
  return { name: value.slice(0, at), port: value.slice(at + 1) };
}

/**
 * Whether a `Host` header names this server on the loopback interface: a loopback name and, when
 * a port is given, this port (`port` is the one the server listens on).
 */
export function isLoopbackHost(host: string | undefined, port: number): boolean {
  if (host === undefined || host === '') return false;
  const { name, port: given } = splitHost(host.toLowerCase());
  if (!LOOPBACK_NAMES.has(name)) return false;
  return given === undefined ? port === 80 : given === String(port);
}

/**
 * Whether an `Origin` header is acceptable: absent (same-origin navigations and most same-origin
 * GETs send none) or `http://<loopback host>:<port>`. `null` (sandboxed frames, file pages) and
 * every other site are refused.
 */
export function isLoopbackOrigin(origin: string | undefined, port: number): boolean {
  if (origin === undefined) return true;
  if (!origin.startsWith('http://')) return false;
  const rest = origin.slice('http://'.length);
  if (rest.includes('/') || rest.includes('@')) return false;
  return isLoopbackHost(rest, port);
}

/** Why a request is refused (for the 403 body), or undefined when it may be answered. */
export function refusal(
  headers: { host?: string | undefined; origin?: string | undefined },
  port: number,
): string | undefined {
  if (!isLoopbackHost(headers.host, port)) {
    return 'refused: the Host header must name this machine (127.0.0.1 or localhost with the playground port); open the address the command printed';
  }
  if (!isLoopbackOrigin(headers.origin, port)) {
    return 'refused: requests from other sites are not answered (the Origin header is not this playground)';
  }
  return undefined;
}

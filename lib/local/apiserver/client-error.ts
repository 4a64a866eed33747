/**
 * Answers the requests Node's HTTP parser gives up on (malformed request, headers too large, a
 * body that does not arrive in time) with a `Status` body like every other error, and closes the
 * connection. Nothing is written into a response that is already under way (a watch stream).
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { failure, type StatusBody } from './errors.ts';

const reasons: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

function statusFor(code: string | undefined, requestTimeoutMs: number): StatusBody {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return failure(
      431,
      'RequestHeaderFieldsTooLarge',
      'request header fields too large: keep the URL (selectors included) and headers under 16 KiB',
    );
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return failure(
      408,
      'Timeout',
      `the request was not received completely within ${requestTimeoutMs / 1000} s; send the whole body (and end a chunked body with its last chunk)`,
    );
  }
  return failure(400, 'BadRequest', 'malformed HTTP request');
}

/** A `clientError` listener for an emulated cluster's server. */
export function clientErrorHandler(
  requestTimeoutMs: number,
): (err: Error & { code?: string }, socket: Duplex) => void {
  return (err, socket) => {
    // Node's own rule: answer only when no response of this connection has started.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const status = statusFor(err.code, requestTimeoutMs);
      const body = JSON.stringify(status);
      socket.end(
        `HTTP/1.1 ${status.code} ${reasons[status.code] ?? 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    } else {
      socket.destroy();
    }
  };
}

import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_STATUS } from './errors/error-status';

/**
 * Requests Node's HTTP parser refuses before any middleware runs (headers over 16 KiB, a
 * malformed request line or header) still get the API's error envelope instead of Node's
 * bare `431`/`400` without a body. Both become 400 VALIDATION_FAILED: the API has no code
 * for 431. The connection is closed afterwards, as Node does.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already under way on this connection cannot be replaced: just close it.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const message = error.code === 'HPE_HEADER_OVERFLOW' ? 'The request headers exceed 16 KiB' : 'The request is malformed';
    const body = JSON.stringify({ error: { code: 'VALIDATION_FAILED', message, status: ERROR_STATUS.VALIDATION_FAILED } });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

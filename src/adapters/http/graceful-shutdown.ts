import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, Socket } from 'node:net';
import { INestApplication, Logger } from '@nestjs/common';

export interface GracefulShutdownOptions {
  /** How long in-flight requests may take to finish before their connections are cut. */
  timeoutMs: number;
  /**
   * How long a connection without a request in progress may still deliver one after shutdown
   * began (a client that just connected, or reused a kept-alive connection); it is served with
   * `Connection: close`. Then idle connections are closed.
   */
  idleGraceMs?: number;
  /** Called with the exit code once everything is closed (tests pass their own). */
  exit?: (code: number) => void;
  signals?: NodeJS.Signals[];
}

/**
 * Graceful shutdown on SIGTERM/SIGINT, in this order:
 * 1. stop accepting connections (the listening socket closes: new connections are refused);
 * 2. let in-flight requests finish, their responses carrying `Connection: close`; connections
 *    without a request are closed after a short grace; after the timeout the remaining
 *    connections are cut;
 * 3. close the application: the outbox dispatcher drains, scheduled jobs stop, the database
 *    pool and the Redis client close (Nest's destroy and shutdown hooks);
 * 4. exit 0 — or 1 when requests had to be cut or closing failed.
 *
 * Nest's own `enableShutdownHooks` runs the destroy hooks before it stops the HTTP server and
 * re-raises the signal (exit code 143), and Node's `server.close()` drops at once connections
 * whose request has not been read yet; neither is used.
 */
export function installGracefulShutdown(app: INestApplication, options: GracefulShutdownOptions): () => Promise<void> {
  const logger = new Logger('Shutdown');
  const server = app.getHttpServer() as Server;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const idleGraceMs = options.idleGraceMs ?? 1000;
  /** Open connections and the number of requests each has in progress. */
  const connections = new Map<Socket, number>();
  let stopping: Promise<void> | null = null;

  const closeIfIdle = (socket: Socket) => {
    if (connections.get(socket) === 0) socket.destroy();
  };

  server.on('connection', (socket: Socket) => {
    connections.set(socket, 0);
    socket.once('close', () => connections.delete(socket));
    if (stopping) setTimeout(() => closeIfIdle(socket), idleGraceMs).unref();
  });

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    connections.set(socket, (connections.get(socket) ?? 0) + 1);
    if (stopping) res.setHeader('Connection', 'close');
    // Emitted exactly once: after 'finish', or when the client went away first.
    res.on('close', () => {
      if (connections.has(socket)) connections.set(socket, Math.max(0, (connections.get(socket) ?? 1) - 1));
      if (stopping) setImmediate(() => closeIfIdle(socket));
    });
  });

  const shutdown = (signal: string): Promise<void> => {
    stopping ??= (async () => {
      const busy = [...connections.values()].reduce((sum, n) => sum + n, 0);
      logger.log(`${signal} received: refusing new connections, finishing ${busy} request(s) in flight`);
      let cut = false;
      // The listening socket only (net.Server#close): connections are handled below.
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      for (const [socket, requests] of connections) {
        const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
        if (requests > 0 && res && !res.headersSent) res.setHeader('Connection', 'close');
        if (requests === 0) setTimeout(() => closeIfIdle(socket), idleGraceMs).unref();
      }
      const timer = setTimeout(() => {
        cut = true;
        logger.warn(`${connections.size} connection(s) still open after ${options.timeoutMs} ms: closing them`);
        for (const socket of connections.keys()) socket.destroy();
      }, options.timeoutMs);
      await closed;
      clearTimeout(timer);
      let code = cut ? 1 : 0;
      try {
        await app.close();
      } catch (error) {
        logger.error({ err: error }, 'error while closing the application');
        code = 1;
      }
      logger.log(`shutdown complete (exit code ${code})`);
      exit(code);
    })();
    return stopping;
  };

  for (const signal of options.signals ?? (['SIGTERM', 'SIGINT'] as NodeJS.Signals[])) {
    process.once(signal, () => void shutdown(signal));
  }
  return () => shutdown('shutdown');
}

import type { Socket } from 'node:net';

/**
 * How long and how much a refused request's connection is still read after its answer (see
 * lingerBeforeClose). nginx's lingering_time and lingering_timeout play the same part.
 */
export interface LingerBounds {
  /** At most this long after the answer was sent. */
  totalMs: number;
  /** Closed sooner when the client sends nothing for this long. */
  idleMs: number;
  /** Closed sooner once this many more bytes arrived. */
  maxBytes: number;
}

export const DEFAULT_LINGER: LingerBounds = { totalMs: 5_000, idleMs: 2_000, maxBytes: 16 * 1024 * 1024 };

const POLL_MS = 100;
const lingering = new WeakSet<Socket>();

/**
 * Closes a connection whose request is still arriving without losing the answer sent on it.
 *
 * Node closes a `Connection: close` answer's socket as soon as the answer is written. If the
 * client is still sending (a body refused with 413 while it streams), the bytes that arrive
 * after the close make the kernel answer with a reset, and a reset makes the client's kernel
 * drop the answer it had not read yet: the client sees "connection reset" instead of the 413.
 * So this socket's close becomes a lingering close: the answer is followed by a FIN (the
 * client reads the answer and an end), and what the client still sends is read and discarded
 * (Node's parser discards the rest of the request body) until the client closes its side or
 * a bound is reached.
 */
export function lingerBeforeClose(socket: Socket, bounds: LingerBounds = DEFAULT_LINGER): void {
  // Fastify's inject hands requests a stand-in socket with nothing to linger on.
  if (typeof socket?.destroySoon !== 'function' || lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  const closeNow = socket.destroySoon.bind(socket);
  // Node's HTTP server calls destroySoon once a closing answer is written (res._last).
  socket.destroySoon = () => {
    if (!socket.writable) return closeNow();
    socket.end();
    const startedAt = Date.now();
    const startBytes = socket.bytesRead;
    let seenBytes = startBytes;
    let lastActivity = startedAt;
    const poll = setInterval(() => {
      const now = Date.now();
      if (socket.bytesRead !== seenBytes) {
        seenBytes = socket.bytesRead;
        lastActivity = now;
      }
      if (now - startedAt >= bounds.totalMs || now - lastActivity >= bounds.idleMs || seenBytes - startBytes >= bounds.maxBytes) socket.destroy();
    }, POLL_MS);
    poll.unref();
    socket.once('close', () => clearInterval(poll));
    // The client finished sending: nothing more can arrive to reset the connection.
    socket.once('end', () => socket.destroy());
    if (socket.readableEnded) socket.destroy();
  };
}

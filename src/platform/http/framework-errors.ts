import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../logging/logger.js';
import { sendProblem, toProblem } from './http-conventions.js';
import { Problems, problemBody, type Problem } from './problem.js';

/**
 * Fastify's `frameworkErrors`: errors its router raises before any route or hook runs
 * (a malformed percent-encoding, a path parameter over the length bound) leave through the
 * same problem path as every other error.
 */
export function frameworkErrors(logger: Logger) {
  return (error: Error, request: FastifyRequest, reply: FastifyReply): void => {
    sendProblem(reply, toProblem(error, logger, String(request.id), request));
  };
}

function clientErrorProblem(code: string | undefined): Problem {
  if (code === 'HPE_HEADER_OVERFLOW') return Problems.headersTooLarge().problem;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return Problems.requestTimeout().problem;
  return Problems.badRequest().problem;
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes (an unknown method, raw
 * non-ASCII in the path, a request line or headers over the size limit, a timeout). There is no
 * request object, so the answer is written to the socket: a problem document with a fresh
 * request id and `Connection: close`, since the connection is closed right after it.
 */
export function clientErrorHandler(logger: Logger) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = randomUUID();
    const problem = clientErrorProblem(error.code);
    logger.debug({ request_id: requestId, code: error.code, status: problem.status }, 'refused a malformed request');
    if (socket.writable) {
      const body = JSON.stringify(problemBody(problem, requestId));
      socket.write(
        `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
          'Content-Type: application/problem+json\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${requestId}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.end();
  };
}

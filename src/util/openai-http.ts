/**
 * What our two OpenAI-compatible servers (the juror simulator, serve-local) share: binding,
 * OpenAI-shaped JSON errors and a size-bounded request body.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ReasoningJuryError } from './errors.js';

export interface Listening {
  /** OpenAI-style base URL: http://host:port/v1 */
  url: string;
  port: number;
  /** Stop accepting, run `beforeClose` (abort what is in flight), drop open connections; idempotent. */
  close(beforeClose?: () => void): Promise<void>;
}

/**
 * Bind one of our OpenAI-compatible servers (the simulator, serve-local) and give back its base URL
 * and an idempotent close. Node's request timeout is off: long generations and simulated hangs are
 * the client's to time out.
 */
export async function listenOpenAICompatible(server: Server, port = 0, host = '127.0.0.1'): Promise<Listening> {
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${addr.port}/v1`,
    port: addr.port,
    close(beforeClose) {
      closing ??= new Promise<void>((resolve) => {
        beforeClose?.();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** An error that becomes an OpenAI-shaped JSON error response. */
export class HttpError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** The error body the openai client parses: {error: {message, type, param, code}}. */
export function errorBody(status: number, code: string, message: string): { error: { message: string; type: string; param: null; code: string } } {
  const type = status === 429 ? 'rate_limit_error' : status === 401 ? 'authentication_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: null, code } };
}

export function sendError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, errorBody(status, code, message), headers);
}

/** The request body as text, refusing more than `maxBytes` (413) and a client that leaves mid-body (400). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return (await readBodyBytes(req, maxBytes)).toString('utf8');
}

/** The request body parsed as JSON; a body that is not JSON is a 400 `invalid_json`. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const text = await readBody(req, maxBytes);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, 'invalid_json', `request body is not JSON: ${(e as Error).message}`);
  }
}

/** The request body as bytes (a multipart upload is not text), with readBody's limits. */
export function readBodyBytes(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) {
        reject(new HttpError(413, 'body_too_large', `request body above ${maxBytes} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    // A client that leaves mid-body never sends 'end'; settle so the handler does not dangle.
    req.on('close', () => {
      if (!req.complete) reject(new HttpError(400, 'incomplete_body', 'client closed the connection before the body was complete'));
    });
  });
}

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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

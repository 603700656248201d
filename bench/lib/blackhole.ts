/**
 * A black-holed endpoint: requests are accepted and read, never answered. The FaultProxy of the
 * tests in front of the real S3 server when S3_ENDPOINT is set, else a bare local TCP server.
 */
import net, { type AddressInfo, type Socket } from 'node:net';
import { FaultProxy } from '../../test/support/fault-proxy.js';
import { s3Env } from './s3-env.js';

export interface Blackhole {
  endpoint: string;
  description: string;
  close(): Promise<void>;
}

export async function startBlackhole(): Promise<Blackhole> {
  const s3 = s3Env();
  if (s3 !== undefined) {
    const proxy = await FaultProxy.start(s3.endpoint);
    await proxy.set({ kind: 'blackhole' });
    return {
      endpoint: proxy.endpoint,
      description: `FaultProxy black hole in front of ${s3.endpoint}`,
      close: () => proxy.close(),
    };
  }
  const sockets = new Set<Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.resume(); // read and discard, never write
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    description: 'local TCP black hole (accepts, reads, never answers)',
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

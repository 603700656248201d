import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, expect, test } from 'vitest';
import { s3Source } from '../../../src/reader/s3-source.js';

/**
 * A port that never takes a connection: a listening socket that accepts nothing, its backlog
 * filled, so the kernel drops every further SYN (as a firewall or a host that is down does).
 */
const BLACK_HOLE = `
import socket, time
s = socket.socket()
s.bind(('127.0.0.1', 0))
s.listen(0)
port = s.getsockname()[1]
held = []
for _ in range(3):
    c = socket.socket()
    c.setblocking(False)
    try:
        c.connect(('127.0.0.1', port))
    except BlockingIOError:
        pass
    held.append(c)
print(port, flush=True)
time.sleep(300)
`;

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill();
  child = undefined;
});

async function blackHolePort(): Promise<number> {
  child = spawn('python3', ['-c', BLACK_HOLE], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return Number(line.toString().trim());
}

test("a server that never takes the connection fails the listing after the client's connection timeouts, not after answer deadlines on top", async () => {
  const port = await blackHolePort();
  const source = s3Source('b', {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  });
  const started = Date.now();
  try {
    const listing = (async () => {
      for await (const _ of source.list('p', undefined, new AbortController().signal)) {
      }
    })();
    await expect(listing).rejects.toThrow(/did not establish a connection/);
    // The AWS SDK's three tries of 5 s each: 15 s. Sent again after 5 s and 15 s, it was 35 s.
    expect(Date.now() - started).toBeLessThan(25_000);
  } finally {
    source.close();
  }
}, 60_000);

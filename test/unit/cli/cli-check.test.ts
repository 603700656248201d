import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import type { CheckReport } from '../../../src/cli/commands/check.js';
import { runCliInProcess } from '../../support/cli-child.js';

// The checks themselves run against a real server: test/integration/cli-check.test.ts.
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'otel-s3-cli-check-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

test('otel-s3 check on a directory is a usage error that says why', async () => {
  const { code, stdout, stderr } = await runCliInProcess(['check', '--dir', root], { cwd: root });
  expect([code, stdout]).toEqual([2, '']);
  expect(stderr).toBe(
    'otel-s3: otel-s3 check tests S3 access: give --bucket (a directory needs none)\n',
  );
});

// A 400 XMinioBackendDown (MinIO: a backend it relays to is unreachable) is retried by uploads;
// the check said "the server refused the request".
test('otel-s3 check says a server fault that uploads retry may pass, not that it refused', async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'application/xml' });
      res.end(
        '<Error><Code>XMinioBackendDown</Code><Message>Remote backend is unreachable</Message></Error>',
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const env = {
    AWS_ACCESS_KEY_ID: 'key',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'us-east-1',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  try {
    const args = ['check', '--bucket', 'b', '--endpoint', `http://127.0.0.1:${port}`];
    const { stdout } = await runCliInProcess([...args, '--format', 'json'], { cwd: root, env });
    const put = (JSON.parse(stdout) as CheckReport).checks.find((c) => c.check === 'put');
    expect(put).toMatchObject({
      status: 'failed',
      result: 'XMinioBackendDown (HTTP 400): Remote backend is unreachable',
      fix: expect.stringMatching(/^a fault of the server that uploads retry/),
    });
  } finally {
    vi.unstubAllEnvs();
    server.close();
  }
});

// AWS_USE_FIPS_ENDPOINT=true in a region without FIPS endpoints: the AWS SDK's endpoint rules
// refuse each request before sending it. The check said "the server refused the request" and
// exited 4, where the reading commands exit 2 and name the variable.
test('otel-s3 check where the AWS SDK has no endpoint: no server refused, the switch to unset, exit 2', async () => {
  const env = {
    AWS_ACCESS_KEY_ID: 'key',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'cn-north-1',
    AWS_USE_FIPS_ENDPOINT: 'true',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  try {
    const args = ['check', '--bucket', 'b', '--format', 'json'];
    const { code, stdout } = await runCliInProcess(args, { cwd: root, env });
    const { checks } = JSON.parse(stdout) as CheckReport;
    const put = checks.find((c) => c.check === 'put');
    expect(put).toMatchObject({
      status: 'failed',
      result: 'EndpointError: Partition does not support FIPS',
      fix: 'the AWS SDK has no endpoint for AWS_USE_FIPS_ENDPOINT=true with region cn-north-1: unset the variable (or set it to false), or give --endpoint',
    });
    // The delete's refusal comes back per key, as text: said once, as the put's is.
    expect(checks.find((c) => c.check === 'delete')?.result).toBe(put?.result);
    expect(code).toBe(2);
  } finally {
    vi.unstubAllEnvs();
  }
});

// A server that takes the connection and never answers: the put's deadline
// (OTEL_EXPORTER_S3_TIMEOUT) ends it. Its row said "AbortError: Request aborted" and "see the
// error; the server refused the request", though no answer came at all.
test('otel-s3 check on a server that never answers: the put row says the deadline and the endpoint', async () => {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const env = {
    AWS_ACCESS_KEY_ID: 'key',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'us-east-1',
    OTEL_EXPORTER_S3_TIMEOUT: '300',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  try {
    const endpoint = `http://127.0.0.1:${port}`;
    const args = ['check', '--bucket', 'b', '--endpoint', endpoint, '--format', 'json'];
    const { code, stdout } = await runCliInProcess(args, { cwd: root, env });
    const put = (JSON.parse(stdout) as CheckReport).checks.find((c) => c.check === 'put');
    expect(put).toMatchObject({
      status: 'failed',
      result: 'no answer within OTEL_EXPORTER_S3_TIMEOUT (300 ms)',
      fix: `check the endpoint (${endpoint}) and the network`,
    });
    expect(code).toBe(4);
  } finally {
    vi.unstubAllEnvs();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}, 20_000);

// Endpoints where no S3 API answers as given: a web server's 404 page, a plain HTTP port named
// https://. Every row said "see the error; the server refused the request", and the delete's
// row "HTTP: HTTP 404: ..." (the store's words parsed back as if "HTTP" were an S3 code).
test('otel-s3 check on an endpoint that is no S3 API, or no TLS one: each row says which endpoint fix', async () => {
  const go404 =
    'HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 19\r\nConnection: close\r\n\r\n404 page not found\n';
  const web = createNetServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.end(go404));
  });
  const plain = createServer((req, res) => {
    req.resume();
    res.end();
  });
  for (const s of [web, plain]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s: { address(): unknown }) => (s.address() as AddressInfo).port;
  const env = {
    AWS_ACCESS_KEY_ID: 'key',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'us-east-1',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  try {
    const rows = async (endpoint: string) => {
      const args = ['check', '--bucket', 'b', '--endpoint', endpoint, '--format', 'json'];
      const { code, stdout } = await runCliInProcess(args, { cwd: root, env });
      const { checks } = JSON.parse(stdout) as CheckReport;
      return { code, failed: checks.filter((c) => c.status === 'failed') };
    };
    const notS3 = `http://127.0.0.1:${port(web)}`;
    const web404 = await rows(notS3);
    expect(web404.failed.map((c) => [c.check, c.result, c.fix])).toEqual(
      ['put', 'list', 'get', 'delete'].map((step) => [
        step,
        `${step === 'put' ? 'NotFound (HTTP 404)' : 'HTTP 404'}: not an S3 answer: "404 page not found"`,
        `no S3 API answers at this endpoint (a web server, a console or a proxy does); check its host, port and path (now ${notS3})`,
      ]),
    );
    expect(web404.code).toBe(4);
    const noTls = `https://127.0.0.1:${port(plain)}`;
    const plainTls = await rows(noTls);
    expect(plainTls.failed.length).toBeGreaterThan(0);
    for (const row of plainTls.failed) {
      expect(row.fix, row.check).toBe(
        `the server does not answer in TLS; if it serves plain HTTP, give the endpoint as http:// (now ${noTls})`,
      );
    }
  } finally {
    vi.unstubAllEnvs();
    web.close();
    plain.close();
  }
});

// A web app's catch-all (or a mock) answers every PUT 200 with no ETag: the check said "the
// exporter can work" of a server where every upload is lost.
test('otel-s3 check on a server that accepts any PUT without an ETag: the put row fails', async () => {
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>app</html>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = {
    AWS_ACCESS_KEY_ID: 'key',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'us-east-1',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  try {
    const args = ['check', '--bucket', 'b', '--endpoint', endpoint, '--format', 'json'];
    const { code, stdout } = await runCliInProcess(args, { cwd: root, env });
    const report = JSON.parse(stdout) as CheckReport;
    expect(report.checks.find((c) => c.check === 'put')).toMatchObject({
      status: 'failed',
      result: 'accepted without an ETag, which no S3 API does: what is uploaded there is lost',
      fix: `no S3 API answers at this endpoint; check its host, port and path (now ${endpoint})`,
    });
    expect(report.can.exporter).toBe(false);
    expect(code).toBe(4);
  } finally {
    vi.unstubAllEnvs();
    server.close();
  }
});

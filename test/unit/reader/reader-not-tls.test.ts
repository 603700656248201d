import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { expect, test } from 'vitest';
import { s3Source } from '../../../src/reader/s3-source.js';

/** A server on a free local port; closed when `use` is done. */
async function listening<T>(
  server: Server | ReturnType<typeof createNetServer>,
  use: (port: number) => Promise<T>,
): Promise<T> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await use((server.address() as AddressInfo).port);
  } finally {
    server.close();
  }
}

/** A TCP server that answers any request with these bytes, as another server would. */
function answering(raw: string) {
  return createNetServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.end(raw));
  });
}

/** The error of the first page of a listing of bucket b-1 at `endpoint`. */
async function listingError(endpoint: string): Promise<unknown> {
  const source = s3Source('b-1', {
    region: 'us-east-1',
    endpoint,
    credentials: { accessKeyId: 'k', secretAccessKey: 's' },
  });
  try {
    await source.list('', undefined, new AbortController().signal)[Symbol.asyncIterator]().next();
    return undefined;
  } catch (error) {
    return error;
  } finally {
    source.close();
  }
}

// An https:// endpoint on a plain HTTP port: the listing's error quoted OpenSSL's internals and
// asked whether the server was reachable, which it is. It says what to change instead.
test('a listing over TLS from a plain HTTP server says to give the endpoint as http://', async () => {
  const plain = createServer((req, res) => {
    req.resume();
    res.end();
  });
  await listening(plain, async (port) => {
    expect(await listingError(`https://127.0.0.1:${port}`)).toEqual(
      new Error(
        `cannot list s3://b-1/: EPROTO: write EPROTO (TLS: wrong version number); the server does not answer in TLS; if it serves plain HTTP, give the endpoint as http:// (the endpoint: https://127.0.0.1:${port})`,
      ),
    );
  });
});

// And http:// to a TLS port: the AWS SDK cannot parse the TLS server's 400 and said "@aws-sdk XML
// parse error: unexpected content.\n  Deserialization error: to see the raw response, inspect
// the hidden field {error}.$response on this object."
test('a listing over plain HTTP from a TLS port says what it answered and to give https://', async () => {
  const tls = answering(
    'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n',
  );
  await listening(tls, async (port) => {
    expect(await listingError(`http://127.0.0.1:${port}`)).toEqual(
      new Error(
        `cannot list s3://b-1/: HTTP 400: not an S3 answer: "Client sent an HTTP request to an HTTPS server."; the server answers only in TLS; give the endpoint as https:// (the endpoint: http://127.0.0.1:${port})`,
      ),
    );
  });
});

// A web server where the S3 API was meant (a console's port, a proxy's missing route): its 404
// page was quoted with nothing to say what to change.
test("a listing answered by a web server's 404 page says no S3 API answers there", async () => {
  const web = answering(
    'HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 19\r\nConnection: close\r\n\r\n404 page not found\n',
  );
  await listening(web, async (port) => {
    expect(await listingError(`http://127.0.0.1:${port}`)).toEqual(
      new Error(
        `cannot list s3://b-1/: HTTP 404: not an S3 answer: "404 page not found"; no S3 API answers at this endpoint (a web server, a console or a proxy does); check its host, port and path (the endpoint: http://127.0.0.1:${port})`,
      ),
    );
  });
});

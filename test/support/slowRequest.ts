import { request } from 'node:http';

/** A POST whose body arrives in two parts, `delayMs` apart: a request that is still in flight. */
export function slowPost(
  url: string,
  headers: Record<string, string>,
  body: string,
  delayMs: number,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.write(body.slice(0, 4));
    setTimeout(() => req.end(body.slice(4)), delayMs);
  });
}

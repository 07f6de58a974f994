// A client in a process of its own, for timing tests. In the test's process, the service's event
// loop and the client's are one: work the service runs after answering would delay the client's
// reading of the answer, which no real client sees, and the test's own code would sit between
// two requests meant to follow each other at once. Here the clock starts before a request is
// written and stops when the last byte of its answer has been read, on this process's loop only;
// the requests of one message are sent one after another, each as soon as the one before it has
// been answered, as a client sending back to back would.
// Asked over IPC: { id, requests: [{ url, method, headers, body }] } → { id, results: [{ ms, status, body }] } or { id, error }.
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function timed({ url, method, headers = {}, body }) {
  const target = new URL(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const all = { ...headers };
  if (payload !== undefined) {
    all['content-type'] = 'application/json';
    all['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(
      { hostname: target.hostname, port: target.port, path: target.pathname + target.search, method, headers: all, agent },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text
          }
          resolve({ ms, status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function inSequence(requests) {
  const results = [];
  for (const request of requests) results.push(await timed(request));
  return results;
}

process.on('message', (message) => {
  inSequence(message.requests).then(
    (results) => process.send({ id: message.id, results }),
    (error) => process.send({ id: message.id, error: String(error?.message ?? error) }),
  );
});
process.on('disconnect', () => {
  agent.destroy();
  process.exit(0);
});

// The bare-HTTP ceiling of the api bench: a minimal node:http server that reads each request's
// body and answers a fixed JSON body of the size the bench asks for (the median search answer's),
// with nothing else to do. What it serves per second on this machine, under the same client and
// connections, is the most any HTTP server in Node could give here; the api figures read as shares
// of it. Run as its own process: `node --import tsx bench/lib/bare-http-server.ts <port> <bytes>`.
import http from 'node:http';

const [port, bytes] = process.argv.slice(2).map(Number);
if (!port || !bytes) throw new Error('usage: bare-http-server.ts <port> <bytes>');
const filler = 'x'.repeat(Math.max(0, bytes! - 20));
const body = Buffer.from(JSON.stringify({ content: filler }));
http
  .createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
      res.end(body);
    });
  })
  .listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));

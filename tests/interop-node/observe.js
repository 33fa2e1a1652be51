// Observes a CoAP resource with node-coap and prints one line per response:
// "<observe value or -> <payload>". Exits 0 after COUNT responses, 1 on error, 2 on timeout.
// Usage: node observe.js coap://127.0.0.1:PORT/path COUNT [TIMEOUT_SECONDS]
'use strict';
const coap = require('coap');

const [url, countText, timeoutText] = process.argv.slice(2);
const target = new URL(url);
const wanted = Number(countText);
const timeout = setTimeout(() => { console.error('timeout'); process.exit(2); }, Number(timeoutText || 30) * 1000);

const request = coap.request({
  hostname: target.hostname,
  port: Number(target.port || 5683),
  pathname: target.pathname,
  observe: true,
});
let seen = 0;
request.on('response', (stream) => {
  const print = (packet) => {
    const observe = stream.headers && stream.headers.Observe !== undefined ? stream.headers.Observe : '-';
    console.log(`${observe} ${packet.toString()}`);
    seen += 1;
    if (seen >= wanted) {
      clearTimeout(timeout);
      stream.close();
      setTimeout(() => process.exit(0), 200);
    }
  };
  stream.on('data', print);
});
request.on('error', (error) => { console.error(error.message); process.exit(1); });
request.end();

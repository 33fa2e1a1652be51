// CoAP over WebSockets (RFC 8323 section 4) for the explorer page: message framing, options, block-wise transfers
// (RFC 7959), Observe (RFC 7641) and the connection's signals (CSM, Ping, Pong, Release, Abort). No dependencies.

/** Option numbers of RFC 7252 section 12.2 and its family, with how each value is shown and entered. */
export const OPTIONS = [
  { number: 1, name: 'If-Match', format: 'opaque' },
  { number: 3, name: 'Uri-Host', format: 'string' },
  { number: 4, name: 'ETag', format: 'opaque' },
  { number: 5, name: 'If-None-Match', format: 'empty' },
  { number: 6, name: 'Observe', format: 'uint' },
  { number: 7, name: 'Uri-Port', format: 'uint' },
  { number: 8, name: 'Location-Path', format: 'string' },
  { number: 9, name: 'OSCORE', format: 'opaque' },
  { number: 11, name: 'Uri-Path', format: 'string' },
  { number: 12, name: 'Content-Format', format: 'uint' },
  { number: 14, name: 'Max-Age', format: 'uint' },
  { number: 15, name: 'Uri-Query', format: 'string' },
  { number: 16, name: 'Hop-Limit', format: 'uint' },
  { number: 17, name: 'Accept', format: 'uint' },
  { number: 19, name: 'Q-Block1', format: 'uint' },
  { number: 20, name: 'Location-Query', format: 'string' },
  { number: 23, name: 'Block2', format: 'uint' },
  { number: 27, name: 'Block1', format: 'uint' },
  { number: 28, name: 'Size2', format: 'uint' },
  { number: 31, name: 'Q-Block2', format: 'uint' },
  { number: 35, name: 'Proxy-Uri', format: 'string' },
  { number: 39, name: 'Proxy-Scheme', format: 'string' },
  { number: 60, name: 'Size1', format: 'uint' },
  { number: 252, name: 'Echo', format: 'opaque' },
  { number: 258, name: 'No-Response', format: 'uint' },
  { number: 292, name: 'Request-Tag', format: 'opaque' },
];

/** The options of the signals (RFC 8323 section 5): their numbers mean something else there. */
const SIGNAL_OPTIONS = {
  0xe1: { 2: 'Max-Message-Size', 4: 'Block-Wise-Transfer' },
  0xe2: { 2: 'Custody' },
  0xe3: { 2: 'Custody' },
  0xe4: { 2: 'Alternative-Address', 4: 'Hold-Off' },
  0xe5: { 2: 'Bad-CSM-Option' },
};

/** Content-Format numbers from the IANA registry (RFC 7252 section 12.3 and later). */
export const CONTENT_FORMATS = [
  { number: 0, name: 'text/plain;charset=utf-8' },
  { number: 40, name: 'application/link-format' },
  { number: 41, name: 'application/xml' },
  { number: 42, name: 'application/octet-stream' },
  { number: 47, name: 'application/exi' },
  { number: 50, name: 'application/json' },
  { number: 51, name: 'application/json-patch+json' },
  { number: 52, name: 'application/merge-patch+json' },
  { number: 60, name: 'application/cbor' },
  { number: 61, name: 'application/cwt' },
  { number: 110, name: 'application/senml+json' },
  { number: 112, name: 'application/senml+cbor' },
  { number: 11542, name: 'application/vnd.oma.lwm2m+tlv' },
  { number: 11543, name: 'application/vnd.oma.lwm2m+json' },
];

const CODE_NAMES = {
  0x00: 'Empty', 0x01: 'GET', 0x02: 'POST', 0x03: 'PUT', 0x04: 'DELETE', 0x05: 'FETCH', 0x06: 'PATCH', 0x07: 'iPATCH',
  0x41: 'Created', 0x42: 'Deleted', 0x43: 'Valid', 0x44: 'Changed', 0x45: 'Content', 0x5f: 'Continue',
  0x80: 'Bad Request', 0x81: 'Unauthorized', 0x82: 'Bad Option', 0x83: 'Forbidden', 0x84: 'Not Found',
  0x85: 'Method Not Allowed', 0x86: 'Not Acceptable', 0x88: 'Request Entity Incomplete', 0x89: 'Conflict',
  0x8c: 'Precondition Failed', 0x8d: 'Request Entity Too Large', 0x8f: 'Unsupported Content-Format',
  0x96: 'Unprocessable Entity', 0x9d: 'Too Many Requests',
  0xa0: 'Internal Server Error', 0xa1: 'Not Implemented', 0xa2: 'Bad Gateway', 0xa3: 'Service Unavailable',
  0xa4: 'Gateway Timeout', 0xa5: 'Proxying Not Supported', 0xa8: 'Hop Limit Reached',
  0xe1: 'CSM', 0xe2: 'Ping', 0xe3: 'Pong', 0xe4: 'Release', 0xe5: 'Abort',
};

export const METHODS = { GET: 0x01, POST: 0x02, PUT: 0x03, DELETE: 0x04, FETCH: 0x05 };

const CSM = 0xe1, PING = 0xe2, PONG = 0xe3, RELEASE = 0xe4, ABORT = 0xe5;
const CONTINUE = 0x5f;
const OBSERVE = 6, URI_PATH = 11, CONTENT_FORMAT = 12, URI_QUERY = 15, ACCEPT = 17, BLOCK2 = 23, BLOCK1 = 27,
  SIZE2 = 28, SIZE1 = 60;

/** "2.05 Content" for a code byte. */
export function codeText(code) {
  const text = `${code >> 5}.${String(code & 0x1f).padStart(2, '0')}`;
  return CODE_NAMES[code] ? `${text} ${CODE_NAMES[code]}` : text;
}

/** The kind of message a code makes: request, response, signal or empty (RFC 7252 section 3, RFC 8323 section 5). */
export function codeClass(code) {
  if (code === 0) return 'empty';
  const c = code >> 5;
  return c === 0 ? 'request' : c === 7 ? 'signal' : 'response';
}

export function optionName(number, code) {
  const signal = SIGNAL_OPTIONS[code];
  if (signal) return signal[number] || `Option ${number}`;
  const known = OPTIONS.find((o) => o.number === number);
  return known ? known.name : `Option ${number}`;
}

export function contentFormatName(number) {
  const known = CONTENT_FORMATS.find((f) => f.number === number);
  return known ? known.name : `Content-Format ${number}`;
}

export function hex(bytes) {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

export function parseHex(text) {
  const clean = text.replace(/^0x/i, '').replace(/[\s:]/g, '');
  if (clean.length % 2 !== 0 || /[^0-9a-f]/i.test(clean)) throw new Error(`"${text}" is not hexadecimal bytes`);
  const bytes = new Uint8Array(clean.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(clean.substr(i * 2, 2), 16);
  return bytes;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: false });

/** RFC 7252 section 3.2: an unsigned integer in as few bytes as it takes (0 in none). */
export function encodeUint(value) {
  if (!Number.isSafeInteger(value) || value < 0 || value > 0xffffffff) throw new Error(`${value} is not an option integer (0 to 4294967295)`);
  const bytes = [];
  for (let v = value; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return new Uint8Array(bytes);
}

export function decodeUint(bytes) {
  let v = 0;
  for (const b of bytes) v = v * 256 + b;
  return v;
}

/** The value of an option as the user typed it, encoded by the option's format. */
export function encodeOptionValue(number, text) {
  const known = OPTIONS.find((o) => o.number === number);
  switch (known ? known.format : 'opaque') {
    case 'empty': return new Uint8Array(0);
    case 'uint': {
      if (!/^\d+$/.test(text.trim())) throw new Error(`${optionName(number)} takes an unsigned integer, not "${text}"`);
      return encodeUint(Number(text.trim()));
    }
    case 'string': return utf8.encode(text);
    default: return parseHex(text);
  }
}

/** An option's value as text: integers in decimal, strings as text, the rest in hex. */
export function formatOption(option, code) {
  if (SIGNAL_OPTIONS[code]) return option.value.length ? String(decodeUint(option.value)) : '';
  const known = OPTIONS.find((o) => o.number === option.number);
  const format = known ? known.format : 'opaque';
  if (format === 'uint') {
    const v = decodeUint(option.value);
    if (option.number === BLOCK1 || option.number === BLOCK2) {
      const block = decodeBlock(v);
      return `${block.num}/${block.more ? 1 : 0}/${block.size === 0 ? 'BERT' : block.size}`;
    }
    if (option.number === CONTENT_FORMAT || option.number === ACCEPT) return `${v} (${contentFormatName(v)})`;
    return String(v);
  }
  if (format === 'string') return utf8Decoder.decode(option.value);
  if (format === 'empty') return '';
  return '0x' + hex(option.value);
}

// RFC 7959 section 2.2: NUM, M and SZX in one unsigned integer; SZX 7 is BERT over reliable transports (RFC 8323 section 6).
export function decodeBlock(value) {
  const szx = value & 7;
  return { num: Math.floor(value / 16), more: (value & 8) !== 0, szx, size: szx === 7 ? 0 : 1 << (szx + 4) };
}

function encodeBlock(num, more, szx) {
  return encodeUint(num * 16 + (more ? 8 : 0) + szx);
}

/**
 * One CoAP message as a WebSocket message (RFC 8323 section 4.2): the reliable transports' header with the Len nibble 0
 * and no extended length, TKL, the code, the token, the options in order of their numbers, and 0xFF before a payload.
 */
export function encodeMessage({ code, token = new Uint8Array(0), options = [], payload = new Uint8Array(0) }) {
  if (token.length > 8) throw new Error('A token has at most 8 bytes (RFC 7252 section 3).');
  const sorted = options.map((o, i) => ({ ...o, i })).sort((a, b) => a.number - b.number || a.i - b.i);
  const parts = [Uint8Array.of(token.length, code), token];
  let previous = 0;
  for (const option of sorted) {
    const delta = option.number - previous;
    previous = option.number;
    const d = nibble(delta), l = nibble(option.value.length);
    parts.push(Uint8Array.of((d.nibble << 4) | l.nibble), d.extended, l.extended, option.value);
  }
  if (payload.length > 0) parts.push(Uint8Array.of(0xff), payload);
  return concat(parts);
}

// RFC 7252 section 3.1: 13 and 14 announce one or two extension bytes.
function nibble(value) {
  if (value < 13) return { nibble: value, extended: new Uint8Array(0) };
  if (value < 269) return { nibble: 13, extended: Uint8Array.of(value - 13) };
  if (value < 65805) return { nibble: 14, extended: Uint8Array.of((value - 269) >> 8, (value - 269) & 0xff) };
  throw new Error(`${value} is too large for an option delta or length`);
}

/** Reads one WebSocket message as a CoAP message; throws an Error that says what is malformed. */
export function decodeMessage(buffer) {
  const bytes = new Uint8Array(buffer);
  if (bytes.length < 2) throw new Error('a message shorter than its 2-byte header');
  const len = bytes[0] >> 4, tkl = bytes[0] & 0x0f;
  // RFC 8323 section 4.2: over WebSockets the Len nibble is always 0, the length being the WebSocket message's.
  if (len !== 0) throw new Error(`the Len nibble is ${len}, not 0 (RFC 8323 section 4.2)`);
  if (tkl > 8) throw new Error(`a token length of ${tkl} (at most 8)`);
  const code = bytes[1];
  let at = 2;
  if (bytes.length < at + tkl) throw new Error('a message cut inside its token');
  const token = bytes.slice(at, at + tkl);
  at += tkl;
  const options = [];
  let number = 0;
  while (at < bytes.length && bytes[at] !== 0xff) {
    const head = bytes[at++];
    let delta = head >> 4, length = head & 0x0f;
    [delta, at] = extended(bytes, delta, at);
    [length, at] = extended(bytes, length, at);
    number += delta;
    if (at + length > bytes.length) throw new Error(`option ${number} runs past the end of the message`);
    options.push({ number, value: bytes.slice(at, at + length) });
    at += length;
  }
  let payload = new Uint8Array(0);
  if (at < bytes.length) {
    if (at + 1 === bytes.length) throw new Error('a payload marker with no payload (RFC 7252 section 3)');
    payload = bytes.slice(at + 1);
  }
  return { code, token, options, payload, size: bytes.length };
}

function extended(bytes, value, at) {
  if (value === 13) {
    if (at >= bytes.length) throw new Error('an option cut in its extended delta or length');
    return [bytes[at] + 13, at + 1];
  }
  if (value === 14) {
    if (at + 1 >= bytes.length) throw new Error('an option cut in its extended delta or length');
    return [(bytes[at] << 8) + bytes[at + 1] + 269, at + 2];
  }
  if (value === 15) throw new Error('an option nibble of 15 (reserved for the payload marker)');
  return [value, at];
}

function concat(parts) {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

export function getOption(message, number) {
  const found = message.options.find((o) => o.number === number);
  return found ? found.value : undefined;
}

function getUint(message, number) {
  const value = getOption(message, number);
  return value === undefined ? undefined : decodeUint(value);
}

/** "/a/b?x=1&y" as Uri-Path and Uri-Query options (RFC 7252 section 6.4). */
export function pathOptions(pathAndQuery) {
  const [path, query] = splitOnce(pathAndQuery, '?');
  const options = [];
  for (const segment of path.split('/')) {
    if (segment !== '') options.push({ number: URI_PATH, value: utf8.encode(decodeURIComponent(segment)) });
  }
  if (query !== undefined && query !== '') {
    for (const item of query.split('&')) options.push({ number: URI_QUERY, value: utf8.encode(decodeURIComponent(item)) });
  }
  return options;
}

function splitOnce(text, separator) {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** An error the page shows as it is: its message says what went wrong. */
export class CoapError extends Error {
  constructor(message, kind) {
    super(message);
    this.kind = kind;
  }
}

/**
 * A CoAP over WebSockets connection (RFC 8323 section 4) from the browser: opens the WebSocket at /.well-known/coap
 * with the subprotocol "coap", sends its CSM first (section 5.3.1), matches responses to requests by token, answers
 * Ping with Pong, and reports every message it sends or receives to onMessage for the log.
 */
export class CoapConnection {
  constructor(url, { onMessage = () => {}, onClose = () => {}, timeout = 30000 } = {}) {
    this.url = url;
    this.onMessage = onMessage;
    this.onClose = onClose;
    this.timeout = timeout;
    this.exchanges = new Map();
    this.serverMaxMessageSize = 1152;
    this.closed = false;
  }

  /** Opens the WebSocket and sends the CSM; resolves when the server's CSM arrived. */
  connect() {
    return new Promise((resolve, reject) => {
      let opened = false, settled = false;
      const fail = (error) => { if (!settled) { settled = true; reject(error); } };
      let socket;
      try {
        socket = new WebSocket(this.url, 'coap');
      } catch (e) {
        fail(new CoapError(`Cannot open ${this.url}: ${e.message}`, 'refused'));
        return;
      }
      this.socket = socket;
      socket.binaryType = 'arraybuffer';
      const timer = setTimeout(() => {
        fail(new CoapError(`No CSM from ${this.url} within ${this.timeout / 1000} s (timeout).`, 'timeout'));
        socket.close();
      }, this.timeout);
      socket.onopen = () => {
        opened = true;
        if (socket.protocol !== 'coap') {
          fail(new CoapError(`${this.url} did not accept the subprotocol "coap" (RFC 8323 section 4.1).`, 'refused'));
          socket.close();
          return;
        }
        // RFC 8323 section 5.3: the CSM is the first message each side sends. Ours announces no Block-Wise-Transfer,
        // so the server sends no BERT blocks, and the Max-Message-Size of a browser that takes whole messages.
        this.send({ code: CSM, options: [{ number: 2, value: encodeUint(1 << 20) }] });
      };
      socket.onmessage = (event) => {
        if (typeof event.data === 'string') {
          this.abort('A text message on a CoAP WebSocket (RFC 8323 section 4.2 allows binary ones only).');
          return;
        }
        let message;
        try {
          message = decodeMessage(event.data);
        } catch (e) {
          this.abort(`A malformed message from the server: ${e.message}.`);
          return;
        }
        this.onMessage('in', message);
        if (message.code === CSM && !settled) {
          const size = getUint(message, 2);
          if (size !== undefined) this.serverMaxMessageSize = size;
          settled = true;
          clearTimeout(timer);
          resolve(this);
          return;
        }
        this.receive(message);
      };
      socket.onerror = () => {};
      socket.onclose = (event) => {
        clearTimeout(timer);
        this.closed = true;
        const why = opened
          ? this.closeReason || `The connection to ${this.url} closed (WebSocket code ${event.code}${event.reason ? ': ' + event.reason : ''}).`
          : `Cannot connect to ${this.url}: connection refused (the server is not running there), or it refused the WebSocket (not a CoAP endpoint, or this page's origin is not allowed).`;
        const error = new CoapError(why, opened ? 'closed' : 'refused');
        fail(error);
        for (const exchange of this.exchanges.values()) exchange.fail(error);
        this.exchanges.clear();
        this.onClose(error);
      };
    });
  }

  send(message) {
    if (this.closed || !this.socket || this.socket.readyState !== WebSocket.OPEN) {
      throw new CoapError('Not connected: connect first.', 'closed');
    }
    const bytes = encodeMessage(message);
    if (bytes.length > this.serverMaxMessageSize) {
      throw new CoapError(`A message of ${bytes.length} bytes is more than the server's Max-Message-Size of ${this.serverMaxMessageSize} (RFC 8323 section 5.3.1): send the payload block-wise.`, 'size');
    }
    this.socket.send(bytes);
    this.onMessage('out', { ...message, token: message.token || new Uint8Array(0), options: message.options || [], payload: message.payload || new Uint8Array(0), size: bytes.length });
  }

  receive(message) {
    switch (message.code) {
      case PING:
        // RFC 8323 section 5.4: a Pong answers a Ping, with its token.
        this.send({ code: PONG, token: message.token });
        return;
      case RELEASE:
        this.closeReason = 'The server released the connection (RFC 8323 section 5.5): it is stopping or restarting.';
        this.socket.close(1000);
        return;
      case ABORT:
        this.closeReason = `The server aborted the connection (RFC 8323 section 5.6): ${utf8Decoder.decode(message.payload) || 'no reason given'}.`;
        this.socket.close(1000);
        return;
      case CSM:
      case PONG:
        return;
      default: {
        const exchange = this.exchanges.get(hex(message.token));
        if (exchange) exchange.deliver(message);
      }
    }
  }

  /** Aborts the connection (RFC 8323 section 5.6) with a diagnostic, and closes it. */
  abort(why) {
    try { this.send({ code: ABORT, payload: utf8.encode(why) }); } catch { /* closing anyway */ }
    this.closeReason = why;
    this.socket.close(1000);
  }

  close() {
    if (!this.closed && this.socket) {
      try { this.send({ code: RELEASE }); } catch { /* closing anyway */ }
      this.socket.close(1000);
    }
  }

  newToken() {
    const token = new Uint8Array(4);
    do crypto.getRandomValues(token); while (this.exchanges.has(hex(token)));
    return token;
  }

  /** Sends one message and resolves with the first response to its token (or rejects on timeout or close). */
  exchange(message) {
    const token = message.token;
    return new Promise((resolve, reject) => {
      const key = hex(token);
      const timer = setTimeout(() => {
        this.exchanges.delete(key);
        reject(new CoapError(`No response to ${codeText(message.code)} within ${this.timeout / 1000} s (timeout).`, 'timeout'));
      }, this.timeout);
      this.exchanges.set(key, {
        deliver: (response) => { clearTimeout(timer); this.exchanges.delete(key); resolve(response); },
        fail: (error) => { clearTimeout(timer); reject(error); },
      });
      try {
        this.send({ ...message, token });
      } catch (e) {
        clearTimeout(timer);
        this.exchanges.delete(key);
        reject(e);
      }
    });
  }

  /**
   * A request with its follow-ups: a payload larger than one block goes up in Block1 blocks (RFC 7959 section 2.5),
   * a response in Block2 blocks is fetched to its end (section 2.4). onProgress(done, total) reports both.
   * Resolves with the last response, its payload the whole body.
   */
  async request({ method, path, options = [], payload = new Uint8Array(0), blockSize = 1024, onProgress = () => {} }) {
    const szx = Math.log2(blockSize) - 4;
    const base = [...pathOptions(path), ...options.filter((o) => o.number !== BLOCK1 && o.number !== BLOCK2)];
    const userBlock2 = options.find((o) => o.number === BLOCK2);
    let response;
    const token = this.newToken();
    if (payload.length > blockSize) {
      // RFC 7959 section 2.5: Block1 blocks in order, each answered 2.31 Continue, the last with the final response;
      // Size1 with the first tells the server the whole size (section 4).
      let blockSzx = szx;
      for (let num = 0, offset = 0; offset < payload.length;) {
        const size = 1 << (blockSzx + 4);
        const chunk = payload.slice(offset, offset + size);
        const more = offset + chunk.length < payload.length;
        const blockOptions = [...base, { number: BLOCK1, value: encodeBlock(num, more, blockSzx) }];
        if (num === 0) blockOptions.push({ number: SIZE1, value: encodeUint(payload.length) });
        response = await this.exchange({ code: method, token, options: blockOptions, payload: chunk });
        onProgress(offset + chunk.length, payload.length, 'up');
        if (more && response.code !== CONTINUE) return response;
        const answered = getUint(response, BLOCK1);
        // The server may ask for smaller blocks than ours (section 2.5): the next block starts where this one ended.
        offset += chunk.length;
        if (answered !== undefined && more) {
          const asked = decodeBlock(answered);
          if (asked.szx < blockSzx) blockSzx = asked.szx;
          num = offset / (1 << (blockSzx + 4));
          if (!Number.isInteger(num)) throw new CoapError('The server asked for a block size that does not divide the upload.', 'protocol');
        } else {
          num++;
        }
      }
    } else {
      // RFC 7959 section 2.4: Block2 in the first request asks for blocks of the size chosen (early negotiation), so a
      // body larger than one comes block by block with a progress bar rather than in one message as long as our CSM's
      // Max-Message-Size; Size2 0 asks for the whole size with the first block (section 4).
      const first = [...base, userBlock2 || { number: BLOCK2, value: encodeBlock(0, false, szx) }];
      if (method === METHODS.GET || method === METHODS.FETCH) first.push({ number: SIZE2, value: new Uint8Array(0) });
      response = await this.exchange({ code: method, token, options: first, payload });
    }
    return this.completeBlock2(method, base, response, onProgress, payload);
  }

  /** Fetches the rest of a body whose first block is response (RFC 7959 section 2.4), in order. */
  async completeBlock2(method, base, response, onProgress, payload) {
    const block = getUint(response, BLOCK2);
    const total = getUint(response, SIZE2);
    if (block === undefined || !decodeBlock(block).more) return response;
    const chunks = [response.payload];
    let received = response.payload.length;
    let { num, szx } = decodeBlock(block);
    onProgress(received, total, 'down');
    const etag = getOption(response, 4);
    // Follow-ups are GETs with the request's options but Observe (RFC 7959 section 2.4); a FETCH repeats itself with its
    // payload (RFC 8132 section 2.3.2).
    const fetch = method === METHODS.FETCH;
    const follow = base.filter((o) => o.number !== OBSERVE && (fetch || o.number !== CONTENT_FORMAT));
    for (;;) {
      const size = 1 << (szx + 4);
      num = received / size;
      const next = await this.exchange({
        code: fetch ? METHODS.FETCH : METHODS.GET,
        token: this.newToken(),
        options: [...follow, { number: BLOCK2, value: encodeBlock(num, false, szx) }],
        payload: fetch ? payload : new Uint8Array(0),
      });
      if (next.code >> 5 !== 2) return next;
      const nextEtag = getOption(next, 4);
      if (etag && nextEtag && hex(etag) !== hex(nextEtag)) {
        throw new CoapError('The resource changed during the block-wise transfer (its ETag changed): send the request again.', 'protocol');
      }
      chunks.push(next.payload);
      received += next.payload.length;
      const nextBlock = getUint(next, BLOCK2);
      onProgress(received, total, 'down');
      if (nextBlock === undefined || !decodeBlock(nextBlock).more) {
        onProgress(received, received, 'down');
        return { ...next, payload: concat(chunks), options: response.options.filter((o) => o.number !== BLOCK2).concat(nextBlock === undefined ? [] : [{ number: BLOCK2, value: encodeUint(nextBlock) }]), size: received };
      }
      szx = decodeBlock(nextBlock).szx;
    }
  }

  /**
   * Observes a resource (RFC 7641): GET with Observe 0; every response to the token, the first and each notification,
   * goes to onNotification. Returns a function that cancels with GET Observe 1 (section 3.6).
   */
  observe({ path, options = [], onNotification, onError }) {
    const token = this.newToken();
    const key = hex(token);
    const base = [...pathOptions(path), ...options.filter((o) => o.number !== OBSERVE)];
    let cancelled = false;
    const timer = setTimeout(() => {
      if (this.exchanges.get(key)?.first) {
        this.exchanges.delete(key);
        onError(new CoapError(`No response to the Observe request within ${this.timeout / 1000} s (timeout).`, 'timeout'));
      }
    }, this.timeout);
    const entry = {
      first: true,
      deliver: (message) => {
        entry.first = false;
        clearTimeout(timer);
        if (message.code >> 5 !== 2 || getOption(message, OBSERVE) === undefined) this.exchanges.delete(key);
        if (!cancelled) onNotification(message);
      },
      fail: (error) => { clearTimeout(timer); if (!cancelled) onError(error); },
    };
    this.exchanges.set(key, entry);
    this.send({ code: METHODS.GET, token, options: [...base, { number: OBSERVE, value: new Uint8Array(0) }] });
    return () => {
      cancelled = true;
      clearTimeout(timer);
      if (!this.exchanges.has(key) || this.closed) return;
      // The deregistration's response ends the exchange; it goes to the log only.
      this.exchanges.set(key, { deliver: () => this.exchanges.delete(key), fail: () => {} });
      this.send({ code: METHODS.GET, token, options: [...base, { number: OBSERVE, value: encodeUint(1) }] });
    };
  }
}

/** RFC 6690: the links of a link-format document, each with its target and attributes (quoted values unquoted). */
export function parseLinkFormat(text) {
  const links = [];
  let at = 0;
  const n = text.length;
  const skipSpace = () => { while (at < n && /\s/.test(text[at])) at++; };
  while (at < n) {
    skipSpace();
    if (text[at] !== '<') break;
    const end = text.indexOf('>', at);
    if (end < 0) break;
    const link = { target: text.slice(at + 1, end), attributes: [] };
    at = end + 1;
    for (;;) {
      skipSpace();
      if (text[at] !== ';') break;
      at++;
      skipSpace();
      let name = '';
      while (at < n && !/[=;,\s]/.test(text[at])) name += text[at++];
      let value = true;
      if (text[at] === '=') {
        at++;
        if (text[at] === '"') {
          at++;
          value = '';
          while (at < n && text[at] !== '"') {
            if (text[at] === '\\' && at + 1 < n) at++;
            value += text[at++];
          }
          at++;
        } else {
          value = '';
          while (at < n && !/[;,]/.test(text[at])) value += text[at++];
          value = value.trim();
        }
      }
      link.attributes.push({ name, value });
    }
    links.push(link);
    skipSpace();
    if (text[at] === ',') at++;
  }
  return links;
}

export { utf8, utf8Decoder, concat, BLOCK1, BLOCK2, OBSERVE, CONTENT_FORMAT, ACCEPT, SIZE2 };

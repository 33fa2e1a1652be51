// CBOR (RFC 8949) to its diagnostic notation (section 8), for the explorer's payload view: every major type, indefinite
// lengths, tags, half/single/double floats and simple values. Malformed input throws an Error that says where.

export function cborToDiagnostic(bytes) {
  const reader = { bytes, at: 0 };
  const items = [];
  while (reader.at < bytes.length) items.push(item(reader, 0));
  if (items.length === 0) throw new Error('no CBOR data item');
  // A payload of several items (a CBOR sequence, RFC 8742) shows them separated by commas.
  return items.join(', ');
}

/** The first numeric value in a CBOR item (a number, or the first in an array or map), or undefined. */
export function cborNumber(bytes) {
  const reader = { bytes, at: 0 };
  return firstNumber(value(reader, 0));
}

function firstNumber(v) {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) {
    for (const x of v) {
      const n = firstNumber(x);
      if (n !== undefined) return n;
    }
  }
  if (v instanceof Map) {
    for (const x of v.values()) {
      const n = firstNumber(x);
      if (n !== undefined) return n;
    }
  }
  return undefined;
}

const MAX_DEPTH = 64;

function byte(r) {
  if (r.at >= r.bytes.length) throw new Error(`CBOR ends early at byte ${r.at}`);
  return r.bytes[r.at++];
}

function take(r, n) {
  if (r.at + n > r.bytes.length) throw new Error(`CBOR ends early: ${n} bytes wanted at byte ${r.at}`);
  const out = r.bytes.subarray(r.at, r.at + n);
  r.at += n;
  return out;
}

// RFC 8949 section 3: the argument follows the initial byte in 0, 1, 2, 4 or 8 bytes; 31 is indefinite length.
function argument(r, info) {
  if (info < 24) return info;
  if (info === 24) return byte(r);
  if (info === 25) return (byte(r) << 8) | byte(r);
  if (info === 26) { const b = take(r, 4); return ((b[0] << 24) >>> 0) + (b[1] << 16) + (b[2] << 8) + b[3]; }
  if (info === 27) {
    const b = take(r, 8);
    let v = 0n;
    for (const x of b) v = (v << 8n) | BigInt(x);
    return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  }
  if (info === 31) return -1;
  throw new Error(`reserved additional information ${info} at byte ${r.at - 1}`);
}

function hex(bytes) {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function item(r, depth) {
  if (depth > MAX_DEPTH) throw new Error('CBOR nested too deep');
  const initial = byte(r);
  const major = initial >> 5, info = initial & 0x1f;
  switch (major) {
    case 0: return String(argument(r, info));
    case 1: { const n = argument(r, info); return typeof n === 'bigint' ? String(-1n - n) : String(-1 - n); }
    case 2:
    case 3: {
      if (info === 31) {
        const chunks = [];
        for (;;) {
          if (r.bytes[r.at] === 0xff) { r.at++; break; }
          chunks.push(item(r, depth + 1));
        }
        return `(_ ${chunks.join(', ')})`;
      }
      const data = take(r, Number(argument(r, info)));
      if (major === 2) return `h'${hex(data)}'`;
      return JSON.stringify(decoder.decode(data));
    }
    case 4: {
      const n = argument(r, info);
      const parts = [];
      if (n === -1) {
        while (r.bytes[r.at] !== 0xff) { if (r.at >= r.bytes.length) throw new Error('CBOR array without its break'); parts.push(item(r, depth + 1)); }
        r.at++;
        return `[_ ${parts.join(', ')}]`;
      }
      for (let i = 0; i < n; i++) parts.push(item(r, depth + 1));
      return `[${parts.join(', ')}]`;
    }
    case 5: {
      const n = argument(r, info);
      const parts = [];
      if (n === -1) {
        while (r.bytes[r.at] !== 0xff) { if (r.at >= r.bytes.length) throw new Error('CBOR map without its break'); parts.push(`${item(r, depth + 1)}: ${item(r, depth + 1)}`); }
        r.at++;
        return `{_ ${parts.join(', ')}}`;
      }
      for (let i = 0; i < n; i++) parts.push(`${item(r, depth + 1)}: ${item(r, depth + 1)}`);
      return `{${parts.join(', ')}}`;
    }
    case 6: return `${argument(r, info)}(${item(r, depth + 1)})`;
    default: return simple(r, info);
  }
}

function simple(r, info) {
  switch (info) {
    case 20: return 'false';
    case 21: return 'true';
    case 22: return 'null';
    case 23: return 'undefined';
    case 24: return `simple(${byte(r)})`;
    case 25: return float(half(take(r, 2)));
    case 26: return float(new DataView(take(r, 4).slice().buffer).getFloat32(0));
    case 27: return float(new DataView(take(r, 8).slice().buffer).getFloat64(0));
    case 31: throw new Error(`a break (0xff) outside an indefinite-length item at byte ${r.at - 1}`);
    default:
      if (info < 20) return `simple(${info})`;
      throw new Error(`reserved simple value ${info} at byte ${r.at - 1}`);
  }
}

// RFC 8949 Appendix D: a half-precision float.
function half(b) {
  const h = (b[0] << 8) | b[1];
  const exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const sign = h & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (mantissa + 1024) * 2 ** (exponent - 25);
}

function float(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  const s = String(v);
  return Number.isInteger(v) && !s.includes('e') ? `${s}.0` : s;
}

// The same walk, to JavaScript values, for the chart's numbers.
function value(r, depth) {
  if (depth > MAX_DEPTH) throw new Error('CBOR nested too deep');
  const initial = byte(r);
  const major = initial >> 5, info = initial & 0x1f;
  switch (major) {
    case 0: return argument(r, info);
    case 1: { const n = argument(r, info); return typeof n === 'bigint' ? -1n - n : -1 - n; }
    case 2: case 3: {
      if (info === 31) { while (r.bytes[r.at] !== 0xff) value(r, depth + 1); r.at++; return null; }
      take(r, Number(argument(r, info)));
      return null;
    }
    case 4: {
      const n = argument(r, info), out = [];
      if (n === -1) { while (r.bytes[r.at] !== 0xff) out.push(value(r, depth + 1)); r.at++; return out; }
      for (let i = 0; i < n; i++) out.push(value(r, depth + 1));
      return out;
    }
    case 5: {
      const n = argument(r, info), out = new Map();
      if (n === -1) { while (r.bytes[r.at] !== 0xff) out.set(value(r, depth + 1), value(r, depth + 1)); r.at++; return out; }
      for (let i = 0; i < n; i++) out.set(value(r, depth + 1), value(r, depth + 1));
      return out;
    }
    case 6: argument(r, info); return value(r, depth + 1);
    default:
      if (info === 25) return half(take(r, 2));
      if (info === 26) return new DataView(take(r, 4).slice().buffer).getFloat32(0);
      if (info === 27) return new DataView(take(r, 8).slice().buffer).getFloat64(0);
      if (info === 24) byte(r);
      return null;
  }
}

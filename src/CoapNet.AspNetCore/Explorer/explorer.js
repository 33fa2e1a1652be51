// The explorer page: connects to the CoAP over WebSockets endpoint of the server that serves it, lists its resources
// from /.well-known/core, sends requests, observes, and logs every message, as Copper did for coap:// in Firefox.
import {
  CoapConnection, CoapError, METHODS, OPTIONS, CONTENT_FORMATS, CONTENT_FORMAT, ACCEPT, OBSERVE, BLOCK1, BLOCK2,
  codeText, codeClass, optionName, formatOption, encodeUint, encodeOptionValue, decodeUint,
  getOption, hex, parseHex, parseLinkFormat, utf8, utf8Decoder,
} from './coap.js';
import { cborToDiagnostic, cborNumber } from './cbor.js';

const $ = (id) => document.getElementById(id);
const MAX_LOG_ROWS = 500, MAX_POINTS = 60, MAX_NOTIFICATIONS = 100, SHOWN_TEXT = 65536, SHOWN_HEX = 4096;

const state = { connection: null, cancelObserve: null, response: null, view: 'auto', points: [], busy: false };

function element(tag, properties = {}, ...children) {
  const e = document.createElement(tag);
  for (const [key, value] of Object.entries(properties)) {
    if (key === 'dataset') Object.assign(e.dataset, value);
    else if (key in e) e[key] = value;
    else e.setAttribute(key, value);
  }
  for (const child of children) e.append(child);
  return e;
}

function showError(error) {
  const box = $('error');
  box.textContent = error instanceof Error ? error.message : String(error);
  box.dataset.kind = error instanceof CoapError ? error.kind : 'error';
  box.hidden = false;
}

function clearError() {
  $('error').hidden = true;
  $('error').textContent = '';
}

function setStatus(text, connected) {
  $('status').textContent = text;
  $('status').classList.toggle('connected', connected);
}

// ---- The connection -------------------------------------------------------------------------------------------------

async function connect() {
  stopObserving();
  state.connection?.close();
  clearError();
  const url = $('endpoint').value.trim();
  setStatus(`Connecting to ${url}...`, false);
  const connection = new CoapConnection(url, {
    onMessage: logMessage,
    onClose: (error) => {
      if (state.connection !== connection) return;
      setStatus('Not connected.', false);
      showError(error);
      endObservation('The connection closed.');
    },
  });
  state.connection = connection;
  try {
    await connection.connect();
    setStatus(`Connected to ${url} (the server takes messages of up to ${connection.serverMaxMessageSize} bytes).`, true);
    await discover();
  } catch (e) {
    if (state.connection === connection) {
      setStatus('Not connected.', false);
      showError(e);
    }
  }
}

function requireConnection() {
  if (!state.connection || state.connection.closed) throw new CoapError('Not connected: press Connect first.', 'closed');
  return state.connection;
}

// ---- Resources ------------------------------------------------------------------------------------------------------

async function discover() {
  try {
    const response = await requireConnection().request({ method: METHODS.GET, path: '/.well-known/core', blockSize: 1024 });
    if (response.code !== 0x45) {
      showError(`GET /.well-known/core answered ${describe(response)}`);
      return;
    }
    renderResources(parseLinkFormat(utf8Decoder.decode(response.payload)));
  } catch (e) {
    showError(e);
  }
}

function renderResources(links) {
  // A tree by path segment: a resource's node holds its link; a segment that is no resource is a folder.
  const root = { children: new Map() };
  for (const link of links) {
    let node = root;
    for (const segment of link.target.split('?')[0].split('/').filter((s) => s !== '')) {
      if (!node.children.has(segment)) node.children.set(segment, { children: new Map() });
      node = node.children.get(segment);
    }
    node.link = link;
  }
  const list = renderNode(root, '');
  const container = $('resources');
  container.replaceChildren(list.childElementCount ? list : element('p', { className: 'hint' }, 'The server lists no resources.'));
}

function renderNode(node, prefix) {
  const list = element('ul');
  for (const [segment, child] of [...node.children].sort(([a], [b]) => a.localeCompare(b))) {
    const path = `${prefix}/${segment}`;
    const item = element('li');
    if (child.link) {
      const button = element('button', { type: 'button', className: 'resource', dataset: { path: child.link.target } }, path);
      const title = child.link.attributes.find((a) => a.name === 'title');
      button.title = `GET ${child.link.target}${title ? ': ' + title.value : ''}`;
      button.addEventListener('click', () => {
        selectResource(button, child.link.target);
        $('method').value = 'GET';
        send();
      });
      item.append(button);
      if (child.link.attributes.length) {
        item.append(element('div', { className: 'attributes' }, ...child.link.attributes.map((a) =>
          element('span', { className: 'attribute' }, a.value === true ? a.name : `${a.name}=${a.value}`))));
      }
    } else {
      item.append(element('span', { className: 'folder' }, `${path}/`));
    }
    if (child.children.size) item.append(renderNode(child, path));
    list.append(item);
  }
  return list;
}

function selectResource(button, path) {
  for (const other of document.querySelectorAll('#resources button.selected')) other.classList.remove('selected');
  button.classList.add('selected');
  $('path').value = path;
}

// ---- Requests -------------------------------------------------------------------------------------------------------

const userOptions = [];

function addOption() {
  try {
    const number = Number($('option-name').value);
    const text = $('option-value').value;
    const value = encodeOptionValue(number, text);
    userOptions.push({ number, value });
    const remove = element('button', { type: 'button', title: 'Remove this option' }, 'Remove');
    const item = element('li', {}, `${optionName(number)}: ${formatOption({ number, value }, 0x01) || '(empty)'}`, remove);
    remove.addEventListener('click', () => {
      userOptions.splice(userOptions.findIndex((o) => o.value === value), 1);
      item.remove();
      $('option-add').focus();
    });
    $('options').append(item);
    $('option-value').value = '';
    clearError();
  } catch (e) {
    showError(e);
  }
}

function requestOptions() {
  const options = [...userOptions];
  if ($('content-format').value !== '') options.push({ number: CONTENT_FORMAT, value: encodeUint(Number($('content-format').value)) });
  if ($('accept').value !== '') options.push({ number: ACCEPT, value: encodeUint(Number($('accept').value)) });
  return options;
}

function requestPayload() {
  const text = $('payload').value;
  return /^0x[0-9a-f\s]*$/i.test(text.trim()) && text.trim().length > 2 ? parseHex(text.trim()) : utf8.encode(text);
}

async function send() {
  if (state.busy) return;
  clearError();
  const methodName = $('method').value;
  const path = $('path').value.trim() || '/';
  let connection, payload;
  try {
    connection = requireConnection();
    payload = methodName === 'GET' || methodName === 'DELETE' ? new Uint8Array(0) : requestPayload();
  } catch (e) {
    showError(e);
    return;
  }
  state.busy = true;
  $('send').disabled = true;
  $('transfer').hidden = true;
  $('response-code').textContent = `${methodName} ${path}...`;
  $('response-code').className = 'code';
  try {
    const response = await connection.request({
      method: METHODS[methodName],
      path,
      options: requestOptions(),
      payload,
      blockSize: Number($('block-size').value),
      onProgress: progress,
    });
    showResponse(response, `${methodName} ${path}`);
  } catch (e) {
    $('response-code').textContent = `${methodName} ${path}: no response`;
    showError(e);
  } finally {
    state.busy = false;
    $('send').disabled = false;
  }
}

function progress(done, total, direction) {
  $('transfer').hidden = false;
  $('progress-label').textContent = direction === 'up' ? 'Upload' : 'Download';
  const bar = $('progress');
  if (total) {
    bar.max = total;
    bar.value = Math.min(done, total);
    $('progress-text').textContent = `${done.toLocaleString('en')} of ${total.toLocaleString('en')} bytes (${Math.floor((100 * Math.min(done, total)) / total)} %)`;
  } else {
    bar.removeAttribute('value');
    $('progress-text').textContent = `${done.toLocaleString('en')} bytes`;
  }
}

function describe(response) {
  const diagnostic = response.payload.length && codeClass(response.code) === 'response' && response.code >= 0x80
    ? `: ${utf8Decoder.decode(response.payload)}` : '';
  return `${codeText(response.code)}${diagnostic}`;
}

function showResponse(response, what) {
  state.response = response;
  const code = $('response-code');
  code.textContent = `${codeText(response.code)} (${response.payload.length.toLocaleString('en')} bytes)`;
  const kind = response.code >> 5;
  code.className = `code ${kind === 2 ? 'success' : kind === 4 ? 'client-error' : 'server-error'}`;
  // RFC 7252 section 5.5.2: an error response's payload is a diagnostic for the human reading it.
  if (kind === 4 || kind === 5) showError(`${what} answered ${describe(response)}`);
  $('response-options').replaceChildren(...response.options.map((o) =>
    element('li', {}, `${optionName(o.number, response.code)}: ${formatOption(o, response.code)}`)));
  renderPayload();
}

function contentFormatOf(message) {
  const value = getOption(message, CONTENT_FORMAT);
  return value === undefined ? undefined : decodeUint(value);
}

function renderPayload() {
  const out = $('response-payload');
  const response = state.response;
  if (!response) return;
  const bytes = response.payload;
  if (bytes.length === 0) {
    out.textContent = '(no payload)';
    return;
  }
  let view = state.view;
  const format = contentFormatOf(response);
  if (view === 'auto') {
    view = format === 50 || format === 110 ? 'json' : format === 60 || format === 112 ? 'cbor'
      : format === 42 || !isText(bytes) ? 'hex' : 'text';
  }
  try {
    out.textContent = formatPayload(bytes, view);
  } catch (e) {
    out.textContent = `This payload is not ${view.toUpperCase()}: ${e.message}\n\n${formatPayload(bytes, 'hex')}`;
  }
}

function formatPayload(bytes, view) {
  switch (view) {
    case 'json': return JSON.stringify(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)), null, 2);
    case 'cbor': return cborToDiagnostic(bytes);
    case 'hex': {
      const shown = bytes.subarray(0, SHOWN_HEX);
      const lines = [];
      for (let at = 0; at < shown.length; at += 16) {
        lines.push(`${at.toString(16).padStart(8, '0')}  ${hex(shown.subarray(at, at + 16)).replace(/(..)/g, '$1 ').trim()}`);
      }
      if (bytes.length > shown.length) lines.push(`... the first ${SHOWN_HEX.toLocaleString('en')} of ${bytes.length.toLocaleString('en')} bytes`);
      return lines.join('\n');
    }
    default: {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, SHOWN_TEXT));
      return bytes.length > SHOWN_TEXT ? `${text}\n... the first ${SHOWN_TEXT.toLocaleString('en')} of ${bytes.length.toLocaleString('en')} bytes` : text;
    }
  }
}

function isText(bytes) {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, 2048));
    return !/[\u0000-\u0008\u000e-\u001f]/.test(text);
  } catch {
    return false;
  }
}

function setView(view) {
  state.view = view;
  for (const button of document.querySelectorAll('button.view')) button.setAttribute('aria-pressed', String(button.dataset.view === view));
  renderPayload();
}

// ---- Observe --------------------------------------------------------------------------------------------------------

function observe() {
  clearError();
  stopObserving();
  const path = $('path').value.trim() || '/';
  let connection;
  try {
    connection = requireConnection();
  } catch (e) {
    showError(e);
    return;
  }
  state.points = [];
  renderChart();
  $('notifications').replaceChildren();
  $('observe-status').textContent = `Observing ${path}...`;
  $('cancel-observe').disabled = false;
  const accept = $('accept').value === '' ? [] : [{ number: ACCEPT, value: encodeUint(Number($('accept').value)) }];
  try {
    state.cancelObserve = connection.observe({
      path,
      options: accept,
      onNotification: (message) => notification(path, message),
      onError: (e) => { showError(e); endObservation(`Observing ${path} ended: ${e.message}`); },
    });
  } catch (e) {
    showError(e);
    endObservation('Not observing.');
  }
}

function notification(path, message) {
  showResponse(message, `Observe ${path}`);
  const sequence = getOption(message, OBSERVE);
  if (message.code >> 5 !== 2 || sequence === undefined) {
    // RFC 7641 section 3.2: a response without Observe (an error, or a resource that is not observable) ends it.
    endObservation(message.code >> 5 === 2 ? `${path} is not observable: the response has no Observe option.` : `Observing ${path} ended: ${codeText(message.code)}.`);
    return;
  }
  const time = new Date();
  const value = numberOf(message);
  if (value !== undefined) {
    state.points.push({ time, value });
    if (state.points.length > MAX_POINTS) state.points.shift();
    renderChart();
  }
  const text = isText(message.payload) ? utf8Decoder.decode(message.payload.subarray(0, 200)) : `0x${hex(message.payload.subarray(0, 32))}`;
  const list = $('notifications');
  list.prepend(element('li', {}, `${time.toLocaleTimeString('en-GB')} #${decodeUint(sequence)} ${codeText(message.code)} ${text}`));
  while (list.childElementCount > MAX_NOTIFICATIONS) list.lastElementChild.remove();
  $('observe-status').textContent = `Observing ${path}: ${list.childElementCount} notifications.`;
}

function numberOf(message) {
  const format = contentFormatOf(message);
  try {
    if (format === 60 || format === 112) return cborNumber(message.payload);
    const text = utf8Decoder.decode(message.payload).trim();
    if (format === 50 || format === 110 || /^[[{]/.test(text)) return firstJsonNumber(JSON.parse(text));
    return /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

function firstJsonNumber(v) {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) {
      const n = firstJsonNumber(x);
      if (n !== undefined) return n;
    }
  }
  return undefined;
}

function stopObserving() {
  if (state.cancelObserve) {
    try { state.cancelObserve(); } catch { /* the connection is gone */ }
    endObservation('Stopped observing.');
  }
}

function endObservation(text) {
  state.cancelObserve = null;
  $('cancel-observe').disabled = true;
  $('observe-status').textContent = text;
}

function renderChart() {
  const svg = $('chart');
  const ns = 'http://www.w3.org/2000/svg';
  const make = (tag, attributes, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const width = 360, height = 160, left = 44, right = 8, top = 10, bottom = 22;
  const children = [
    make('line', { class: 'axis', x1: left, y1: top, x2: left, y2: height - bottom }),
    make('line', { class: 'axis', x1: left, y1: height - bottom, x2: width - right, y2: height - bottom }),
  ];
  const points = state.points;
  if (points.length) {
    let min = Math.min(...points.map((p) => p.value)), max = Math.max(...points.map((p) => p.value));
    if (min === max) { min -= 1; max += 1; }
    const x = (i) => left + (points.length === 1 ? 0 : (i * (width - left - right)) / (points.length - 1));
    const y = (v) => top + ((max - v) * (height - top - bottom)) / (max - min);
    children.push(make('text', { x: 2, y: top + 8 }, format(max)), make('text', { x: 2, y: height - bottom }, format(min)));
    children.push(make('text', { x: left, y: height - 6 }, points[0].time.toLocaleTimeString('en-GB')));
    children.push(make('text', { x: width - right, y: height - 6, 'text-anchor': 'end' }, points[points.length - 1].time.toLocaleTimeString('en-GB')));
    children.push(make('polyline', { class: 'line', points: points.map((p, i) => `${x(i).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ') }));
    points.forEach((p, i) => {
      const dot = make('circle', { cx: x(i).toFixed(1), cy: y(p.value).toFixed(1), r: 2.5 });
      dot.append(make('title', {}, `${p.time.toLocaleTimeString('en-GB')}: ${p.value}`));
      children.push(dot);
    });
  } else {
    children.push(make('text', { x: left + 8, y: height / 2 }, 'Numeric values of the notifications appear here.'));
  }
  svg.replaceChildren(...children);
}

function format(value) {
  return Math.abs(value) >= 1000 || Number.isInteger(value) ? String(Math.round(value)) : value.toPrecision(4);
}

// ---- The message log ------------------------------------------------------------------------------------------------

function logMessage(direction, message) {
  const body = $('log').tBodies[0];
  // In the order of their numbers, as they go on the wire (RFC 7252 section 3.1).
  const options = [...message.options].sort((a, b) => a.number - b.number).map((o) => {
    const value = formatOption(o, message.code);
    return value === '' ? optionName(o.number, message.code) : `${optionName(o.number, message.code)}: ${value}`;
  }).join(', ');
  const kind = codeClass(message.code);
  const row = element('tr', { className: direction },
    element('td', {}, new Date().toLocaleTimeString('en-GB') + '.' + String(new Date().getMilliseconds()).padStart(3, '0')),
    element('td', { title: direction === 'in' ? 'received' : 'sent' }, direction === 'in' ? '\u2190' : '\u2192'),
    element('td', {}, kind[0].toUpperCase() + kind.slice(1)),
    element('td', {}, codeText(message.code)),
    element('td', {}, message.token.length ? hex(message.token) : '-'),
    element('td', { className: 'options' }, options),
    element('td', {}, `${message.size} B`));
  body.append(row);
  while (body.rows.length > MAX_LOG_ROWS) body.deleteRow(0);
  const scroller = body.closest('.table-scroll');
  scroller.scrollTop = scroller.scrollHeight;
}

// ---- Start ----------------------------------------------------------------------------------------------------------

function fillSelects() {
  const none = () => element('option', { value: '' }, '(none)');
  $('content-format').append(none(), ...CONTENT_FORMATS.map((f) => element('option', { value: String(f.number) }, `${f.number} ${f.name}`)));
  $('accept').append(none(), ...CONTENT_FORMATS.map((f) => element('option', { value: String(f.number) }, `${f.number} ${f.name}`)));
  // Options the form sets itself (Content-Format, Accept, Observe, the block options) stay off the list.
  const own = [CONTENT_FORMAT, ACCEPT, OBSERVE, BLOCK1, BLOCK2, 11, 15];
  $('option-name').append(...OPTIONS.filter((o) => !own.includes(o.number)).map((o) =>
    element('option', { value: String(o.number) }, `${o.number} ${o.name} (${o.format})`)));
}

function start() {
  fillSelects();
  renderChart();
  const given = new URLSearchParams(location.search).get('endpoint');
  $('endpoint').value = given || `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/.well-known/coap`;
  $('connect-form').addEventListener('submit', (e) => { e.preventDefault(); connect(); });
  $('request-form').addEventListener('submit', (e) => { e.preventDefault(); send(); });
  $('discover').addEventListener('click', () => { clearError(); discover(); });
  $('observe').addEventListener('click', observe);
  $('cancel-observe').addEventListener('click', stopObserving);
  $('option-add').addEventListener('click', addOption);
  $('option-value').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); addOption(); } });
  $('log-clear').addEventListener('click', () => $('log').tBodies[0].replaceChildren());
  for (const button of document.querySelectorAll('button.view')) button.addEventListener('click', () => setView(button.dataset.view));
  connect();
}

start();

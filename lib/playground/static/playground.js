// endpoint-sync playground: the page's whole behaviour, plain JavaScript, no framework and nothing
// fetched from outside (docs/playground.md). Every evaluation happens on the server through
// `render`'s own path; this file only edits, sends the state, and shows the answer. Text from
// the editors, the result and the live table is always set as text, never as HTML.

const EDITORS = ['config', 'object', 'companion'];
const IDENTITY = ['name', 'namespace', 'markerDomain'];
const LABELS = {
  toHost: {
    object: 'The virtual object (Endpoints, EndpointSlice, Service, Secret or ConfigMap)',
    companion:
      'Its Service (optional; without it the object renders as if its Service had no selector)',
  },
  fromHost: {
    object: 'The host copy (as the host cluster holds it)',
    companion:
      'The current virtual object (optional; without it only the labels and annotations that flow back are shown)',
  },
};
/** Wait this long after the last keystroke before evaluating. */
const DEBOUNCE_MS = 200;

const $ = (id) => document.getElementById(id);
let inFlight;
let timer;
let lastResultYaml = '';

function direction() {
  return document.querySelector('input[name="direction"]:checked').value;
}

function setDirection(value) {
  for (const radio of document.querySelectorAll('input[name="direction"]')) {
    radio.checked = radio.value === value;
  }
  $('object-label').textContent = LABELS[value].object;
  $('companion-label').textContent = LABELS[value].companion;
}

function state() {
  const out = { direction: direction() };
  for (const id of [...EDITORS, ...IDENTITY]) out[id] = $(id).value;
  return out;
}

function load(s) {
  for (const id of [...EDITORS, ...IDENTITY]) $(id).value = typeof s[id] === 'string' ? s[id] : '';
  setDirection(s.direction === 'fromHost' ? 'fromHost' : 'toHost');
  for (const id of EDITORS) renderGutter(id, []);
}

// ---- The line-number gutter, with the lines that have a diagnostic marked.

function renderGutter(id, problems) {
  const gutter = $(`${id}-gutter`);
  const lines = $(id).value.split('\n').length;
  const marks = new Map();
  for (const p of problems) {
    if (marks.get(p.line) !== 'error') marks.set(p.line, p.severity);
  }
  const rows = [];
  for (let line = 1; line <= lines; line++) {
    const row = document.createElement('div');
    row.textContent = String(line);
    const mark = marks.get(line);
    if (mark) row.className = mark;
    rows.push(row);
  }
  gutter.replaceChildren(...rows);
  gutter.scrollTop = $(id).scrollTop;
}

/** Puts the caret at a 1-based line and column of an editor, and scrolls it there. */
function goTo(id, line, column) {
  const area = $(id);
  const lines = area.value.split('\n');
  let offset = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length); i++) offset += lines[i].length + 1;
  offset += Math.max(0, column - 1);
  area.focus();
  area.setSelectionRange(offset, offset);
  const lineHeight = Number.parseFloat(getComputedStyle(area).lineHeight) || 19;
  area.scrollTop = Math.max(0, (line - 3) * lineHeight);
}

function renderProblems(id, problems) {
  const list = $(`${id}-problems`);
  const items = problems.map((p) => {
    const li = document.createElement('li');
    li.className = p.severity;
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = p.text;
    button.setAttribute(
      'aria-label',
      `${p.severity} at line ${p.line}, column ${p.column}: ${p.message}. Go to it.`,
    );
    button.addEventListener('click', () => goTo(id, p.line, p.column));
    li.append(button);
    return li;
  });
  if (id === 'config' && items.length === 0) {
    const li = document.createElement('li');
    li.textContent = 'No errors or warnings.';
    items.push(li);
  }
  list.replaceChildren(...items);
  $(id).setAttribute('aria-invalid', String(problems.some((p) => p.severity === 'error')));
  renderGutter(id, problems);
}

// ---- The answer.

function renderResult(evaluation) {
  for (const id of EDITORS) {
    renderProblems(
      id,
      evaluation.problems.filter((p) => p.editor === id),
    );
  }
  const status = $('result-status');
  const errors = evaluation.problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    const where = [...new Set(errors.map((p) => p.editor))].join(' and ');
    status.textContent = `Not rendered: ${errors.length} error${errors.length === 1 ? '' : 's'} in the ${where}.`;
    status.className = 'status failed';
  } else if (evaluation.result) {
    const changed = evaluation.result.changedLines.length;
    status.textContent = `${evaluation.status} (${evaluation.reasonCode}): ${changed} line${changed === 1 ? '' : 's'} changed, highlighted.`;
    status.className = 'status ok';
  } else {
    const code = evaluation.reasonCode
      ? `${evaluation.status} (${evaluation.reasonCode})`
      : 'Not rendered';
    status.textContent = `${code}: ${evaluation.failures[0] ?? 'no object'}`;
    status.className = 'status failed';
  }

  $('failures').replaceChildren(
    ...evaluation.failures.map((line) => {
      const li = document.createElement('li');
      li.className = 'error';
      li.textContent = `error: ${line}`;
      return li;
    }),
  );

  const pre = $('result');
  lastResultYaml = evaluation.result?.yaml ?? '';
  const changed = new Set(evaluation.result?.changedLines ?? []);
  const lines = lastResultYaml === '' ? [] : lastResultYaml.replace(/\n$/, '').split('\n');
  pre.replaceChildren(
    ...lines.map((text, i) => {
      const el = document.createElement(changed.has(i + 1) ? 'mark' : 'span');
      el.textContent = text === '' ? ' ' : text;
      return el;
    }),
  );
  $('reverse').disabled = lastResultYaml === '' || direction() !== 'toHost';

  const outcomes = evaluation.outcomes.map((o) => {
    const li = document.createElement('li');
    li.className = o.status;
    li.textContent = `${o.status} (${o.direction}) ${o.text}`;
    return li;
  });
  if (outcomes.length === 0) {
    const li = document.createElement('li');
    li.textContent = 'No patch ran for this object and direction.';
    outcomes.push(li);
  }
  $('outcomes').replaceChildren(...outcomes);
  $('explain').textContent = evaluation.explain || '(nothing)';
}

/** Says whether an answer is still to come (tests and assistive tools can wait on it). */
function setBusy(busy) {
  document.body.dataset.busy = String(busy);
  $('result').setAttribute('aria-busy', String(busy));
}

async function evaluate() {
  clearTimeout(timer);
  inFlight?.abort();
  const control = new AbortController();
  inFlight = control;
  setBusy(true);
  const current = state();
  saveToAddress(current);
  try {
    const res = await fetch('/api/evaluate', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(current),
      signal: control.signal,
    });
    const body = await res.json();
    if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
    if (inFlight === control) renderResult(body);
  } catch (err) {
    if (err.name === 'AbortError') return;
    $('result-status').textContent = `The playground did not answer: ${err.message}`;
    $('result-status').className = 'status failed';
  } finally {
    if (inFlight === control) setBusy(false);
  }
}

function scheduleEvaluate() {
  clearTimeout(timer);
  setBusy(true);
  timer = setTimeout(evaluate, DEBOUNCE_MS);
}

// ---- The state in the address: JSON, deflated, base64url, after `#s=`; never sent anywhere.

function toBase64Url(bytes) {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const raw = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

async function pipe(bytes, stream) {
  return new Uint8Array(
    await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer(),
  );
}

async function encodeState(s) {
  const json = new TextEncoder().encode(JSON.stringify(s));
  return toBase64Url(await pipe(json, new CompressionStream('deflate-raw')));
}

async function decodeState(text) {
  const json = await pipe(fromBase64Url(text), new DecompressionStream('deflate-raw'));
  return JSON.parse(new TextDecoder().decode(json));
}

let saving = Promise.resolve();
function saveToAddress(s) {
  saving = saving.then(async () => {
    const hash = `#s=${await encodeState(s)}`;
    if (location.hash !== hash) history.replaceState(null, '', hash);
  });
  return saving;
}

async function stateFromAddress() {
  const hash = location.hash;
  if (hash.startsWith('#s=')) return decodeState(hash.slice(3));
  if (hash.startsWith('#live=')) {
    const key = decodeURIComponent(hash.slice('#live='.length));
    const res = await fetch(`/api/live/view?key=${encodeURIComponent(key)}`);
    if (res.ok) return res.json();
  }
  return (await fetch('/api/initial')).json();
}

// ---- The running stack (under `endpoint-sync dev`).

const liveRows = new Map();

function latency(ms) {
  if (ms === null || ms === undefined) return '–';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function liveRow(row) {
  const tr = document.createElement('tr');
  tr.dataset.key = row.key;
  const link = document.createElement('a');
  link.href = `#live=${encodeURIComponent(row.key)}`;
  link.textContent = row.key;
  const cells = [
    link,
    row.status,
    `${row.reasonCode}: ${row.reason}`,
    latency(row.latencyMs),
    new Date(row.updatedAt).toLocaleTimeString(),
  ];
  for (const [i, value] of cells.entries()) {
    const td = document.createElement(i === 0 ? 'th' : 'td');
    if (i === 0) td.scope = 'row';
    if (i === 1) td.className = `status-${row.status}`;
    td.append(value);
    tr.append(td);
  }
  return tr;
}

function renderLive() {
  const rows = [...liveRows.values()].sort((a, b) => a.key.localeCompare(b.key));
  $('live-table').tBodies[0].replaceChildren(...rows.map(liveRow));
  const bad = rows.filter((r) => r.status === 'failed' || r.status === 'parked').length;
  $('live-summary').textContent =
    `${rows.length} synced object${rows.length === 1 ? '' : 's'}, ${bad} failed or parked.`;
}

async function startLive() {
  const res = await fetch('/api/live');
  if (!res.ok) return;
  $('live').hidden = false;
  for (const row of (await res.json()).rows) liveRows.set(row.key, row);
  renderLive();
  const events = new EventSource('/api/live/events');
  events.addEventListener('snapshot', (e) => {
    liveRows.clear();
    for (const row of JSON.parse(e.data)) liveRows.set(row.key, row);
    renderLive();
  });
  events.addEventListener('row', (e) => {
    const row = JSON.parse(e.data);
    liveRows.set(row.key, row);
    renderLive();
  });
}

// ---- Wiring.

async function openFromAddress() {
  try {
    load(await stateFromAddress());
  } catch (err) {
    $('result-status').textContent = `Could not read the state in the address: ${err.message}`;
    return;
  }
  await evaluate();
}

function wire() {
  for (const id of EDITORS) {
    const area = $(id);
    area.addEventListener('input', () => {
      renderGutter(id, []);
      scheduleEvaluate();
    });
    area.addEventListener('scroll', () => {
      $(`${id}-gutter`).scrollTop = area.scrollTop;
    });
  }
  for (const id of IDENTITY) $(id).addEventListener('input', scheduleEvaluate);
  for (const radio of document.querySelectorAll('input[name="direction"]')) {
    radio.addEventListener('change', () => {
      setDirection(direction());
      evaluate();
    });
  }
  $('reverse').addEventListener('click', () => {
    // The result goes back as the host copy; the virtual object becomes the one it merges into.
    $('companion').value = $('object').value;
    $('object').value = lastResultYaml;
    setDirection('fromHost');
    for (const id of EDITORS) renderGutter(id, []);
    evaluate();
    $('object').focus();
  });
  $('share').addEventListener('click', async () => {
    await saveToAddress(state());
    try {
      await navigator.clipboard.writeText(location.href);
      $('share-status').textContent =
        'Link copied: it holds the whole state (nothing is stored on a server).';
    } catch {
      $('share-status').textContent = 'Copy the page address: it holds the whole state.';
    }
  });
  // A link of the live table or a pasted address; the page's own updates (replaceState) fire
  // no hashchange.
  window.addEventListener('hashchange', openFromAddress);
}

wire();
openFromAddress();
startLive();

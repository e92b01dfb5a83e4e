// The viewer's page: plain ES module, no build step, nothing from the network.
// Every text from the output (ids, traces, notes, model replies) is put in the page with
// textContent or as a text node, never as HTML: a trace holding markup shows as characters.

const $main = document.getElementById('main');
const FILTERS = ['decision', 'rule', 'severity', 'category', 'degraded', 'reviewed', 'defects', 'jurors', 'dissent', 'q', 'sort', 'dir'];
const SEVERITIES = ['neutral', 'minor', 'major', 'fatal'];
const PAGE = 100;
let meta = null;

/** h('div', {class: 'x'}, 'text', child): an element; strings become text nodes. */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'onclick' || k === 'onchange' || k === 'onkeydown') el.addEventListener(k.slice(2), v);
    else if (k === 'href' && !String(v).startsWith('#')) throw new Error('only in-page links');
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

async function api(path, init) {
  const res = await fetch(path, { credentials: 'same-origin', ...init });
  const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (res.status === 503 && body.loading) return { loading: body.loading };
  if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
  return body;
}

// ---- routing: #/records?…, #/record/<id>?…, #/overview, #/review ----

function route() {
  const hash = location.hash.slice(1) || '/records';
  const [path, query = ''] = hash.split('?');
  return { path, params: new URLSearchParams(query) };
}

function filterParams(params) {
  const p = new URLSearchParams();
  for (const k of FILTERS) if (params.get(k)) p.set(k, params.get(k));
  return p;
}

const recordHref = (id, params) => `#/record/${encodeURIComponent(id)}?${filterParams(params)}`;

function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

let generation = 0;
let pendingKeys = null;

/** Draws the view the hash names; an answer that arrives after the hash moved on is dropped. */
async function render() {
  const my = ++generation;
  const shown = location.hash;
  const { path, params } = route();
  const show = (nodes) => {
    if (my !== generation) return;
    $main.replaceChildren(...nodes);
    keys = pendingKeys;
    pendingKeys = null;
    // What is shown now: tests and scripts wait for it rather than for time.
    $main.dataset.rendered = shown;
  };
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('on', path.startsWith(`/${a.dataset.nav}`));
  try {
    meta = await api('/api/meta');
    document.getElementById('where').textContent = `${meta.location} · reviewer ${meta.reviewer}`;
    if (!meta.ready) return showLoading();
    if (path === '/overview') show(await renderOverview());
    else if (path === '/review') show(await startQueue(params));
    else if (path.startsWith('/record/')) show(await renderRecord(decodeURIComponent(path.slice('/record/'.length)), params));
    else show(await renderRecords(params));
    // While the server still reads ranges, lists and counts grow: draw them again (not a record being reviewed).
    if (meta.partial && !path.startsWith('/record/')) setTimeout(() => my === generation && render(), 1000);
  } catch (err) {
    if (my !== generation) return;
    $main.replaceChildren(h('p', { class: 'error', role: 'alert' }, String(err.message ?? err)));
    $main.dataset.rendered = `error:${shown}`;
  }
}

function showLoading() {
  const l = meta.loading;
  $main.replaceChildren(h('p', { class: 'muted' }, meta.error ? `Cannot read the output: ${meta.error}` : `Reading the output… ${l.done} of ${l.total} ranges`));
  if (!meta.error) setTimeout(render, 500);
}

// ---- records table ----

const COLUMNS = [
  ['id', 'record'], ['decision', 'decision · rule'], ['severity', 'max severity'], ['defects', 'defects'], ['jurors', 'jurors ok / seated'],
  ['dissent', 'dissent'], ['categories', 'categories'], ['degraded', 'degraded'], ['cost', 'cost $'], ['reviewed', 'reviewed'],
];

function select(name, label, options, params, onPick) {
  const s = h('select', { name, 'aria-label': label, onchange: () => onPick(name, s.value) }, h('option', { value: '' }, `${label}: any`), options.map((o) => h('option', { value: o }, o)));
  s.value = params.get(name) ?? '';
  return s;
}

function filterBar(params) {
  const pick = (name, value) => {
    const p = filterParams(params);
    if (value) p.set(name, value);
    else p.delete(name);
    p.delete('offset');
    go(`#/records?${p}`);
  };
  const search = h('input', { type: 'search', name: 'q', placeholder: 'search problem and trace…', 'aria-label': 'search' });
  search.value = params.get('q') ?? '';
  search.addEventListener('change', () => pick('q', search.value.trim()));
  return h('div', { class: 'filters' },
    select('decision', 'decision', ['keep', 'drop', 'review'], params, pick),
    select('rule', 'rule', meta.rules, params, pick),
    select('severity', 'severity', ['none', ...SEVERITIES], params, pick),
    select('category', 'category', meta.categories, params, pick),
    select('degraded', 'degraded', ['yes', 'no'], params, pick),
    select('reviewed', 'reviewed', ['yes', 'no'], params, pick),
    select('defects', 'defects', ['none', 'any'], params, pick),
    select('jurors', 'jurors', ['all', 'short'], params, pick),
    select('dissent', 'dissent', ['yes', 'no'], params, pick),
    search,
  );
}

function sevBadge(sev) {
  return h('span', { class: `sev sev-${sev ?? 'none'}` }, sev ?? '—');
}

function decisionBadge(d) {
  return h('span', { class: `dec dec-${d ?? 'none'}` }, d ?? '—');
}

function recordRow(r, params) {
  return h('tr', {},
    h('td', { class: 'id' }, h('a', { href: recordHref(r.id, params) }, r.id)),
    h('td', {}, decisionBadge(r.decision), ' ', h('span', { class: 'muted' }, r.rule ?? 'default')),
    h('td', {}, sevBadge(r.severity)),
    h('td', { class: 'num' }, r.defects),
    h('td', { class: 'num' }, r.failed ? 'no verdict' : `${r.jurors_ok} / ${r.jurors_total}`),
    h('td', { class: 'num' }, r.dissent),
    h('td', { class: 'cats', title: r.categories.join(', ') }, r.categories.join(', ')),
    h('td', {}, r.degraded ? 'yes' : ''),
    h('td', { class: 'num' }, r.cost === null ? '?' : r.cost.toFixed(4)),
    h('td', {}, r.reviewed ? decisionBadge(r.reviewed) : ''),
  );
}

function header(params) {
  const sort = params.get('sort');
  const dir = params.get('dir') === 'desc' ? 'desc' : 'asc';
  return h('tr', {}, COLUMNS.map(([key, label]) => {
    const p = filterParams(params);
    p.set('sort', key);
    p.set('dir', sort === key && dir === 'asc' ? 'desc' : 'asc');
    const mark = sort === key ? (dir === 'asc' ? ' ▲' : ' ▼') : '';
    return h('th', { scope: 'col', 'aria-sort': sort === key ? (dir === 'asc' ? 'ascending' : 'descending') : null }, h('a', { href: `#/records?${p}` }, label + mark));
  }));
}

async function renderRecords(params) {
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const q = filterParams(params);
  q.set('offset', offset);
  q.set('limit', PAGE);
  const res = await api(`/api/records?${q}`);
  const page = (to) => {
    const p = filterParams(params);
    p.set('offset', to);
    return `#/records?${p}`;
  };
  const pager = h('div', { class: 'pager' },
    res.partial ? h('span', { class: 'partial', id: 'partial' }, `reading the output: ${res.partial.done} of ${res.partial.total} ranges so far · `) : null,
    h('span', { id: 'count', 'data-total': res.total }, `${res.total.toLocaleString('en')} record${res.total === 1 ? '' : 's'}`),
    res.total > 0 ? h('span', { class: 'muted' }, ` · ${offset + 1}–${Math.min(offset + PAGE, res.total)}`) : null,
    offset > 0 ? h('a', { href: page(Math.max(0, offset - PAGE)), class: 'btn' }, '← previous') : null,
    offset + PAGE < res.total ? h('a', { href: page(offset + PAGE), class: 'btn' }, 'next →') : null,
  );
  const table = h('table', { class: 'records' }, h('thead', {}, header(params)), h('tbody', {}, res.rows.map((r) => recordRow(r, params))));
  return [filterBar(params), pager, h('div', { class: 'scroll' }, table)];
}

// ---- one record ----

/** Quotes of an evidence text ("…" or “…”), else the evidence itself: what to mark in a step. */
function quotesOf(evidence) {
  const out = [];
  for (const m of String(evidence ?? '').matchAll(/["“'`]([^"”'`]{4,})["”'`]/g)) out.push(m[1]);
  if (out.length === 0 && evidence && evidence.length >= 4) out.push(evidence);
  return out;
}

/** The step's text as text nodes, with each quote found in it wrapped in <mark>. */
function markedText(text, quotes) {
  const lower = text.toLowerCase();
  const spans = [];
  for (const q of quotes) {
    const needle = q.trim().toLowerCase();
    if (!needle) continue;
    for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + needle.length)) spans.push([at, at + needle.length]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const nodes = [];
  let pos = 0;
  for (const [a, b] of spans) {
    if (b <= pos) continue;
    const start = Math.max(a, pos);
    if (start > pos) nodes.push(document.createTextNode(text.slice(pos, start)));
    nodes.push(h('mark', {}, text.slice(start, b)));
    pos = b;
  }
  if (pos < text.length) nodes.push(document.createTextNode(text.slice(pos)));
  return nodes;
}

function section(title, ...body) {
  return h('section', { class: 'card' }, h('h2', {}, title), ...body);
}

function stepsView(rec) {
  if (rec.steps.length === 0) return h('p', { class: 'muted' }, 'No steps.');
  const defectsOf = new Map();
  for (const d of rec.defects) for (const ref of d.statement_refs ?? []) defectsOf.set(ref, [...(defectsOf.get(ref) ?? []), d]);
  return h('ol', { class: 'steps' }, rec.steps.map((s) => {
    const cited = defectsOf.get(s.index) ?? [];
    const quotes = cited.flatMap((d) => quotesOf(d.evidence));
    return h('li', { class: `step sev-${s.max_impact ?? 'none'}`, id: `step-${s.index}`, 'data-step': s.index },
      h('div', { class: 'step-head' }, h('b', {}, `STEP-${s.index}`), ' ', s.label === null ? h('span', { class: 'muted' }, 'unjudged') : s.label ? sevBadge(s.max_impact) : h('span', { class: 'ok' }, 'ok'),
        cited.length ? h('span', { class: 'muted' }, ` · ${cited.map((d) => d.defect_id.replace(/^.*#/, '#')).join(' ')}`) : null),
      s.text === null ? h('p', { class: 'muted' }, '(step text not in the corpus)') : h('div', { class: 'step-text' }, markedText(s.text, quotes)),
    );
  }));
}

function defectsView(rec) {
  if (rec.defects.length === 0) return h('p', { class: 'muted' }, 'No consensus defects.');
  return h('div', { class: 'defects' }, rec.defects.map((d) => h('article', { class: `defect sev-${d.impact}` },
    h('div', { class: 'defect-head' }, sevBadge(d.impact), ' ', h('b', {}, d.defect_id.replace(/^.*#/, '#')), ' at ',
      (d.statement_refs ?? []).map((n, k) => [k ? ', ' : '', h('a', { href: location.hash, 'data-goto': n, onclick: (e) => (e.preventDefault(), document.getElementById(`step-${n}`)?.scrollIntoView({ block: 'center' })) }, `STEP-${n}`)]),
      d.category_id ? h('span', { class: 'muted' }, ` · ${d.leaf_id ?? d.category_id}`) : null),
    h('p', {}, d.what_went_wrong),
    d.evidence ? h('blockquote', {}, d.evidence) : null,
    d.correct_value ? h('p', { class: 'muted' }, 'should be: ', d.correct_value) : null,
    h('p', { class: 'muted' }, d.vote_count === null ? 'votes not counted in this mode' : `${d.vote_count} vote(s): ${(d.voters ?? []).join(', ')}`),
  )));
}

function jurorsView(details) {
  if (!details) return h('p', { class: 'muted' }, 'No verdict_details for this output (written in deliberation mode, or with verdict_details: on).');
  return h('div', { class: 'jurors' }, details.phase1.map((p) => h('article', { class: 'juror' },
    h('h3', {}, p.seat_id, ' ', h('span', { class: 'muted' }, p.model)),
    p.status === 'ok' ? null : h('p', { class: 'error' }, `failed: ${p.error ?? ''}`),
    p.defects.length === 0 && p.status === 'ok' ? h('p', { class: 'muted' }, 'found no defect') : null,
    h('ul', {}, p.defects.map((d) => h('li', {}, sevBadge(d.impact), ` STEP ${d.statement_refs.join(', ')}: `, d.what_went_wrong))),
  )));
}

function phase2View(rec) {
  const d = rec.details;
  const v = rec.verdict ?? {};
  const parts = [h('p', {}, `mode ${v.mode ?? '?'} · ${v.termination_reason ?? ''}${v.rounds ? ` · ${v.rounds} round(s)` : ''} · confidence ${v.confidence ?? '?'}`)];
  if (d?.transcript?.length) parts.push(h('ol', { class: 'transcript' }, d.transcript.map((t) => h('li', {}, h('b', {}, `${t.speaker} (round ${t.round})`), t.instruction ? h('p', { class: 'muted' }, t.instruction) : null, h('p', { class: 'pre' }, t.content)))));
  if (d?.dissenting_views?.length) parts.push(h('h3', {}, 'Dissent'), h('ul', {}, d.dissenting_views.map((x) => h('li', {}, x))));
  if (v.escalations?.length) parts.push(h('h3', {}, 'Cascade escalations'), h('ul', {}, v.escalations.map((x) => h('li', {}, x))));
  if (d?.grounding) parts.push(h('h3', {}, 'Grounding'), h('ul', {}, d.grounding.map((g) => h('li', {}, `defect ${g.defect_index}: ${g.status}, ${g.outcome} (steps ${g.cited_refs}${g.corrected_refs ? ` → ${g.corrected_refs}` : ''}, ${g.quotes_found}/${g.quotes} quotes, ${g.best_match})`))));
  if (d?.dropped_negatives?.length) parts.push(h('h3', {}, 'Removal pass'), h('ul', {}, d.dropped_negatives.map((x) => h('li', {}, `${x.defect.what_went_wrong} — ${x.reason}`))));
  if (d?.negative_adjudications?.length) parts.push(h('h3', {}, 'Evidence arbiter'), h('ul', {}, d.negative_adjudications.map((x) => h('li', {}, `${x.ruling} (${x.origin}): ${x.defect.what_went_wrong} — ${x.rationale}`))));
  return parts;
}

function costLine(v) {
  if (!v) return '';
  return `${v.tokens_in} tokens in · ${v.tokens_out} out · ${v.cost_usd === null ? 'cost unknown (unpriced model)' : `$${Number(v.cost_usd).toFixed(5)}`} · ${Math.round(v.latency_ms)} ms`;
}

function reviewPanel(rec, params) {
  const note = h('textarea', { id: 'note', rows: 2, placeholder: 'note (optional) — keys: k keep · d drop · s skip · ← → previous / next', 'aria-label': 'review note' });
  const status = h('span', { id: 'review-status', role: 'status' }, rec.review ? `reviewed: ${rec.review.decision} by ${rec.review.reviewer}${rec.review.note ? ` — ${rec.review.note}` : ''}` : 'not reviewed');
  const next = rec.next ? recordHref(rec.next, params) : `#/records?${filterParams(params)}`;
  const submit = async (decision) => {
    status.textContent = 'saving…';
    try {
      const res = await api('/api/review', { method: 'POST', headers: { 'content-type': 'application/json', 'x-rj-review': '1' }, body: JSON.stringify({ record_id: rec.id, decision, note: note.value }) });
      status.textContent = `reviewed: ${res.review.decision} by ${res.review.reviewer}`;
      go(next);
    } catch (err) {
      status.textContent = `not saved: ${err.message}`;
      status.classList.add('error');
    }
  };
  const panel = h('div', { class: 'review' },
    h('button', { type: 'button', class: 'keep', id: 'keep', onclick: () => submit('keep') }, 'Keep (k)'),
    h('button', { type: 'button', class: 'drop', id: 'drop', onclick: () => submit('drop') }, 'Drop (d)'),
    h('button', { type: 'button', id: 'skip', onclick: () => go(next) }, 'Skip (s)'),
    note, status);
  pendingKeys = (e) => {
    if (e.target === note || e.metaKey || e.ctrlKey || e.altKey) return;
    if (e.key === 'k') submit('keep');
    else if (e.key === 'd') submit('drop');
    else if (e.key === 's' || e.key === 'ArrowRight') go(next);
    else if (e.key === 'ArrowLeft' && rec.prev) go(recordHref(rec.prev, params));
    else if (e.key === 'n') (e.preventDefault(), note.focus());
  };
  return panel;
}

let keys = null;
document.addEventListener('keydown', (e) => keys?.(e));

async function renderRecord(id, params) {
  const q = filterParams(params);
  q.set('id', id);
  const rec = await api(`/api/record?${q}`);
  const s = rec.summary;
  const nav = h('div', { class: 'recnav' },
    h('a', { class: 'btn', href: `#/records?${filterParams(params)}` }, '↑ list'),
    rec.prev ? h('a', { class: 'btn', id: 'prev', href: recordHref(rec.prev, params) }, '← previous') : null,
    rec.next ? h('a', { class: 'btn', id: 'next', href: recordHref(rec.next, params) }, 'next →') : null,
    h('span', { class: 'muted' }, rec.position >= 0 ? `${rec.position + 1} of ${rec.total} in this filter` : 'outside this filter'),
  );
  const decision = rec.decision;
  window.scrollTo(0, 0);
  return [
    nav,
    h('h1', { class: 'recid' }, rec.id),
    h('p', { class: 'verdict-line' }, decisionBadge(s.decision), ' ', decision ? decision.reason : 'no decision', s.reviewed ? [' · reviewed ', decisionBadge(s.reviewed)] : null,
      ' · max severity ', sevBadge(s.severity), ` · jurors ${s.jurors_ok} / ${s.jurors_total}`, s.degraded ? ` · degraded: ${rec.verdict?.degraded_reason ?? ''}` : '', rec.verdict?.error ? ` · no verdict: ${rec.verdict.error}` : ''),
    reviewPanel(rec, params),
    section('Problem', rec.problem === null ? h('p', { class: 'muted' }, rec.has_corpus ? 'no problem field in the record' : 'no corpus in this output') : h('div', { class: 'pre', id: 'problem' }, rec.problem)),
    section(`Steps (${rec.steps.length})`,
      rec.verdict && rec.has_corpus && rec.steps.length !== rec.verdict.n_steps ? h('p', { class: 'error' }, `The jury read ${rec.verdict.n_steps} steps; cutting the trace here gives ${rec.steps.length} (another segmentation setting?): step texts may not match their labels.`) : null,
      stepsView(rec)),
    section(`Defects (${rec.defects.length})`, defectsView(rec)),
    section('Jurors (Phase 1)', jurorsView(rec.details)),
    section('Phase 2', phase2View(rec)),
    section('Tokens and cost', h('p', {}, costLine(rec.verdict))),
    rec.record_text === null ? null : h('details', { class: 'card' }, h('summary', {}, 'The record as read'), h('pre', {}, rec.record_text)),
  ].filter(Boolean);
}

async function startQueue(params) {
  const p = filterParams(params);
  if (![...p.keys()].length) (p.set('decision', 'review'), p.set('reviewed', 'no'));
  p.set('limit', 1);
  const res = await api(`/api/records?${p}`);
  p.delete('limit');
  if (res.rows.length === 0) return [h('p', { id: 'queue-empty' }, 'Nothing to review under this filter. ', h('a', { href: `#/records?${p}` }, 'See the records'))];
  location.replace(recordHref(res.rows[0].id, p));
  return [h('p', { class: 'muted' }, 'Opening the queue…')];
}

// ---- overview ----

function bars(title, counts, param, order) {
  const entries = (order ?? Object.keys(counts).sort((a, b) => counts[b] - counts[a])).filter((k) => counts[k]).map((k) => [k, counts[k]]);
  const max = Math.max(1, ...entries.map(([, n]) => n));
  return section(title, h('div', { class: 'bars' }, entries.map(([k, n]) => {
    const p = new URLSearchParams();
    p.set(param, k === 'none' && param === 'decision' ? '' : k);
    const bar = h('span', { class: `fill ${param === 'severity' ? `sev-${k}` : param === 'decision' ? `dec-${k}` : ''}` });
    bar.style.width = `${(100 * n) / max}%`;
    return h('a', { class: 'barrow', href: `#/records?${p}` }, h('span', { class: 'label' }, k), h('span', { class: 'track' }, bar), h('span', { class: 'num' }, n.toLocaleString('en')));
  })));
}

async function renderOverview() {
  const o = await api('/api/overview');
  const tiles = h('div', { class: 'tiles' },
    [['records', o.records], ['reviewed', Object.values(o.reviewed).reduce((a, b) => a + b, 0)], ['degraded', o.degraded], ['no verdict', o.failed], ['cost $', o.cost_usd.toFixed(2) + (o.cost_unknown ? ` (+${o.cost_unknown} unknown)` : '')]]
      .map(([k, v]) => h('div', { class: 'tile' }, h('b', {}, String(v)), h('span', {}, k))));
  return [h('h1', {}, 'Overview'), tiles, h('div', { class: 'grid' },
    bars('Decisions', o.decisions, 'decision', ['keep', 'review', 'drop']),
    bars('Max severity', o.severities, 'severity', ['none', ...SEVERITIES]),
    bars('Rules that fired', o.rules, 'rule'),
    bars('Categories', o.categories, 'category'),
  )];
}

// ---- theme ----

const theme = localStorage.getItem('rj-theme');
if (theme) document.documentElement.dataset.theme = theme;
document.getElementById('theme').addEventListener('click', () => {
  const dark = (document.documentElement.dataset.theme ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light')) === 'dark';
  document.documentElement.dataset.theme = dark ? 'light' : 'dark';
  localStorage.setItem('rj-theme', document.documentElement.dataset.theme);
});

window.addEventListener('hashchange', () => ((keys = null), render()));
render();
